import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// `userstore.json` for the tests: the soups the syncs fill, in the Mobile SDK's form.
let userstoreJSON = """
{
  "soups": [
    {"soupName": "accounts", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"},
                                          {"path": "__local__", "type": "string"}, {"path": "__sync_id__", "type": "integer"}]},
    {"soupName": "contacts", "indexes": [{"path": "Id", "type": "string"}, {"path": "AccountId", "type": "string"},
                                          {"path": "LastName", "type": "string"}, {"path": "__local__", "type": "string"}]},
    {"soupName": "cases", "indexes": [{"path": "Id", "type": "string"}, {"path": "ContactId", "type": "string"}]},
    {"soupName": "layouts", "indexes": [{"path": "Id", "type": "json1"}]},
    {"soupName": "metadata", "indexes": [{"path": "Id", "type": "json1"}]}
  ]
}
"""

/// One test's world: an embedded org on a manual record clock, a store in its own temporary
/// directory, a client that reaches the org through `URLSession`, and a sync manager.
struct SyncFixture {
    static let start = SalesforceDateTime.date(fromMillis: 1_795_514_400_000)   // 2026-11-24T10:00:00Z

    let directory: URL
    let org: EmbeddedOrg
    let time: EmbeddedOrg.RecordClock
    let client: RestClient
    let store: SmartStore
    let syncs: SyncManager

    /// A fresh world. The caller removes it (`defer { fixture.remove() }`).
    static func make(queryBatchSize: Int = 2000, syncsJSON: String? = nil, org: EmbeddedOrg? = nil,
                     time: EmbeddedOrg.RecordClock = EmbeddedOrg.RecordClock(start: start)) async throws -> SyncFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mobilesync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let org = org ?? EmbeddedOrg.sample(queryBatchSize: queryBatchSize, recordClock: time)
        let logged = try await org.loggedInClient()
        let client = RestClient(credentials: await logged.credentials, transport: org.urlSessionTransport())
        let store = try SmartStore(fileURL: directory.appendingPathComponent("store.sqlite"))
        let soups = try StoreConfig.parseSoups(Data(userstoreJSON.utf8))
        try store.registerSoups(soups)
        let syncs = try SyncManager(store: store, restClient: client, now: { time.current })
        if let syncsJSON {
            try syncs.createSyncs(SyncConfig.parseSyncs(Data(syncsJSON.utf8), soupNames: Set(soups.map(\.name))))
        }
        return SyncFixture(directory: directory, org: org, time: time, client: client, store: store, syncs: syncs)
    }

    /// The same org and directory with the store closed and opened again, and a new manager —
    /// what a relaunch sees.
    func reopened() throws -> SyncFixture {
        store.close()
        let store = try SmartStore(fileURL: directory.appendingPathComponent("store.sqlite"))
        let time = self.time
        return SyncFixture(directory: directory, org: org, time: time, client: client, store: store,
                           syncs: try SyncManager(store: store, restClient: client, now: { time.current }))
    }

    func remove() {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every entry of a soup, in entry order.
    func entries(_ soup: String) throws -> [[String: JSONValue]] {
        try store.query(.all(soupName: soup, orderPath: "_soupEntryId", pageSize: 100_000)).compactMap(\.objectValue)
    }

    /// The entry of a soup whose `Id` is `id`.
    func entry(_ soup: String, id: String) throws -> [String: JSONValue]? {
        try store.query(.exact(soupName: soup, path: "Id", matchKey: .string(id), pageSize: 1)).first?.objectValue
    }

    /// The values of a field over a soup's entries, sorted.
    func values(_ soup: String, _ field: String) throws -> [String] {
        try entries(soup).compactMap { $0[field]?.stringValue }.sorted()
    }

    /// The live server records of a type (Acme's).
    func server(_ type: String) -> [[String: JSONValue]] { org.records(of: type) }

    /// The server record of a type named `name`.
    func server(_ type: String, named name: String) -> [String: JSONValue]? {
        org.records(of: type).first { $0["Name"]?.stringValue == name }
    }

    /// The data requests the org answered since `mark` (a count of the log), as `METHOD /path`.
    func requests(since mark: Int) -> [String] { Array(org.requestLog.dropFirst(mark)) }
}

/// Collects the states a sync reports.
final class UpdateLog: Sendable {
    private let states = Locked<[SyncState]>([])

    var block: SyncUpdateBlock { { state in self.states.withLock { $0.append(state) } } }

    var all: [SyncState] { states.withLock { $0 } }

    /// `STATUS progress` of each report.
    var summary: [String] { all.map { "\($0.status.rawValue) \($0.progress)" } }
}

/// The error a throwing async call threw, as a sync error (fails the test otherwise).
func syncError(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> SyncError? {
    do {
        try await body()
        Issue.record("expected a SyncError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as SyncError {
        return error
    } catch {
        Issue.record("expected a SyncError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
