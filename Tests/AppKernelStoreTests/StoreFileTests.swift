import AppKernelCore
import AppKernelStore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files: the owners' layout, modes, removal on logout, reopening, and files that are not ours.
struct StoreFileTests {
    let ada = StoreOwner.user(UserAccountIdentity(userID: "005ADA", orgID: "00DORG"))
    let bob = StoreOwner.user(UserAccountIdentity(userID: "005BOB", orgID: "00DORG"))

    func mode(_ url: URL) -> mode_t? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    @Test func storesAreLaidOutPerOwnerWithPrivateModes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let root = directory.file("data")
        let manager = StoreManager(root: root)
        let global = try manager.store(for: .global)
        let adas = try manager.store(for: ada)
        let adasOther = try manager.store(named: "cache", for: ada)
        #expect(global.fileURL.path == root.path + "/stores/defaultStore/store.sqlite")
        #expect(adas.fileURL.path == root.path + "/00DORG/005ADA/stores/defaultStore/store.sqlite")
        #expect(adasOther.fileURL.path == root.path + "/00DORG/005ADA/stores/cache/store.sqlite")
        #expect(try manager.store(for: ada) === adas, "shared while open")
        #expect(manager.allStoreNames(for: ada) == ["cache", "defaultStore"])
        // Write enough to have a WAL and its index.
        try adas.registerSoup(Fixture.accounts)
        try adas.upsert(Fixture.accountEntries(), intoSoup: "accounts")
        for path in ["data", "data/00DORG", "data/00DORG/005ADA", "data/00DORG/005ADA/stores", "data/00DORG/005ADA/stores/defaultStore", "data/stores"] {
            #expect(mode(directory.file(path)) == 0o700, "\(path)")
        }
        let database = adas.fileURL.path
        for file in [database, database + "-wal", database + "-shm"] {
            #expect(mode(URL(fileURLWithPath: file)) == 0o600, "\(file)")
        }
        #expect(adas.databaseSize > 0)
    }

    @Test func theFileIsPrivateFromItsFirstByteWhateverTheUmask() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Under the usual umask SQLite alone would make the file 0644.
        let previous = umask(0o022)
        defer { umask(previous) }
        let file = directory.file("open.sqlite")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try SmartStore(fileURL: file)
        try store.registerSoup(Fixture.contacts)
        #expect(mode(file) == 0o600, "an existing file is made private")
        #expect(mode(URL(fileURLWithPath: file.path + "-wal")) == 0o600)
        #expect(mode(URL(fileURLWithPath: file.path + "-shm")) == 0o600)
    }

    @Test func logoutRemovesThatUsersStoresOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manager = StoreManager(root: directory.url)
        for owner in [ada, bob, StoreOwner.global] {
            let store = try manager.store(for: owner)
            try store.registerSoup(Fixture.contacts)
            try store.upsert([["LastName": .string(owner.description)]], intoSoup: "contacts")
        }
        let adas = try manager.store(for: ada)
        try manager.removeStores(for: ada)
        #expect(!FileManager.default.fileExists(atPath: directory.file("00DORG/005ADA/stores").path))
        #expect(!manager.storeExists(named: SmartStore.defaultStoreName, for: ada))
        #expect(storeError { _ = try adas.count(.all(soupName: "contacts")) }?.code == .storeClosed, "a store handed out is closed")
        #expect(try manager.store(for: bob).query(.all(soupName: "contacts", selectPaths: ["LastName"])) == [["00DORG/005BOB"]])
        #expect(try manager.store(for: .global).count(.all(soupName: "contacts")) == 1)
        // Ada logs in again: a new, empty store.
        #expect(try manager.store(for: ada).allSoupNames().isEmpty)
        // One store at a time too.
        try manager.removeStore(named: SmartStore.defaultStoreName, for: bob)
        #expect(manager.allStoreNames(for: bob).isEmpty)
        #expect(storeError { _ = try manager.store(named: "../escape", for: .global) }?.code == .invalidName)
        #expect(storeError { _ = try manager.store(for: .user(UserAccountIdentity(userID: "..", orgID: "00D"))) }?.code == .invalidName)
    }

    @Test func aRelaunchFindsTheData() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SmartStore.shared(owner: ada, in: directory.url)
            try store.registerSoups([Fixture.accounts, Fixture.contacts])
            try store.upsert(Fixture.accountEntries(), intoSoup: "accounts")
            #expect(try SmartStore.shared(owner: ada, in: directory.url) === store)
            store.close()
        }
        // A new manager, as in a new process, over the same directory.
        let relaunched = try StoreManager(root: directory.url).store(for: ada)
        #expect(try relaunched.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 5)
        #expect(try relaunched.query(.exact(soupName: "accounts", path: "Employees", matchKey: 70)).first?["Name"] == "Acme 7")
        // Issue 29: a store another manager (another instance) has open is not deleted under
        // it, so the relaunched instance closes its store first.
        relaunched.close()
        try SmartStore.removeAllStores(for: ada, in: directory.url)
        #expect(StoreManager(root: directory.url).allStoreNames(for: ada).isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("store.sqlite")
        let text = Data(String(repeating: "this is a text file, not a database\n", count: 200).utf8)
        try text.write(to: file)
        let error = storeError { _ = try SmartStore(fileURL: file) }
        #expect(error?.code == .corruptDatabase)
        #expect(error?.file == file.path)
        #expect(error?.reason.contains("not a SQLite database") == true, "\(error?.reason ?? "")")
        #expect(try Data(contentsOf: file) == text, "left as it was")
        #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"))
    }

    @Test func anotherProgramsDatabaseIsRefusedAndKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Make a SQLite database with a table of its own (through a store, then dropping ours).
        let file = directory.file("other.sqlite")
        do {
            let store = try SmartStore(fileURL: file)
            try store.registerSoup(Fixture.contacts)
            try store.inTransaction { tx in
                try tx.removeSoup("contacts")
            }
            store.close()
        }
        try rewrite(file, "DROP TABLE soup_attrs; DROP TABLE soup_index_map; CREATE TABLE invoices (id INTEGER, total REAL); PRAGMA journal_mode = DELETE;")
        let before = try Data(contentsOf: file)
        let error = storeError { _ = try SmartStore(fileURL: file) }
        #expect(error?.code == .foreignDatabase)
        #expect(error?.reason.contains("invoices") == true)
        #expect(try Data(contentsOf: file) == before, "left untouched")
        // A damaged page of ours is a corrupt database, reported when it is read.
        let ours = directory.file("ours.sqlite")
        do {
            let store = try SmartStore(fileURL: ours)
            try store.registerSoup(Fixture.accounts)
            try store.upsert((0..<2_000).map { ["Name": .string("Entry \($0)"), "Description": .string(String(repeating: "x", count: 200))] }, intoSoup: "accounts")
            store.close()
        }
        var bytes = try Data(contentsOf: ours)
        let pageSize = 4_096
        for offset in stride(from: pageSize * 3, to: min(bytes.count, pageSize * 40), by: 1) { bytes[offset] = 0xA5 }
        try bytes.write(to: ours)
        let damaged = storeError {
            let store = try SmartStore(fileURL: ours)
            _ = try store.query(.all(soupName: "accounts", orderPath: "Name", pageSize: 10_000))
            _ = try store.query(.smart("SELECT integrity_check FROM pragma_integrity_check"))
            throw StoreError(code: .sqliteError, reason: "no damage seen")
        }
        #expect(damaged?.code == .corruptDatabase, "\(String(describing: damaged))")
    }

    /// Runs SQL on a database file directly (Smart SQL only reads).
    func rewrite(_ file: URL, _ sql: String) throws {
        try RawDatabase.execute(sql, at: file.path)
    }
}
