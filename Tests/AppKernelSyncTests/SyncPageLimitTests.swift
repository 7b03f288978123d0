import AppKernelAuth
import AppKernelCore
import AppKernelREST
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// A sync down whose page is larger than the REST client's limit (issue 29, "a sync page over
/// the limit fails the sync with the page named, nothing half-written").
struct SyncPageLimitTests {
    static let instance = URL(string: "https://na1.example.com")!
    static let secondPage = "/services/data/v62.0/query/01gPAGE-2000"

    /// A query answer holding `records`, and `next` as its `nextRecordsUrl`.
    static func page(_ records: [[String: Any]], next: String?) -> Data {
        var answer: [String: Any] = ["totalSize": 201, "done": next == nil, "records": records]
        if let next { answer["nextRecordsUrl"] = next }
        return try! JSONSerialization.data(withJSONObject: answer)
    }

    static func account(_ id: String, name: String) -> [String: Any] {
        ["attributes": ["type": "Account"], "Id": id, "Name": name, "LastModifiedDate": "2026-11-24T10:00:00.000+0000"]
    }

    @Test func aPageOverTheLimitFailsTheSyncNamingThePageAndNothingOfItIsWritten() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SmartStore(fileURL: directory.appendingPathComponent("store.sqlite"))
        defer { store.close() }
        try store.registerSoups(StoreConfig.parseSoups(Data(userstoreJSON.utf8)))
        let first = Self.page([Self.account("001000000000001", name: "Small")], next: Self.secondPage)
        // 200 records of 1 KB names: about 230 KB, past the 64 KiB limit below.
        let second = Self.page((0..<200).map { Self.account(String(format: "001000000001%03d", $0), name: String(repeating: "x", count: 1000)) }, next: nil)
        let transport = InProcessTransport { request in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: request.url.path == Self.secondPage ? second : first)
        }
        let credentials = Credentials(accessToken: "A0", refreshToken: "R", instanceURL: Self.instance,
                                      identityURL: Self.instance.appendingPathComponent("id/00D000000000001/005000000000001"),
                                      userID: "005000000000001", orgID: "00D000000000001")
        let client = RestClient(credentials: credentials, transport: transport, maximumResponseBytes: 64 << 10)
        let syncs = try SyncManager(store: store, restClient: client)

        let error = await #expect(throws: SyncError.self) {
            try await syncs.syncDown(target: .soql("SELECT Id, Name, LastModifiedDate FROM Account"), soupName: "accounts", syncName: "bigPages")
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.path == Self.secondPage, "the page is named")
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("sync 'bigPages'") && message.contains(Self.secondPage) && message.contains("65536 bytes"), "\(message)")
        guard case .responseTooLarge(let refused)? = error?.restError else { Issue.record("\(message)"); return }
        #expect(refused.limit == 64 << 10 && refused.setting == "RestClient(maximumResponseBytes:)")

        let ids = try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", pageSize: 1000)).compactMap { $0.objectValue?["Id"]?.stringValue }
        #expect(ids == ["001000000000001"], "the first page stays; nothing of the refused one was written")
        let state = try #require(try syncs.syncStatus(forName: "bigPages"))
        #expect(state.status == .failed && state.error.contains(Self.secondPage))
    }
}
