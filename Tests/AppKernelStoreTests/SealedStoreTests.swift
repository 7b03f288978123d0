import AppKernelCore
@testable import AppKernelStore
import ChildProcess
import Foundation
import Testing

/// Sealed stores (issue 30, "SmartStore encrypted page by page"): every page of the database, its
/// WAL and its rollback journal encrypted by the sealed VFS; a wrong key, flipped bits and
/// swapped pages are typed errors; a plain SQLite says "file is not a database".
struct SealedStoreTests {
    static func key(_ seed: UInt8 = 7) throws -> SmartStore.EncryptionKey {
        try SmartStore.EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) })
    }

    /// `count` accounts whose names and descriptions carry `canary`.
    static func entries(_ canary: String, count: Int) -> [[String: JSONValue]] {
        (0..<count).map { ["Name": .string("\(canary) \($0)"), "Employees": .int($0), "Description": .string("about \(canary) number \($0)")] }
    }

    /// Every byte of every file in the directory (the database, its WAL, journal, shm, holders).
    static func allBytes(in directory: TemporaryDirectory) throws -> [(String, Data)] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).map { name in
            (name, try Data(contentsOf: directory.file(name)))
        }
    }

    @Test func sealedStoreRoundTripsAndNoFileHoldsPlaintext() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let canary = "Canary-\(UUID().uuidString)"
        let url = directory.file("store.sqlite")
        let store = try SmartStore(fileURL: url, key: try Self.key())
        try store.registerSoups([Fixture.accounts])
        try store.upsert(Self.entries(canary, count: 300), intoSoup: "accounts")
        // While open: the WAL holds the commits (it is "-swal", so a plain SQLite never sees it).
        #expect(FileManager.default.fileExists(atPath: url.path + "-swal"))
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        for (name, bytes) in try Self.allBytes(in: directory) {
            #expect(!bytes.contains(Data(canary.utf8)), "\(name) holds the canary in clear")
        }
        #expect(try store.count(.exact(soupName: "accounts", path: "Name", matchKey: .string("\(canary) 42"))) == 1)
        store.close()
        let header = try Data(contentsOf: url).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))
        for (name, bytes) in try Self.allBytes(in: directory) {
            #expect(!bytes.contains(Data(canary.utf8)), "\(name) holds the canary in clear")
        }

        let reopened = try SmartStore(fileURL: url, key: try Self.key())
        defer { reopened.close() }
        #expect(try reopened.count(.all(soupName: "accounts", orderPath: "Name", pageSize: 10)) == 300)
        let found = try reopened.query(.match(soupName: "accounts", path: "Description", matchKey: "number", orderPath: "Employees", pageSize: 5))
        #expect(found.count == 5)
    }

    /// The trait's second run seals ``Fixture/store(in:accounts:)``'s store, the first does not.
    @Test(.sealedAndPlain) func fixtureStoresAreSealedInTheSecondRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Fixture.store(in: directory).close()
        let plain = try Data(contentsOf: directory.file("store.sqlite")).prefix(16) == Data("SQLite format 3\0".utf8)
        #expect(plain == (Fixture.sealingKey == nil))
    }

    /// A plain store from an earlier version with `count` canary entries, closed.
    static func plainStore(at url: URL, canary: String, count: Int = 200) throws {
        let store = try SmartStore(fileURL: url)
        try store.registerSoups([Fixture.accounts])
        try store.upsert(Self.entries(canary, count: count), intoSoup: "accounts")
        store.close()
    }

    /// Issue 30's memo §7.2: the first open with a key seals a plain store (VACUUM INTO a
    /// verified sealed copy, renamed over it, the plain bytes wiped).
    @Test func aPlainStoreIsSealedOnItsFirstOpenWithAKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), canary = "Canary-\(UUID().uuidString)"
        try Self.plainStore(at: url, canary: canary)
        #expect(try Data(contentsOf: url).contains(Data(canary.utf8)))
        let store = try SmartStore(fileURL: url, key: try Self.key())
        #expect(try store.count(.all(soupName: "accounts")) == 200)
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "number")) == 200)
        try store.upsert(Self.entries("after", count: 1), intoSoup: "accounts")
        store.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["store.sqlite"])
        for (name, bytes) in try Self.allBytes(in: directory) {
            #expect(!bytes.contains(Data(canary.utf8)), "\(name) holds the canary in clear")
        }
        #expect(storeError { _ = try SmartStore(fileURL: url) }?.code == .wrongKey)
        let reopened = try SmartStore(fileURL: url, key: try Self.key())
        defer { reopened.close() }
        #expect(try reopened.count(.all(soupName: "accounts")) == 201)
    }

    /// What a kill at each step of the migration leaves, then the next open with the key: a
    /// half-written copy (removed, sealed again), the plain file under its second name before the
    /// rename (the same file: unlinked), and after it (a plain copy: wiped). No entry is lost.
    @Test(arguments: ["copying", "linked", "renamed"])
    func aMigrationKilledMidwayIsFinishedByTheNextOpen(step: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), canary = "Canary-\(UUID().uuidString)"
        try Self.plainStore(at: url, canary: canary)
        switch step {
        case "copying":
            try Self.write([UInt8](repeating: 0x41, count: 5_000), to: url.path + ".sealing")
        case "linked":
            try FileManager.default.linkItem(at: url, to: directory.file("store.sqlite.plain-old"))
        default:
            try FileManager.default.copyItem(at: url, to: directory.file("store.sqlite.plain-old"))
            try SmartStore(fileURL: url, key: try Self.key()).close()
            try FileManager.default.copyItem(at: url, to: directory.file("sealed"))
            try FileManager.default.removeItem(at: url)
            try FileManager.default.moveItem(at: directory.file("sealed"), to: url)
        }
        let store = try SmartStore(fileURL: url, key: try Self.key())
        defer { store.close() }
        #expect(try store.count(.all(soupName: "accounts")) == 200)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!names.contains { $0.contains(".sealing") || $0.contains(".plain-old") }, "\(names)")
        for (name, bytes) in try Self.allBytes(in: directory) {
            #expect(!bytes.contains(Data(canary.utf8)), "\(name) holds the canary in clear")
        }
    }

    /// A sealed connection (the store's own layer) on a fresh file with table `t`: `rows` rows of
    /// 1,000 bytes carrying `canary`, so that every page after page 2 is a page of `t`.
    static func sealedTable(at path: String, canary: String, rows: Int = 20, journal: String = "WAL") throws -> SQLiteConnection {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let connection = try SQLiteConnection(path: path, readOnly: false, key: try key())
        try connection.execute("PRAGMA journal_mode = \(journal); PRAGMA synchronous = FULL; CREATE TABLE t (x TEXT)")
        for row in 0..<rows {
            try connection.execute("INSERT INTO t VALUES ('\(canary) \(row) ' || hex(zeroblob(480)))")
        }
        return connection
    }

    /// What reading every row of `t` gives: the row count, or the store error it fails with.
    static func readAll(_ path: String, key: SmartStore.EncryptionKey? = nil) -> Result<Int, StoreError> {
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true, key: try key ?? Self.key())
            defer { connection.close() }
            let statement = try connection.prepare("SELECT count(*), sum(length(x)) FROM t", cache: false)
            _ = try statement.step()
            return .success(Int(statement.int64(0)))
        } catch let failure as SQLiteFailure {
            return .failure(StoreError(failure, file: path))
        } catch {
            return .failure(StoreError(code: .sqliteError, reason: "\(error)"))
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    static func write(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    @Test func rollbackJournalIsSealedAndRollsBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let canary = "Canary-\(UUID().uuidString)", path = directory.file("db.sqlite").path
        let connection = try Self.sealedTable(at: path, canary: canary, journal: "DELETE")
        // A tiny cache spills changed pages into the database mid-transaction, as a big one does.
        try connection.execute("PRAGMA cache_size = 2; BEGIN; UPDATE t SET x = 'changed'")
        // Mid-transaction the journal holds the old pages (the canary), sealed, under "-sjournal".
        let journal = try Self.bytes(path + "-sjournal")
        #expect(journal.count > 20 * 1_000)
        #expect(!Data(journal).contains(Data(canary.utf8)))
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        // A copy of the files now is what a kill leaves: a hot journal the next open plays back.
        let copy = directory.file("copy.sqlite").path
        try Self.write(try Self.bytes(path), to: copy)
        try Self.write(journal, to: copy + "-sjournal")
        try connection.execute("ROLLBACK")
        let statement = try connection.prepare("SELECT count(*) FROM t WHERE x LIKE 'Canary-%'", cache: false)
        #expect(try statement.step() && statement.int64(0) == 20)
        connection.close()
        let recovered = try SQLiteConnection(path: copy, readOnly: false, key: try Self.key())
        defer { recovered.close() }
        let count = try recovered.prepare("SELECT count(*) FROM t WHERE x LIKE 'Canary-%'", cache: false)
        #expect(try count.step() && count.int64(0) == 20)
        #expect(!FileManager.default.fileExists(atPath: copy + "-sjournal"))
    }

    /// What a kill leaves: the database and a WAL of commits not yet checkpointed. SQLite's
    /// recovery reads the WAL's frames whole; every commit must come back.
    @Test func aCopyOfAnOpenStoreRecoversItsCommitsFromTheWAL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), copy = directory.file("copy.sqlite")
        let store = try SmartStore(fileURL: url, key: try Self.key())
        try store.registerSoups([Fixture.accounts])
        for batch in 0..<5 { try store.upsert(Self.entries("batch\(batch)", count: 40), intoSoup: "accounts") }
        try FileManager.default.copyItem(at: url, to: copy)
        try FileManager.default.copyItem(atPath: url.path + "-swal", toPath: copy.path + "-swal")
        store.close()
        let recovered = try SmartStore(fileURL: copy, key: try Self.key())
        defer { recovered.close() }
        #expect(try recovered.count(.all(soupName: "accounts")) == 200)
    }

    /// A wrong key on what a kill left (a WAL not checkpointed): nothing read, nothing written,
    /// the WAL neither replayed nor removed; the right key then recovers every commit.
    @Test func aWrongKeyLeavesAKilledStoreAndItsWALAsTheyWere() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite"), copy = directory.file("copy.sqlite")
        let store = try SmartStore(fileURL: url, key: try Self.key())
        try store.registerSoups([Fixture.accounts])
        try store.upsert(Self.entries("kept", count: 60), intoSoup: "accounts")
        try FileManager.default.copyItem(at: url, to: copy)
        try FileManager.default.copyItem(atPath: url.path + "-swal", toPath: copy.path + "-swal")
        store.close()
        let before = [try Self.bytes(copy.path), try Self.bytes(copy.path + "-swal")]
        #expect(storeError { _ = try SmartStore(fileURL: copy, key: try Self.key(8)) }?.code == .wrongKey)
        #expect([try Self.bytes(copy.path), try Self.bytes(copy.path + "-swal")] == before)
        #expect(!FileManager.default.fileExists(atPath: copy.path + "-shm"))
        let right = try SmartStore(fileURL: copy, key: try Self.key())
        defer { right.close() }
        #expect(try right.count(.all(soupName: "accounts")) == 60)
    }

    @Test func wrongKeyIsWrongKeyAndTheFileStaysAsItWas() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let store = try SmartStore(fileURL: url, key: try Self.key())
        try store.registerSoups([Fixture.accounts])
        try store.upsert(Self.entries("secret", count: 50), intoSoup: "accounts")
        store.close()
        let before = try Self.allBytes(in: directory).map { $0.0 + ":" + $0.1.base64EncodedString() }.sorted()

        let wrong = storeError { _ = try SmartStore(fileURL: url, key: try Self.key(8)) }
        #expect(wrong?.code == .wrongKey)
        #expect(wrong?.file == url.path)
        let none = storeError { _ = try SmartStore(fileURL: url) }
        #expect(none?.code == .wrongKey)
        #expect(storeError { _ = try SmartStore.EncryptionKey(bytes: [UInt8](repeating: 1, count: 31)) }?.code == .wrongKey)
        let after = try Self.allBytes(in: directory).map { $0.0 + ":" + $0.1.base64EncodedString() }.sorted()
        #expect(after == before)

        let right = try SmartStore(fileURL: url, key: try Self.key())
        defer { right.close() }
        #expect(try right.count(.all(soupName: "accounts")) == 50)
    }

    /// Observed with SQLite 3.40.1's shell and Python's sqlite3 module (issue 30's research memo
    /// §1.4): a file whose first 16 bytes are not "SQLite format 3" is "not a database".
    @Test func plainSQLiteSaysFileIsNotADatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        let store = try SmartStore(fileURL: url, key: try Self.key())
        try store.registerSoups([Fixture.accounts])
        try store.upsert(Self.entries("secret", count: 5), intoSoup: "accounts")
        store.close()
        let script = "import sqlite3, sys\ntry:\n    sqlite3.connect(sys.argv[1]).execute('SELECT * FROM sqlite_master').fetchall()\n"
            + "    print('opened')\nexcept sqlite3.DatabaseError as error:\n    print(error)\n"
        let python = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", script, url.path])
        #expect(await python.waitForExit() == 0)
        #expect(python.lines == ["file is not a database"])
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
            let shell = try ChildProcess(executable: "/usr/bin/sqlite3", arguments: [url.path, ".tables"])
            #expect(await shell.waitForExit() != 0)
            #expect(shell.errors.contains("file is not a database"))
        }
    }

    /// Page 2, 3 and the last page (0).
    @Test(arguments: [2, 3, 0])
    func aFlippedBitInAPageIsCorruptDatabase(page: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db.sqlite").path
        try Self.sealedTable(at: path, canary: "secret").close()
        #expect(try Self.readAll(path).get() == 20)
        var bytes = try Self.bytes(path)
        let pages = bytes.count / 4096
        #expect(pages >= 6)
        bytes[((page == 0 ? pages : page) - 1) * 4096 + 700] ^= 0x10
        try Self.write(bytes, to: path)
        #expect(throws: StoreError.self) { try Self.readAll(path).get() }
        #expect(Self.readAll(path).failureCode == .corruptDatabase)
    }

    @Test func swappedPagesAreCorruptDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db.sqlite").path
        try Self.sealedTable(at: path, canary: "secret").close()
        var bytes = try Self.bytes(path)
        let third = Array(bytes[8192..<12288])
        bytes.replaceSubrange(8192..<12288, with: bytes[12288..<16384])
        bytes.replaceSubrange(12288..<16384, with: third)
        try Self.write(bytes, to: path)
        #expect(Self.readAll(path).failureCode == .corruptDatabase)
    }

    @Test func aDamagedFirstPageOrHeaderIsCorruptNotWrongKey() throws {
        for offset in [17, 20, 9, 300] {   // page size, reserve, file id, ciphertext
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.file("db.sqlite").path
            try Self.sealedTable(at: path, canary: "secret").close()
            var bytes = try Self.bytes(path)
            bytes[offset] ^= 0x01
            try Self.write(bytes, to: path)
            let code = Self.readAll(path).failureCode
            #expect(code == .corruptDatabase, "offset \(offset): \(String(describing: code))")
        }
    }

    @Test func aTruncatedFileIsCorruptDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db.sqlite").path
        try Self.sealedTable(at: path, canary: "secret").close()
        let bytes = try Self.bytes(path)
        try Self.write(Array(bytes.prefix(bytes.count - 1_000)), to: path)
        #expect(Self.readAll(path).failureCode == .corruptDatabase)
    }

    /// Fail closed: SQLite never bypasses the VFS. A temporary file (which would hold plaintext) is
    /// refused rather than written, and memory-mapping is never used (it would read ciphertext).
    @Test func temporaryFilesAreRefusedAndMemoryMappingIsNeverUsed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db.sqlite").path
        let connection = try Self.sealedTable(at: path, canary: "secret")
        defer { connection.close() }
        try connection.execute("PRAGMA mmap_size = 268435456")
        let statement = try connection.prepare("SELECT count(*) FROM t WHERE x LIKE 'secret %'", cache: false)
        #expect(try statement.step() && statement.int64(0) == 20)
        statement.reset()
        do {
            try connection.execute("PRAGMA temp_store = FILE; CREATE TEMP TABLE spill (y); PRAGMA temp.cache_size = 2; INSERT INTO spill SELECT x FROM t; INSERT INTO spill SELECT y FROM spill")
            Issue.record("a temporary table on disk was created through the sealed VFS")
        } catch {
            #expect(error.primary == 14 /* SQLITE_CANTOPEN */)
        }
    }

    @Test func bigSortsVacuumAndSavepointsStayInMemory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("db.sqlite").path
        let connection = try Self.sealedTable(at: path, canary: "secret", rows: 2_000)
        defer { connection.close() }
        try connection.execute("SAVEPOINT a; DELETE FROM t WHERE rowid % 2 = 0; ROLLBACK TO a; RELEASE a; VACUUM")
        let sorted = try connection.prepare("SELECT x FROM t ORDER BY substr(x, 40) DESC, x LIMIT 1", cache: false)
        #expect(try sorted.step())
        #expect(Self.readAll(path).successCount == 2_000)
    }
}

extension Result where Failure == StoreError {
    var failureCode: StoreError.Code? { if case .failure(let error) = self { error.code } else { nil } }
}

extension Result where Success == Int {
    var successCount: Int? { try? get() }
}

/// Runs each test of a suite twice: on plain stores, then on sealed ones (``Fixture/store(in:accounts:)``
/// opens with ``Fixture/sealingKey``), so the store's API tests cover both.
struct SealedAndPlain: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> SealedAndPlain? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await function()
        try await Fixture.$sealingKey.withValue(try SealedStoreTests.key(99)) { try await function() }
    }
}

extension Trait where Self == SealedAndPlain {
    /// Runs each test on plain stores, then on sealed ones.
    static var sealedAndPlain: SealedAndPlain { SealedAndPlain() }
}
