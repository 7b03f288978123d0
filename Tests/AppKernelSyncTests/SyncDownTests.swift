import AppKernelEmbeddedOrg
import AppKernelCore
import AppKernelREST
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// Sync down through `URLSession` into a SmartStore on disk, every target type written in
/// `usersyncs.json`'s form.
struct SyncDownTests {
    static let syncsJSON = """
    {
      "syncs": [
        {"syncName": "syncDownContacts", "syncType": "syncDown", "soupName": "contacts",
         "target": {"type": "soql", "query": "SELECT FirstName, LastName, Title, Email, AccountId FROM Contact"},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "syncDownContactsKeepingLocal", "syncType": "syncDown", "soupName": "contacts",
         "target": {"type": "soql", "query": "SELECT Id, LastName, Title FROM Contact", "maxBatchSize": 200},
         "options": {"mergeMode": "LEAVE_IF_CHANGED"}},
        {"syncName": "searchAcme", "syncType": "syncDown", "soupName": "accounts",
         "target": {"type": "sosl", "query": "FIND {Acme} IN NAME FIELDS RETURNING Account(Id, Name, LastModifiedDate)"},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "recentAccounts", "syncType": "syncDown", "soupName": "accounts",
         "target": {"type": "mru", "sobjectType": "Account", "fieldlist": ["Id", "Name", "Industry", "LastModifiedDate"]},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "refreshAccounts", "syncType": "syncDown", "soupName": "accounts",
         "target": {"type": "refresh", "sobjectType": "Account", "fieldlist": ["Id", "Name", "Industry", "LastModifiedDate"], "soupName": "accounts",
                    "coundIdsPerSoql": 1},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "accountsWithContacts", "syncType": "syncDown", "soupName": "accounts",
         "target": {"type": "parent_children",
                    "parent": {"idFieldName": "Id", "sobjectType": "Account", "modificationDateFieldName": "LastModifiedDate", "soupName": "accounts"},
                    "parentFieldlist": ["Id", "Name", "Industry"],
                    "children": {"parentIdFieldName": "AccountId", "idFieldName": "Id", "sobjectType": "Contact",
                                 "modificationDateFieldName": "LastModifiedDate", "soupName": "contacts", "sobjectTypePlural": "Contacts"},
                    "childrenFieldlist": ["Id", "LastName", "AccountId"],
                    "relationshipType": "MASTER_DETAIL",
                    "parentSoqlFilter": "Industry != 'Energy'"},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "accountLayout", "syncType": "syncDown", "soupName": "layouts",
         "target": {"type": "layout", "sobjectType": "Account", "layoutType": "Compact", "formFactor": "Medium", "mode": "View"},
         "options": {"mergeMode": "OVERWRITE"}},
        {"syncName": "accountMetadata", "syncType": "syncDown", "soupName": "metadata",
         "target": {"type": "metadata", "sobjectType": "Account"},
         "options": {"mergeMode": "OVERWRITE"}}
      ]
    }
    """

    func fixture(queryBatchSize: Int = 2000) async throws -> SyncFixture {
        try await SyncFixture.make(queryBatchSize: queryBatchSize, syncsJSON: Self.syncsJSON)
    }

    @Test func aSOQLSyncDownStreamsEveryPageAndReportsEachStep() async throws {
        let world = try await fixture(queryBatchSize: 2)
        defer { world.remove() }
        let log = UpdateLog()
        let state = try await world.syncs.reSync(named: "syncDownContacts", onUpdate: log.block)
        #expect(log.summary == ["RUNNING 0", "RUNNING 0", "RUNNING 40", "RUNNING 80", "RUNNING 100", "DONE 100"])
        #expect(state.status == .done)
        #expect(state.totalSize == 5)
        let contacts = try world.entries("contacts")
        #expect(contacts.compactMap { $0["LastName"]?.stringValue }.sorted() == ["Hamilton", "Hopper", "Lovelace", "Torvalds", "Turing"])
        let ada = try #require(contacts.first { $0["LastName"] == "Lovelace" })
        #expect(ada["attributes"]?["type"] == "Contact", "attributes stay: a sync up reads the object type there")
        #expect(ada["__local__"] == false && ada["__locally_created__"] == false && ada["__locally_updated__"] == false
                && ada["__locally_deleted__"] == false)
        #expect(ada["__sync_id__"]?.intValue == state.id)
        let stamps = world.server("Contact").compactMap { $0["LastModifiedDate"]?.stringValue }
        let newest = try #require(stamps.max())
        #expect(state.maxTimeStamp == SalesforceDateTime.millis(from: newest), "the newest LastModifiedDate seen")
        let queries = world.org.requestLog.filter { $0.contains("/query") }
        #expect(queries.count == 3, "one query and two nextRecordsUrl pages: \(queries)")
    }

    @Test func theSDKsQueryIsCompletedAndKeptInTheSyncState() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let sync = try #require(try world.syncs.syncStatus(forName: "syncDownContacts"))
        guard case .down(let target) = sync.target else { Issue.record("not a sync down"); return }
        #expect(target.query == "SELECT Id, LastModifiedDate, FirstName, LastName, Title, Email, AccountId FROM Contact ORDER BY LastModifiedDate")
        #expect(sync.status == .new)
        #expect(sync.json["target"]?["iOSImpl"] == "SFSoqlSyncDownTarget")
        #expect(sync.json["target"]?["maxBatchSize"] == 2000)
        #expect(sync.json["maxTimeStamp"] == -1)
        let kept = try #require(try world.syncs.syncStatus(forName: "syncDownContactsKeepingLocal"))
        guard case .down(let keeping) = kept.target else { return }
        #expect(keeping.query == "SELECT LastModifiedDate, Id, LastName, Title FROM Contact ORDER BY LastModifiedDate")
        #expect(kept.json["target"]?["maxBatchSize"] == 200)
    }

    @Test func aResyncFetchesOnlyWhatChangedSinceMaxTimeStamp() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let first = try await world.syncs.reSync(named: "syncDownContacts")
        let ada = try #require(world.server("Contact", named: "Ada Lovelace")?["Id"]?.stringValue)
        world.time.advance(by: .seconds(3600))
        try world.org.update(recordID: ada, fields: ["Title": "Countess"])
        let mark = world.org.requestLog.count
        let second = try await world.syncs.reSync(named: "syncDownContacts")
        #expect(second.totalSize == 1, "only Ada changed")
        #expect(second.maxTimeStamp > first.maxTimeStamp)
        #expect(try world.entry("contacts", id: ada)?["Title"] == "Countess")
        #expect(try world.entries("contacts").count == 5)
        #expect(world.requests(since: mark) == ["GET /services/data/v62.0/query"])
        let third = try await world.syncs.reSync(named: "syncDownContacts")
        #expect(third.totalSize == 0 && third.status == .done && third.progress == 100)
        #expect(third.maxTimeStamp == second.maxTimeStamp, "nothing new: the mark stays")
    }

    @Test(arguments: [MergeMode.overwrite, .leaveIfChanged])
    func aSyncDownOverwritesOrKeepsALocalChangeTheServerAlsoMade(_ mode: MergeMode) async throws {
        let world = try await fixture()
        defer { world.remove() }
        let name = mode == .overwrite ? "syncDownContacts" : "syncDownContactsKeepingLocal"
        try await world.syncs.reSync(named: name)
        let ada = try #require(world.server("Contact", named: "Ada Lovelace")?["Id"]?.stringValue)
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["Title": "Countess (local)"])
        try world.org.update(recordID: ada, fields: ["Title": "Countess (server)"])
        let alan = try #require(world.server("Contact", named: "Alan Turing")?["Id"]?.stringValue)
        try world.org.update(recordID: alan, fields: ["Title": "Cryptanalyst"])
        try await world.syncs.reSync(named: name)
        let local = try #require(try world.entry("contacts", id: ada))
        switch mode {
        case .overwrite:
            #expect(local["Title"] == "Countess (server)")
            #expect(local["__local__"] == false)
        case .leaveIfChanged:
            #expect(local["Title"] == "Countess (local)", "the local change is left alone")
            #expect(local["__local__"] == true && local["__locally_updated__"] == true)
        }
        #expect(try world.entry("contacts", id: alan)?["Title"] == "Cryptanalyst", "records without local changes take the server's")
    }

    @Test func aSOSLSyncDownStoresWhatTheSearchFinds() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let state = try await world.syncs.reSync(named: "searchAcme")
        #expect(try world.values("accounts", "Name") == ["Acme Corporation"])
        #expect(state.totalSize == 1)
        #expect(state.maxTimeStamp == SalesforceDateTime.millis(from: world.server("Account", named: "Acme Corporation")?["LastModifiedDate"]?.stringValue ?? ""))
    }

    @Test func anMRUSyncDownStoresTheRecentlyUsedRecords() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let globex = try #require(world.server("Account", named: "Globex")?["Id"]?.stringValue)
        _ = try await world.client.send(request: world.client.requestForRetrieve(withObjectType: "Account", objectId: globex, fieldList: nil, apiVersion: nil))
        let mark = world.org.requestLog.count
        let state = try await world.syncs.reSync(named: "recentAccounts")
        #expect(try world.values("accounts", "Name") == ["Acme Corporation", "Globex"])
        #expect(state.totalSize == 2)
        #expect(world.requests(since: mark) == ["GET /services/data/v62.0/sobjects/Account", "GET /services/data/v62.0/query"])
        #expect(try world.entry("accounts", id: globex)?["Industry"] == "Energy")
    }

    @Test func aRefreshSyncDownFetchesTheSoupsRecordsAgainAndOnAResyncOnlyChangedOnes() async throws {
        let world = try await fixture()
        defer { world.remove() }
        for account in world.server("Account") {
            try world.store.upsert([["Id": account["Id"] ?? .null, "Name": "stale", "attributes": ["type": "Account"]]], intoSoup: "accounts")
        }
        let state = try await world.syncs.reSync(named: "refreshAccounts")
        #expect(try world.values("accounts", "Name") == ["Acme Corporation", "Globex"])
        #expect(state.totalSize == 2)
        #expect(world.org.requestLog.filter { $0.hasSuffix("/query") }.count == 2, "coundIdsPerSoql 1: a query an id")
        let globex = try #require(world.server("Account", named: "Globex")?["Id"]?.stringValue)
        world.time.advance(by: .seconds(60))
        try world.org.update(recordID: globex, fields: ["Industry": "Software"])
        let mark = world.org.requestLog.count
        try await world.syncs.reSync(named: "refreshAccounts")
        #expect(try world.entry("accounts", id: globex)?["Industry"] == "Software")
        let queries = world.requests(since: mark)
        #expect(queries.count == 2)
    }

    @Test func aParentChildrenSyncDownFillsBothSoupsAndResyncsChangedParents() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let state = try await world.syncs.reSync(named: "accountsWithContacts")
        #expect(try world.values("accounts", "Name") == ["Acme Corporation"], "the filter leaves Globex out")
        #expect(try world.values("contacts", "LastName") == ["Hamilton", "Lovelace", "Turing"], "Acme's contacts")
        let acme = try #require(world.server("Account", named: "Acme Corporation")?["Id"]?.stringValue)
        #expect(try world.entries("contacts").filter { $0["AccountId"]?.stringValue == acme }.count == 3)
        #expect(try world.entries("accounts").allSatisfy { $0["Contacts"] == nil }, "children are not kept in the parent")
        #expect(state.maxTimeStamp == SalesforceDateTime.millis(from: world.server("Contact").compactMap { $0["LastModifiedDate"]?.stringValue }.max() ?? ""))

        world.time.advance(by: .seconds(60))
        try world.org.update(recordID: acme, fields: ["Industry": "Software"])
        let ada = try #require(world.server("Contact", named: "Ada Lovelace")?["Id"]?.stringValue)
        try world.org.update(recordID: ada, fields: ["LastName": "King"])
        let mark = world.org.requestLog.count
        let again = try await world.syncs.reSync(named: "accountsWithContacts")
        #expect(again.totalSize == 1, "Acme changed")
        #expect(try world.values("contacts", "LastName") == ["Hamilton", "King", "Turing"])
        #expect(world.requests(since: mark).count == 1)
    }

    @Test func layoutAndMetadataSyncDownsStoreOneRecordEach() async throws {
        let world = try await fixture()
        defer { world.remove() }
        try await world.syncs.reSync(named: "accountLayout")
        try await world.syncs.reSync(named: "accountMetadata")
        let layout = try #require(try world.entries("layouts").first)
        #expect(layout["Id"] == "Account-Medium-Compact-View-(null)", "the iOS SDK's id, a missing part written (null)")
        #expect(layout["layoutType"] == "Compact")
        #expect(layout["sections"]?[0]?["layoutRows"]?[0]?["layoutItems"]?[0]?["layoutComponents"]?[0]?["apiName"] == "Name")
        let metadata = try #require(try world.entries("metadata").first)
        #expect(metadata["Id"] == "Account")
        #expect(metadata["fields"]?.arrayValue?.contains { $0["name"] == "LastModifiedDate" } == true)
        #expect(try world.syncs.syncStatus(forName: "accountMetadata")?.maxTimeStamp == -1, "a describe has no modification date")
    }

    @Test func theStateIsInTheSyncsSoupAndSurvivesAReopen() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let done = try await world.syncs.reSync(named: "syncDownContacts")
        let reopened = try world.reopened()
        let state = try #require(try reopened.syncs.syncStatus(forName: "syncDownContacts"))
        #expect(state == done)
        let raw = try #require(try reopened.store.query(.exact(soupName: "syncs_soup", path: "name", matchKey: "syncDownContacts", pageSize: 1)).first)
        for key in ["_soupEntryId", "name", "type", "soupName", "target", "options", "status", "progress", "totalSize", "maxTimeStamp",
                    "startTime", "endTime", "error"] {
            #expect(raw[key] != nil, "\(key)")
        }
        #expect(raw["status"] == "DONE" && raw["type"] == "syncDown" && raw["options"]?["mergeMode"] == "OVERWRITE")
        #expect(try reopened.syncs.syncStatus(forName: "accountLayout")?.status == .new)
        #expect(try reopened.entries("contacts").count == 5)
        let mark = reopened.org.requestLog.count
        let next = try await reopened.syncs.reSync(named: "syncDownContacts")
        #expect(next.totalSize == 0, "the reopened sync resumes from its maxTimeStamp")
        #expect(reopened.requests(since: mark).count == 1)
    }

    @Test func aSyncLeftRunningByAnEndedProcessIsStoppedAndResumesJustBeforeItsMark() async throws {
        let world = try await fixture()
        defer { world.remove() }
        var state = try await world.syncs.reSync(named: "syncDownContacts")
        state.status = .running
        try world.store.upsert([state.json], intoSoup: "syncs_soup")
        let reopened = try world.reopened()
        #expect(try reopened.syncs.syncStatus(forName: "syncDownContacts")?.status == .stopped)
        let resumed = try await reopened.syncs.reSync(named: "syncDownContacts")
        #expect(resumed.totalSize == 1, "maxTimeStamp - 1 takes the newest record again")
        #expect(resumed.status == .done)
    }

    @Test func syncDownCreatesNamedAndUnnamedSyncs() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let unnamed = try await world.syncs.syncDown(target: .soql("SELECT Name FROM Account"), soupName: "accounts")
        #expect(unnamed.name == nil && unnamed.id > 0 && unnamed.status == .done)
        #expect(try world.values("accounts", "Name") == ["Acme Corporation", "Globex"])
        let named = try await world.syncs.syncDown(target: .soql("SELECT Name FROM Account"), options: .forSyncDown(mergeMode: .leaveIfChanged),
                                                   soupName: "accounts", syncName: "accountsByHand")
        #expect(try world.syncs.syncStatus(forId: named.id)?.name == "accountsByHand")
        let twice = await syncError { try await world.syncs.syncDown(target: .soql("SELECT Name FROM Account"), soupName: "accounts", syncName: "accountsByHand") }
        #expect(twice?.code == .syncAlreadyExists)
        try world.syncs.deleteSync(forName: "accountsByHand")
        #expect(!world.syncs.hasSync(forName: "accountsByHand"))
        #expect(try world.values("accounts", "Name").count == 2, "deleting a sync keeps its records")
    }
}
