import AppKernelCore
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import Foundation
import Testing
import TestSupport

/// The snippet's `print`, kept out of the test run's output (shown when `APPKERNEL_TEST_FIGURES`
/// is set): the block runs verbatim, its lines go nowhere else.
private func print(_ items: Any...) { figure(items.map { "\($0)" }.joined(separator: " ")) }

/// The README's block, as written; a namespace here so its names stay the README's.
private struct ReadmeSync {
    /// Syncs the contacts down, edits one offline (`id`) and syncs it up. `keys`: the app's `KeyRing`;
    /// `client`: a logged-in user's; the JSON: the app's userstore.json and usersyncs.json.
    func syncContacts(keys: KeyRing, dataDirectory: URL, client: RestClient, userstoreJSON: Data, usersyncsJSON: Data,
                      editing id: String) async throws -> (down: SyncState, up: SyncUpResult) {
        let key = try keys.dataKey(of: nil, creatingIfMissing: true)      // keys: the app's KeyRing
        let store = try SmartStore(fileURL: dataDirectory.appendingPathComponent("store.sqlite"), key: SmartStore.EncryptionKey(key))
        try store.registerSoups(StoreConfig.parseSoups(userstoreJSON))
        let syncs = try SyncManager(store: store, restClient: client)
        try syncs.createSyncs(SyncConfig.parseSyncs(usersyncsJSON, soupNames: ["contacts"]))
        let down = try await syncs.reSync(named: "syncDownContacts") { print($0.status, $0.progress) }
        try store.updateLocally(inSoup: "contacts", recordId: id, fields: ["Title": "Edited offline"])
        let up = try await syncs.syncUp(named: "syncUpContacts")          // up.failed: what the server refused
        try await syncs.cleanResyncGhosts(forName: "syncDownContacts")    // records deleted on the server leave
        store.close()
        return (down, up)
    }
}

/// The README's MobileSync example, run as written (the proposed README section quotes these
/// lines).
struct ReadmeSyncTests {
    @Test func theReadmeExampleSyncsDownEditsOfflineAndSyncsUp() async throws {
        let org = EmbeddedOrg.sample()
        let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        let client = try await org.loggedInClient()
        let userstoreJSON = Data(#"{"soups": [{"soupName": "contacts", "indexes": [{"path": "Id", "type": "string"}, {"path": "__local__", "type": "string"}]}]}"#.utf8)
        let usersyncsJSON = Data("""
        {"syncs": [
          {"syncName": "syncDownContacts", "syncType": "syncDown", "soupName": "contacts",
           "target": {"type": "soql", "query": "SELECT Id, LastName, Title FROM Contact"}, "options": {"mergeMode": "LEAVE_IF_CHANGED"}},
          {"syncName": "syncUpContacts", "syncType": "syncUp", "soupName": "contacts",
           "target": {"createFieldlist": ["LastName", "Title"], "updateFieldlist": ["Title"]}, "options": {"mergeMode": "LEAVE_IF_CHANGED"}}
        ]}
        """.utf8)

        let id = try #require(org.records(of: "Contact").first?["Id"]?.stringValue)

        let keys = try KeyRing(dataHome: dataDirectory, provider: .inMemory(try SecretKey.random()))

        let (down, up) = try await ReadmeSync().syncContacts(keys: keys, dataDirectory: dataDirectory, client: client,
                                                             userstoreJSON: userstoreJSON, usersyncsJSON: usersyncsJSON, editing: id)

        #expect(down.status == .done && down.totalSize == 5)
        #expect(up.failed.isEmpty && up.updated == [id])
        #expect(org.record(withID: id)?["Title"] == "Edited offline")
    }
}
