import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// StoreManager with a key ring (issue 30): every store sealed with its owner's key, a plain
/// store of an earlier version sealed on open, and one store file opened from its path.
struct SealedStoreManagerTests {
    let ada = UserAccountIdentity(userID: "005ADA", orgID: "00DACME")

    @Test func everyStoreIsSealedWithItsOwnersKeyAndReopens() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let master = try SecretKey.random()
        let manager = StoreManager(root: home.url, keyRing: try KeyRing(dataHome: home.url, provider: .inMemory(master)))
        for owner in [StoreOwner.global, .user(ada)] {
            let store = try manager.store(for: owner)
            #expect(store.isSealed)
            try store.registerSoup(SoupSpec(name: "notes", indexes: [IndexSpec(path: "t", type: .string)]))
            _ = try store.upsert([["t": .string("secret-\(owner)")]], intoSoup: "notes")
            store.close()
            let file = try manager.databaseURL(named: SmartStore.defaultStoreName, for: owner)
            #expect(!(try Data(contentsOf: file)).contains(Data("SQLite format 3".utf8)))
            let reopened = try SmartStore(fileURL: file, keyProvider: .inMemory(master))
            #expect(try reopened.query(.exact(soupName: "notes", path: "t", matchKey: .string("secret-\(owner)"))).count == 1)
            reopened.close()
        }
        let keys = try #require(manager.keyRing)
        #expect(Set(try keys.owners()) == [KeyRing.globalOwner, KeyRing.owner(of: ada)])
    }

    @Test func aPlainStoreOfAnEarlierVersionIsSealedOnOpen() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let plain = StoreManager(root: home.url)
        let store = try plain.store(for: .user(ada))
        try store.registerSoup(SoupSpec(name: "notes", indexes: [IndexSpec(path: "t", type: .string)]))
        _ = try store.upsert([["t": "kept"]], intoSoup: "notes")
        store.close()
        let sealed = StoreManager(root: home.url, keyRing: try KeyRing(dataHome: home.url, provider: .inMemory(try SecretKey.random())))
        let migrated = try sealed.store(for: .user(ada))
        #expect(migrated.isSealed)
        #expect(try migrated.query(.exact(soupName: "notes", path: "t", matchKey: "kept")).count == 1)
    }

    @Test func aStoreWhoseKeyWasDestroyedIsKeyDestroyedAndNothingIsCreated() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let master = try SecretKey.random()
        let keys = try KeyRing(dataHome: home.url, provider: .inMemory(master))
        let manager = StoreManager(root: home.url, keyRing: keys)
        _ = try manager.store(for: .user(ada)).close()
        let file = try manager.databaseURL(named: SmartStore.defaultStoreName, for: .user(ada))
        try keys.destroy(owner: KeyRing.owner(of: ada))
        let error = storeError { _ = try SmartStore(fileURL: file, keyProvider: .inMemory(master)) }
        #expect(error?.code == .keyDestroyed)
        #expect(error?.file == file.path)
        #expect(error?.reason.contains("destroyed") == true)
        #expect(try !keys.owners().contains(KeyRing.owner(of: ada)), "no key was created")
        let removed = try manager.removeLeftovers()
        #expect(removed.map(\.lastPathComponent) == ["005ADA"])
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func leftoversOfAnEarlierVersionInClearAreNotRemoved() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        _ = try StoreManager(root: home.url).store(for: .user(ada)).close()   // plain, no key: to be sealed, not thrown away
        let manager = StoreManager(root: home.url, keyRing: try KeyRing(dataHome: home.url, provider: .inMemory(try SecretKey.random())))
        #expect(try manager.removeLeftovers().isEmpty)
        #expect(manager.storeExists(named: SmartStore.defaultStoreName, for: .user(ada)))
    }
}
