import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// A temporary directory for one test, removed by `remove()` (call it in a `defer`).
struct TemporaryDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("smartstore-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A file path inside it.
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The error a throwing call threw, as a store error (fails the test otherwise).
func storeError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> StoreError? {
    do {
        try body()
        Issue.record("expected a StoreError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The soups most tests use: `accounts` (a string, an integer, a floating, a full-text and a
/// json1 index) and `contacts` (string indexes).
enum Fixture {
    static let accounts = SoupSpec(name: "accounts", indexes: [
        IndexSpec(path: "Name", type: .string),
        IndexSpec(path: "Employees", type: .integer),
        IndexSpec(path: "Revenue", type: .floating),
        IndexSpec(path: "Description", type: .fullText),
        IndexSpec(path: "Owner.Name", type: .json1),
    ])
    static let contacts = SoupSpec(name: "contacts", indexes: [
        IndexSpec(path: "LastName", type: .string),
        IndexSpec(path: "AccountName", type: .string),
    ])

    /// Ten accounts: `Acme 0`…`Acme 9`, employees 0, 10, …, 90, revenue 0.5, 1.5, …
    static func accountEntries() -> [[String: JSONValue]] {
        (0..<10).map { index in
            ["Name": .string("Acme \(index)"), "Employees": .int(index * 10), "Revenue": .double(Double(index) + 0.5),
             "Description": .string(index % 2 == 0 ? "even cloud company \(index)" : "odd hardware maker \(index)"),
             "Owner": ["Name": .string("Owner \(index % 3)")], "Industry": .string(index < 5 ? "Tech" : "Retail")]
        }
    }

    /// The key ``store(in:accounts:)`` seals its store with: set by ``SealedAndPlain`` for the
    /// second run of each test of a suite that has the trait.
    @TaskLocal static var sealingKey: SmartStore.EncryptionKey?

    /// A store at a fresh file with both soups registered and the accounts in.
    static func store(in directory: TemporaryDirectory, accounts: Bool = true) throws -> SmartStore {
        let store = try SmartStore(fileURL: directory.file("store.sqlite"), key: Fixture.sealingKey)
        try store.registerSoups([Fixture.accounts, Fixture.contacts])
        if accounts { try store.upsert(accountEntries(), intoSoup: "accounts") }
        return store
    }
}
