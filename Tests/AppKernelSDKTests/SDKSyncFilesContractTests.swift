import Foundation
import Testing
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
}
