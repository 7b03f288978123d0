import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// The Mobile SDK's `KeyValueEncryptedFileStore` expectations (SalesforceMobileSDK-iOS,
/// `SalesforceSDKCoreTests/KeyValueEncryptedFileStoreTests.swift`: semantics learnt, not copied),
/// on AppKernel's sealed entries, plus what sealing adds (nothing in clear, copies refused).
struct KeyValueEncryptedStoreTests {
    let ada = UserAccountIdentity(userID: "005ADA", orgID: "00DACME")

    func ring(_ home: URL, key: SecretKey? = nil) throws -> KeyRing {
        try KeyRing(dataHome: home, provider: .inMemory(key ?? (try SecretKey.random())))
    }

    // testSaveReadRemove / testSaveUpdate: save adds or replaces, read gives it back, remove empties.
    @Test func saveReadReplaceRemove() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let store = try KeyValueEncryptedStore.global(named: "settings", in: home.url, keyRing: ring(home.url))
        #expect(try store.value(forKey: "k") == nil)
        try store.save("one", forKey: "k")
        #expect(try store.value(forKey: "k") == "one")
        try store.save("two", forKey: "k")
        #expect(try store.value(forKey: "k") == "two")
        try store.saveData(Data([0, 1, 2]), forKey: "bytes")
        #expect(try store.data(forKey: "bytes") == Data([0, 1, 2]))
        try store.removeValue(forKey: "k")
        #expect(try store.value(forKey: "k") == nil)
        try store.removeValue(forKey: "k")   // absent: no error (the SDK answers true)
    }

    // testAllKeys / testCount / testRemoveAll.
    @Test func allKeysCountAndRemoveAll() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let store = try KeyValueEncryptedStore.forUser(ada, named: "notes", in: home.url, keyRing: ring(home.url))
        #expect(try store.isEmpty())
        for key in ["b", "a", "c"] { try store.save("value of \(key)", forKey: key) }
        #expect(try store.count() == 3)
        #expect(try store.allKeys() == ["a", "b", "c"])
        try store.removeAll()
        #expect(try store.count() == 0)
        #expect(try store.allKeys().isEmpty)
    }

    // testStoreNames / invalid names: 1…96 characters of a-z A-Z 0-9 _.
    @Test func namesAreValidatedAsTheSDKDoes() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let keys = try ring(home.url)
        for bad in ["", "with space", "dots.are.out", "slash/", "ünïcode", String(repeating: "a", count: 97)] {
            #expect(storeError { _ = try KeyValueEncryptedStore.global(named: bad, in: home.url, keyRing: keys) }?.code == .invalidName, "\(bad)")
        }
        #expect(KeyValueEncryptedStore.isValidName(String(repeating: "a", count: 96)))
        #expect(KeyValueEncryptedStore.isValidName("Store_1"))
        let store = try KeyValueEncryptedStore.global(named: "ok", in: home.url, keyRing: keys)
        #expect(storeError { try store.save("x", forKey: "") }?.code == .invalidEntry, "an empty key fails")
    }

    // testGlobalAndUserStoresAreSeparate / allNames / removeShared.
    @Test func globalAndUserStoresAreApartAndRemovedByName() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let keys = try ring(home.url)
        try KeyValueEncryptedStore.global(named: "shared", in: home.url, keyRing: keys).save("g", forKey: "k")
        try KeyValueEncryptedStore.forUser(ada, named: "shared", in: home.url, keyRing: keys).save("u", forKey: "k")
        #expect(try KeyValueEncryptedStore.global(named: "shared", in: home.url, keyRing: keys).value(forKey: "k") == "g")
        #expect(try KeyValueEncryptedStore.forUser(ada, named: "shared", in: home.url, keyRing: keys).value(forKey: "k") == "u")
        #expect(KeyValueEncryptedStore.allNames(for: .global, in: home.url) == ["shared"])
        try KeyValueEncryptedStore.remove(named: "shared", for: .user(ada), in: home.url)
        #expect(KeyValueEncryptedStore.allNames(for: .user(ada), in: home.url).isEmpty)
        #expect(try KeyValueEncryptedStore.global(named: "shared", in: home.url, keyRing: keys).value(forKey: "k") == "g")
    }

    // Sealed: neither key nor value is in clear in any file, and a reopen under the same master key reads them.
    @Test func nothingIsInClearAndAReopenReads() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let master = try SecretKey.random()
        try KeyValueEncryptedStore.forUser(ada, named: "notes", in: home.url, keyRing: ring(home.url, key: master))
            .save("the-secret-value", forKey: "the-secret-key")
        let files = FileManager.default.enumerator(at: home.url, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            let bytes = try Data(contentsOf: file)
            #expect(!bytes.contains(Data("the-secret-value".utf8)) && !bytes.contains(Data("the-secret-key".utf8)), "\(file.path)")
            #expect(!file.lastPathComponent.contains("secret"))
        }
        let reopened = try KeyValueEncryptedStore.forUser(ada, named: "notes", in: home.url, keyRing: ring(home.url, key: master))
        #expect(try reopened.value(forKey: "the-secret-key") == "the-secret-value")
    }

    // Bad input: an entry copied over another key's, from another store, or bit-flipped fails, naming the file.
    @Test func copiedOrDamagedEntriesFailNamingTheFile() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let keys = try ring(home.url)
        let store = try KeyValueEncryptedStore.forUser(ada, named: "notes", in: home.url, keyRing: keys)
        try store.save("a", forKey: "ka")
        try store.save("b", forKey: "kb")
        func file(of key: String, in store: KeyValueEncryptedStore) throws -> URL {
            let before = Set(try FileManager.default.contentsOfDirectory(atPath: store.directory.path))
            try store.save("probe", forKey: key)
            let name = try #require(Set(try FileManager.default.contentsOfDirectory(atPath: store.directory.path)).subtracting(before).first)
            return store.directory.appendingPathComponent(name)
        }
        let fileA = try file(of: "kz", in: store)
        try store.save("a", forKey: "kz")
        // Another key's entry copied over this one.
        let other = try file(of: "ky", in: store)
        try FileManager.default.removeItem(at: other)
        try FileManager.default.copyItem(at: fileA, to: other)
        let moved = storeError { _ = try store.value(forKey: "ky") }
        #expect(moved?.code == .unreadableEntry && moved?.file == other.path)
        // Another store's entry under the same key.
        let second = try KeyValueEncryptedStore.forUser(ada, named: "other", in: home.url, keyRing: keys)
        let secondFile = try file(of: "kz", in: second)
        try FileManager.default.removeItem(at: secondFile)
        try FileManager.default.copyItem(at: fileA, to: secondFile)
        #expect(storeError { _ = try second.value(forKey: "kz") }?.code == .unreadableEntry)
        // Another user's entry.
        let bob = try KeyValueEncryptedStore.forUser(UserAccountIdentity(userID: "005BOB", orgID: "00DACME"), named: "notes", in: home.url, keyRing: keys)
        let bobFile = try file(of: "kz", in: bob)
        try FileManager.default.removeItem(at: bobFile)
        try FileManager.default.copyItem(at: fileA, to: bobFile)
        let stolen = storeError { _ = try bob.value(forKey: "kz") }
        #expect(stolen?.code == .unreadableEntry && stolen?.reason.contains("sealed for the owner") == true)
        // A flipped bit.
        var bytes = try Data(contentsOf: fileA)
        bytes[bytes.count - 3] ^= 0x10
        try bytes.write(to: fileA)
        #expect(storeError { _ = try store.value(forKey: "kz") }?.code == .unreadableEntry)
        #expect(try store.value(forKey: "ka") == "a", "the others still open")
    }
}
