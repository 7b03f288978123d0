import AppKernelCore
import AppKernelREST
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// Custom sync targets (issue 33), as the SDK's apps write them: a class named in
/// `usersyncs.json`'s `iOSImpl`, made from the target's JSON (SalesforceMobileSDK-iOS,
/// libs/MobileSync/MobileSync/Classes/Target/SFSyncDownTarget.m and SFSyncUpTarget.m newFromDict,
/// initWithDict:; libs/MobileSync/MobileSyncTests/Targets/TestSyncDownTarget.m, TestSyncUpTarget.m).
struct CustomTargetTests {
    /// Fetches the accounts of one industry, a page of `pageSize` at a time, as its JSON says.
    struct IndustryTarget: CustomSyncDownTarget {
        let industry: String
        let pageSize: Int
        var pages: [[[String: JSONValue]]] = []

        init(dict: [String: JSONValue]) {
            industry = dict["industry"]?.stringValue ?? ""
            pageSize = dict["pageSize"]?.intValue ?? 1
        }

        mutating func startFetch(syncManager: SyncManager, maxTimeStamp: Int64) async throws -> [[String: JSONValue]] {
            let soql = "SELECT Id, Name, Industry, LastModifiedDate FROM Account WHERE Industry = '\(industry)'"
            let answer = try await syncManager.restClient.send(request: syncManager.restClient.request(forQuery: soql, apiVersion: nil)).asJSON()
            let records = answer["records"]?.arrayValue?.compactMap(\.objectValue) ?? []
            pages = stride(from: 0, to: records.count, by: pageSize).map { Array(records[$0..<min($0 + pageSize, records.count)]) }
            return pages.isEmpty ? [] : pages.removeFirst()
        }

        mutating func continueFetch(syncManager: SyncManager) async throws -> [[String: JSONValue]]? {
            pages.isEmpty ? nil : pages.removeFirst()
        }
    }

    static let syncs = """
    {"syncs": [{"syncName": "energy", "syncType": "syncDown", "soupName": "accounts",
                "target": {"type": "custom", "iOSImpl": "IndustryTarget", "industry": "Energy", "pageSize": 1},
                "options": {"mergeMode": "OVERWRITE"}}]}
    """

    @Test func aCustomSyncDownRunsTheRegisteredTypeWithItsOwnKeys() async throws {
        let world = try await SyncFixture.make(syncsJSON: Self.syncs)
        defer { world.remove() }
        world.syncs.targets.registerSyncDown("IndustryTarget") { IndustryTarget(dict: $0) }
        let log = UpdateLog()
        let state = try await world.syncs.reSync(named: "energy", onUpdate: log.block)
        let energy = world.server("Account").filter { $0["Industry"] == "Energy" }
        #expect(state.status == .done && !energy.isEmpty)
        #expect(try world.values("accounts", "Id") == energy.compactMap { $0["Id"]?.stringValue }.sorted())
        #expect(log.all.filter { $0.status == .running }.count >= energy.count + 1, "a page at a time")
        // The state keeps the class and its keys, and reads back (a relaunch runs it again).
        let saved = try #require(try world.syncs.syncStatus(forName: "energy"))
        guard case .down(let target) = saved.target else { Issue.record("not a sync down"); return }
        #expect(target.json["iOSImpl"] == "IndustryTarget" && target.json["industry"] == "Energy")
    }

    @Test func anUnregisteredCustomTargetFailsAtRunNamingTheClassAndTheFix() async throws {
        let world = try await SyncFixture.make(syncsJSON: Self.syncs)
        defer { world.remove() }
        let error = await syncError { _ = try await world.syncs.reSync(named: "energy") }
        #expect(error?.code == .unsupportedTarget)
        #expect(error?.reason.contains("'IndustryTarget'") == true && error?.reason.contains("registerSyncDown") == true)
        #expect(try world.syncs.syncStatus(forName: "energy")?.status == .failed)
    }

    /// Sends creates with a prefix on the name, through the SDK's own requests otherwise.
    struct PrefixingSyncUp: CustomSyncUpTarget {
        func createOnServer(objectType: String, fields: [String: JSONValue], syncManager: SyncManager) async throws -> String {
            var fields = fields
            fields["Name"] = .string("Mobile: " + (fields["Name"]?.stringValue ?? ""))
            let answer = try await syncManager.restClient.send(request: syncManager.restClient.requestForCreate(withObjectType: objectType, fields: fields, apiVersion: nil))
            return try answer.asJSON()["id"]?.stringValue ?? ""
        }
    }

    /// Says every record failed, a batch of two at a time.
    struct RefusingAdvanced: AdvancedSyncUpTarget {
        var maxBatchSize: Int { 2 }
        func syncUpRecords(_ records: [[String: JSONValue]], fieldlist: [String]?, mergeMode: MergeMode,
                           syncManager: SyncManager) async throws -> [SyncUpOutcome] {
            records.map { _ in .failed(message: "refused by the app") }
        }
    }

    @Test func aCustomSyncUpCreatesThroughTheAppsTypeAndAnAdvancedOneSaysWhatHappened() async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        world.syncs.targets.registerSyncUp("PrefixingSyncUp") { _ in PrefixingSyncUp() }
        world.syncs.targets.registerSyncUp("RefusingAdvanced") { _ in RefusingAdvanced() }
        try world.store.createLocally(["Name": "Offline Co"], inSoup: "accounts", objectType: "Account")
        let result = try await world.syncs.syncUp(target: .custom(className: "PrefixingSyncUp"), options: .forSyncUp(fieldlist: ["Name"]),
                                                  soupName: "accounts", syncName: "up")
        #expect(result.created.count == 1 && result.state.status == .done)
        #expect(world.server("Account", named: "Mobile: Offline Co") != nil)
        try world.store.createLocally(["Name": "A"], inSoup: "accounts", objectType: "Account")
        try world.store.createLocally(["Name": "B"], inSoup: "accounts", objectType: "Account")
        try world.store.createLocally(["Name": "C"], inSoup: "accounts", objectType: "Account")
        let refused = try await world.syncs.syncUp(target: .custom(className: "RefusingAdvanced"), options: .forSyncUp(fieldlist: ["Name"]),
                                                   soupName: "accounts", syncName: "advanced")
        #expect(refused.failed.map(\.message) == ["refused by the app", "refused by the app", "refused by the app"])
        #expect(try world.entries("accounts").filter { $0["__last_error__"] != nil }.count == 3, "each stays dirty with its error")
    }
}
