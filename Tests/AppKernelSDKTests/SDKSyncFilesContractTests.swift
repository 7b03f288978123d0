import Foundation
import Testing
import AppKernel
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelREST
import AppKernelSDK
import AppKernelStore
import AppKernelSync

/// The app's own sync-down target an SDK app names in `usersyncs.json` (`"iOSImpl":
/// "RecentAccountsTarget"`): the ten accounts changed last. As the SDK's custom targets do
/// (SalesforceMobileSDK-iOS, libs/MobileSync/MobileSyncTests/Targets/TestSyncDownTarget.m), it
/// is made from the target's JSON and fetches with the manager's REST client.
struct RecentAccountsTarget: CustomSyncDownTarget {
    /// How many accounts (the target's own key `limit`, 10 unless it says).
    let limit: Int

    init(dict: [String: JSONValue]) {
        limit = dict["limit"]?.intValue ?? 10
    }

    func startFetch(syncManager: SyncManager, maxTimeStamp: Int64) async throws -> [[String: JSONValue]] {
        let soql = "SELECT Id, Name, LastModifiedDate FROM Account ORDER BY LastModifiedDate DESC LIMIT \(limit)"
        let answer = try await syncManager.restClient.send(request: syncManager.restClient.request(forQuery: soql, apiVersion: nil)).asJSON()
        return answer["records"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }
}

@MainActor
struct SDKSyncFilesContractTests {
    // The acceptance test (issue 33), as written. The file is what the SDK's apps ship:
    // no `options` (SFSyncState.m reads none as OVERWRITE), a parent_children target without
    // `parentSoqlFilter` (SFParentChildrenSyncDownTarget.m builds no WHERE), a briefcase target
    // (BriefcaseSyncDownTarget.swift) and a custom one named by its class (SFSyncDownTarget.m
    // newFromDict: iOSImpl).
    @MainActor @Test func contractTheSDKsOwnSyncFilesRunUnchanged() async throws {
        let org = EmbeddedOrg.sample()
        let config = try SyncConfig.load(json: """
        { "syncs": [
          { "syncName": "accounts", "syncType": "syncDown", "soupName": "Account",
            "target": { "type": "soql", "query": "SELECT Id, Name, LastModifiedDate FROM Account" } },
          { "syncName": "withContacts", "syncType": "syncDown", "soupName": "Account",
            "target": { "type": "parent_children",
                        "parent": { "idFieldName": "Id", "sobjectType": "Account", "modificationDateFieldName": "LastModifiedDate", "soupName": "Account" },
                        "parentFieldlist": ["Id", "Name"],
                        "children": { "idFieldName": "Id", "sobjectType": "Contact", "modificationDateFieldName": "LastModifiedDate", "soupName": "Contact", "sobjectTypePlural": "Contacts", "parentIdFieldName": "AccountId" },
                        "childrenFieldlist": ["Id", "LastName", "AccountId"], "relationshipType": "MASTER_DETAIL" } },
          { "syncName": "primed", "syncType": "syncDown", "soupName": "Account",
            "target": { "type": "briefcase", "infos": [ { "sobjectType": "Account", "fieldlist": ["Id", "Name"], "soupName": "Account" } ] } },
          { "syncName": "mine", "syncType": "syncDown", "soupName": "Account",
            "target": { "type": "custom", "iOSImpl": "RecentAccountsTarget" } }
        ] }
        """)
        #expect(config.warnings.map(\.keyPath).contains("syncs[0].options"))
        let app = try await AccountsFixture.launch(org: org, syncs: config,
                                                   targets: ["RecentAccountsTarget": RecentAccountsTarget.init])
        for name in ["accounts", "withContacts", "primed", "mine"] {
            let state = try await app.syncManager.reSync(named: name)
            #expect(state.status == .done)
        }
        #expect(try app.store.query(.smart("select {Account}.{Account:Name} from {Account}")).count > 0)
    }

    /// The launch reads the app's files as the SDK does (`setupUserStoreFromDefaultConfig`,
    /// `setupUserSyncsFromDefaultConfig` — MobileSyncSDKManager / SFSDKStoreConfig /
    /// SFSDKSyncsConfig): what iOS accepts with a default loads, and each default applied is in
    /// `configWarnings` and is the application's `configDefaulted` diagnostic.
    @Test func theLaunchLoadsWhatIOSAcceptsAndSaysWhichDefaultsApplied() async throws {
        let app = try await AccountsFixture.launch(org: EmbeddedOrg.sample(), userstore: """
            {"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name"}]}]}
            """, usersyncs: """
            {"syncs": [{"syncName": "accounts", "syncType": "syncDown", "soupName": "Account",
                        "target": {"type": "soql", "query": "SELECT Id, Name, LastModifiedDate FROM Account"}}]}
            """)
        #expect(app.manager.configWarnings.map { "\($0.file) \($0.keyPath)" }
                == ["userstore.json soups[0].indexes[1].type", "usersyncs.json syncs[0].options"])
        let diagnostics = try #require(app.manager.application).diagnostics.filter { $0.kind == .configDefaulted }
        #expect(diagnostics.map(\.subject) == ["userstore.json:soups[0].indexes[1].type", "usersyncs.json:syncs[0].options"])
        #expect(try await app.syncManager.reSync(named: "accounts").status == .done)
        #expect(try app.store.query(.smart("select {Account:Name} from {Account}")).count > 0)
        try await app.terminate()
    }
}
