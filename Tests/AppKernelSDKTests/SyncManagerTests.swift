import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelSDK

@MainActor
struct SyncManagerTests {
    let contacts = SoupSpec(name: "Contact", indexes: [IndexSpec(path: "Id", type: .string)])

    func setUp(batch: Int = 2, mergeMode: MergeMode = .overwrite) async throws -> (EmbeddedOrg, SyncManager, UserStoreRegistry) {
        let org = EmbeddedOrg.sample(queryBatchSize: batch)
        let client = try await org.loggedInClient()
        let stores = UserStoreRegistry()
        let owner = StoreOwner.global
        try stores.register(soups: [contacts], for: owner)
        try stores.register(syncs: [SyncSpec(name: "syncDownContacts", type: .syncDown, soupName: "Contact", targetType: .soql,
                                             query: "SELECT Id, Name, Title FROM Contact", fieldlist: ["Id", "Name"], mergeMode: mergeMode)], for: owner)
        return (org, SyncManager(client: client, stores: stores, owner: owner), stores)
    }

    @Test func syncDownFollowsEveryPageAndReportsProgress() async throws {
        let (_, sync, stores) = try await setUp(batch: 2)
        var progress: [SyncProgress] = []
        let result = try await sync.syncDown(named: "syncDownContacts") { progress.append($0) }
        #expect(result == SyncResult(name: "syncDownContacts", fetched: 5, written: 5, keptLocal: 0))
        #expect(progress == [SyncProgress(fetched: 2, total: 5), SyncProgress(fetched: 4, total: 5), SyncProgress(fetched: 5, total: 5)])
        #expect(stores.records(inSoup: "Contact", for: .global).compactMap { $0["Name"]?.stringValue }.sorted()
                == ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"])
        #expect(stores.records(inSoup: "Contact", for: .global).first?["attributes"] == nil)
    }

    @Test(arguments: [MergeMode.overwrite, .leaveIfChanged])
    func mergeModesDecideWhatHappensToLocalChanges(_ mode: MergeMode) async throws {
        let (org, sync, stores) = try await setUp(batch: 10, mergeMode: mode)
        _ = try await sync.syncDown(named: "syncDownContacts")
        let ada = try #require(stores.records(inSoup: "Contact", for: .global).first { $0["Name"] == "Ada Lovelace" })
        let id = try #require(ada["Id"]?.stringValue)
        try stores.updateLocally(id: id, inSoup: "Contact", for: .global, fields: ["Title": "Countess (local)"])
        let client = try await org.loggedInClient()
        _ = try await client.send(request: client.requestForUpdate(withObjectType: "Contact", objectId: id, fields: ["Title": "Countess (server)"], apiVersion: nil))
        let result = try await sync.syncDown(named: "syncDownContacts")
        let title = stores.record(withID: id, inSoup: "Contact", for: .global)?["Title"]
        switch mode {
        case .overwrite:
            #expect(title == "Countess (server)")
            #expect(result.keptLocal == 0)
            #expect(stores.record(withID: id, inSoup: "Contact", for: .global)?[UserStoreRegistry.localFlag] == nil)
        case .leaveIfChanged:
            #expect(title == "Countess (local)")
            #expect(result.keptLocal == 1)
            #expect(result.written == 4)
        }
    }

    @Test func onlySOQLSyncDownsRunAndUnknownSyncsAreNamed() async throws {
        let (_, sync, _) = try await setUp()
        await #expect(throws: SyncError.self) { _ = try await sync.syncDown(named: "nope") }
        let mru = SyncSpec(name: "recent", type: .syncDown, soupName: "Contact", targetType: .mru)
        let error = await #expect(throws: SyncError.self) { _ = try await sync.syncDown(mru) }
        #expect(error?.description == "the sync 'recent' has a mru target; this sync manager runs soql sync-downs")
        let broken = SyncSpec(name: "bad", type: .syncDown, soupName: "Contact", targetType: .soql, query: "SELECT Salary FROM Contact")
        let restError = await #expect(throws: SyncError.self) { _ = try await sync.syncDown(broken) }
        if case .rest(let failure)? = restError { #expect(failure.serverErrors.first?.errorCode == "INVALID_FIELD") } else { Issue.record("\(String(describing: restError))") }
    }

    @Test func aWipeRemovesTheRecordsToo() async throws {
        let (_, sync, stores) = try await setUp()
        _ = try await sync.syncDown(named: "syncDownContacts")
        #expect(!stores.records(inSoup: "Contact", for: .global).isEmpty)
        stores.wipe(.global)
        #expect(stores.records(inSoup: "Contact", for: .global).isEmpty)
        #expect(throws: ConfigError.self) { try stores.upsert(["Id": "x"], intoSoup: "Contact", for: .global) }
    }
}
