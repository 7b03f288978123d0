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
}
