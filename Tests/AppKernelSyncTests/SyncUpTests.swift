import AppKernelEmbeddedOrg
import AppKernelCore
import AppKernelREST
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// Local changes and sync up, for each sync-up target: one request a record (`SFSyncUpTarget`),
/// composite batches (`SFBatchSyncUpTarget`), sObject collections (the default).
struct SyncUpTests {
    static func syncsJSON(iOSImpl: String?) -> String {
        let impl = iOSImpl.map { "\"iOSImpl\": \"\($0)\", " } ?? ""
        return """
        {
          "syncs": [
            {"syncName": "syncDownContacts", "syncType": "syncDown", "soupName": "contacts",
             "target": {"type": "soql", "query": "SELECT Id, FirstName, LastName, Title, AccountId FROM Contact"},
             "options": {"mergeMode": "OVERWRITE"}},
            {"syncName": "syncUpContacts", "syncType": "syncUp", "soupName": "contacts",
             "target": {\(impl)"createFieldlist": ["FirstName", "LastName", "Title", "AccountId"], "updateFieldlist": ["FirstName", "LastName", "Title"]},
             "options": {"fieldlist": ["Id", "FirstName", "LastName", "Title"], "mergeMode": "OVERWRITE"}},
            {"syncName": "syncUpContactsIfUnchanged", "syncType": "syncUp", "soupName": "contacts",
             "target": {\(impl)"createFieldlist": ["LastName", "Title"], "updateFieldlist": ["LastName", "Title"]},
             "options": {"fieldlist": ["Id", "LastName", "Title"], "mergeMode": "LEAVE_IF_CHANGED"}}
          ]
        }
        """
    }

    static let kinds: [String?] = [nil, "SFBatchSyncUpTarget", "SFSyncUpTarget"]

    func synced(_ iOSImpl: String?) async throws -> SyncFixture {
        let world = try await SyncFixture.make(syncsJSON: Self.syncsJSON(iOSImpl: iOSImpl))
        try await world.syncs.reSync(named: "syncDownContacts")
        return world
    }

    func id(_ world: SyncFixture, _ name: String) throws -> String {
        try #require(world.server("Contact", named: name)?["Id"]?.stringValue)
    }

    @Test func localChangesAreMarkedTheWayMobileSyncReadsThem() async throws {
        let world = try await synced(nil)
        defer { world.remove() }
        let created = try world.store.createLocally(["LastName": "Noether"], inSoup: "contacts", objectType: "Contact")
        #expect(created["Id"]?.stringValue.map(MobileSync.isLocalID) == true)
        #expect(created["attributes"]?["type"] == "Contact")
        #expect(created["__local__"] == true && created["__locally_created__"] == true && created["__locally_updated__"] == false)
        let ada = try id(world, "Ada Lovelace"), alan = try id(world, "Alan Turing")
        let updated = try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["Title": "Countess"])
        #expect(updated["Title"] == "Countess" && updated["__local__"] == true && updated["__locally_updated__"] == true)
        #expect(updated["__locally_created__"] == false)
        let deleted = try world.store.deleteLocally(inSoup: "contacts", recordId: alan)
        #expect(deleted["__locally_deleted__"] == true && deleted["LastName"] == "Turing", "a local delete keeps the entry until synced up")
        #expect(try world.store.locallyModified(soup: "contacts").compactMap { $0["LastName"]?.stringValue } == ["Lovelace", "Turing", "Noether"])
        let unknown = #expect(throws: StoreError.self) { try world.store.updateLocally(inSoup: "contacts", recordId: "003000000000999AAA", fields: [:]) }
        #expect(unknown?.code == .unknownEntry)
    }

    @Test(arguments: kinds)
    func createsUpdatesAndDeletesReachTheServerAndTheSoupIsCleaned(_ kind: String?) async throws {
        let world = try await synced(kind)
        defer { world.remove() }
        let acme = try #require(world.server("Account", named: "Acme Corporation")?["Id"]?.stringValue)
        let noether = try world.store.createLocally(["FirstName": "Emmy", "LastName": "Noether", "AccountId": .string(acme)],
                                                    inSoup: "contacts", objectType: "Contact")
        let ghost = try world.store.createLocally(["LastName": "Never sent"], inSoup: "contacts", objectType: "Contact")
        try world.store.deleteLocally(inSoup: "contacts", soupEntryId: try #require(ghost["_soupEntryId"]?.intValue))
        let ada = try id(world, "Ada Lovelace"), alan = try id(world, "Alan Turing")
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["Title": "Countess"])
        try world.store.deleteLocally(inSoup: "contacts", recordId: alan)
        let log = UpdateLog()
        let result = try await world.syncs.syncUp(named: "syncUpContacts", onUpdate: log.block)
        #expect(result.failed.isEmpty)
        #expect(result.state.status == .done && result.state.totalSize == 4)
        #expect(log.all.last?.status == .done)
        #expect(result.updated == [ada])
        #expect(Set(result.deleted).count == 2 && result.deleted.contains(alan))
        let newID = try #require(result.created.first)
        #expect(!MobileSync.isLocalID(newID) && newID.hasPrefix("003"))
        let server = try #require(world.org.record(withID: newID))
        #expect(server["Name"] == "Emmy Noether" && server["AccountId"]?.stringValue == acme)
        #expect(world.org.record(withID: ada)?["Title"] == "Countess")
        #expect(world.org.record(withID: alan) == nil)
        #expect(try world.store.locallyModified(soup: "contacts").isEmpty)
        let stored = try #require(try world.entry("contacts", id: newID), "the server id is written back into the entry")
        #expect(stored["_soupEntryId"] == noether["_soupEntryId"] && stored["__local__"] == false && stored["__locally_created__"] == false)
        #expect(try world.entry("contacts", id: alan) == nil)
        #expect(try world.entries("contacts").count == 5)
        #expect(!world.org.records(of: "Contact").contains { $0["LastName"] == "Never sent" }, "created and deleted locally: never sent")
    }

    @Test(arguments: kinds)
    func refusedRecordsKeepTheServersMessageAndAreSentAgainNextTime(_ kind: String?) async throws {
        let world = try await synced(kind)
        defer { world.remove() }
        let ada = try id(world, "Ada Lovelace"), grace = try id(world, "Grace Hopper")
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["LastName": ""])
        try world.store.updateLocally(inSoup: "contacts", recordId: grace, fields: ["Title": "Rear Admiral"])
        let first = try await world.syncs.syncUp(named: "syncUpContacts")
        #expect(first.state.status == .done)
        #expect(first.updated == [grace])
        let failure = try #require(first.failed.first)
        #expect(first.failed.count == 1)
        #expect(failure.recordId == ada && failure.action == .update)
        #expect(failure.message == "Required fields are missing: [LastName]")
        let kept = try #require(try world.entry("contacts", id: ada))
        #expect(kept["__local__"] == true && kept["__locally_updated__"] == true)
        let lastError = try #require(kept["__last_error__"]?.stringValue)
        #expect(lastError.contains("REQUIRED_FIELD_MISSING") && lastError.contains("Required fields are missing: [LastName]"))
        #expect(world.org.record(withID: ada)?["LastName"] == "Lovelace")

        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["LastName": "King"])
        let second = try await world.syncs.syncUp(named: "syncUpContacts")
        #expect(second.failed.isEmpty && second.updated == [ada] && second.state.totalSize == 1)
        #expect(world.org.record(withID: ada)?["LastName"] == "King")
        #expect(try world.entry("contacts", id: ada)?["__last_error__"] == nil)
    }

    @Test(arguments: kinds)
    func leaveIfChangedDoesNotOverwriteARecordChangedOnTheServer(_ kind: String?) async throws {
        let world = try await synced(kind)
        defer { world.remove() }
        let ada = try id(world, "Ada Lovelace"), grace = try id(world, "Grace Hopper")
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["Title": "Countess (local)"])
        try world.store.updateLocally(inSoup: "contacts", recordId: grace, fields: ["Title": "Admiral (local)"])
        world.time.advance(by: .seconds(60))
        try world.org.update(recordID: ada, fields: ["Title": "Countess (server)"])
        let result = try await world.syncs.syncUp(named: "syncUpContactsIfUnchanged")
        #expect(result.updated == [grace])
        #expect(result.skipped == [try #require(try world.entry("contacts", id: ada)?["_soupEntryId"]?.intValue)])
        #expect(world.org.record(withID: ada)?["Title"] == "Countess (server)", "the server's change stays")
        #expect(world.org.record(withID: grace)?["Title"] == "Admiral (local)")
        #expect(try world.entry("contacts", id: ada)?["__local__"] == true, "left dirty for the app to resolve")

        let overwriting = try await world.syncs.syncUp(named: "syncUpContacts")
        #expect(overwriting.updated == [ada])
        #expect(world.org.record(withID: ada)?["Title"] == "Countess (local)", "OVERWRITE wins over the server's change")
    }

    @Test(arguments: kinds)
    func aRecordDeletedOnTheServerIsCreatedAgainUnderOverwriteOnly(_ kind: String?) async throws {
        let world = try await synced(kind)
        defer { world.remove() }
        let linus = try id(world, "Linus Torvalds")
        try world.store.updateLocally(inSoup: "contacts", recordId: linus, fields: ["Title": "Kernel"])
        try world.org.delete(recordID: linus)
        let leave = try await world.syncs.syncUp(named: "syncUpContactsIfUnchanged")
        #expect(leave.updated.isEmpty && leave.created.isEmpty && leave.failed.isEmpty)
        #expect(try world.entry("contacts", id: linus)?["__local__"] == true)
        let overwrite = try await world.syncs.syncUp(named: "syncUpContacts")
        let recreated = try #require(overwrite.created.first)
        #expect(recreated != linus)
        #expect(world.org.record(withID: recreated)?["Title"] == "Kernel")
        #expect(try world.entry("contacts", id: recreated)?["__local__"] == false)
    }

    @Test(arguments: kinds)
    func anOfflineSyncUpFailsAndChangesNothingUntilTheOrgIsBack(_ kind: String?) async throws {
        let world = try await synced(kind)
        defer { world.remove() }
        let ada = try id(world, "Ada Lovelace")
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["Title": "Offline edit"])
        let before = try world.entries("contacts")
        world.org.faults.failAllRequests = true
        let error = await syncError { try await world.syncs.syncUp(named: "syncUpContacts") }
        #expect(error?.code == .serverFailed && error?.sync == "syncUpContacts")
        guard case .network? = error?.restError else { Issue.record("expected no answer: \(String(describing: error))"); return }
        #expect(try world.entries("contacts") == before, "nothing marked, no last error")
        let failed = try #require(try world.syncs.syncStatus(forName: "syncUpContacts"))
        #expect(failed.status == .failed && failed.error.contains("syncUpContacts"))
        world.org.faults.failAllRequests = false
        let result = try await world.syncs.syncUp(named: "syncUpContacts")
        #expect(result.updated == [ada] && result.state.status == .done && result.state.error.isEmpty)
        #expect(world.org.record(withID: ada)?["Title"] == "Offline edit")
    }

    @Test func batchesGoThroughCompositeTwentyFiveAtATimeAndCollectionsTwoHundred() async throws {
        for (kind, expected) in [("SFBatchSyncUpTarget", ["POST /services/data/v62.0/composite", "POST /services/data/v62.0/composite"]),
                                 ("SFCollectionSyncUpTarget", ["POST /services/data/v62.0/composite/sobjects", "POST /services/data/v62.0/composite/sobjects"])] {
            let world = try await synced(kind)
            defer { world.remove() }
            let count = kind == "SFBatchSyncUpTarget" ? 30 : 250
            for number in 0..<count {
                try world.store.createLocally(["LastName": .string("Bulk \(number)")], inSoup: "contacts", objectType: "Contact")
            }
            let mark = world.org.requestLog.count
            let result = try await world.syncs.syncUp(named: "syncUpContacts")
            #expect(result.created.count == count && result.failed.isEmpty)
            #expect(world.requests(since: mark) == expected, "\(kind)")
            #expect(world.server("Contact").count == 5 + count)
        }
    }

    /// Each kind of target upserts on the external id, the field in its create field list too:
    /// Salesforce refuses it in a single upsert's body ("Do not specify Id or an external ID field
    /// in the request body", REST API Developer Guide, Insert or Update (Upsert) a Record Using an
    /// External ID), so it is sent in the URL only; an sObject Collections upsert needs it in each
    /// record (sObject Collections: Upsert).
    @Test(arguments: [SyncUpKind.collection, .batch, .singleRecord])
    func aSyncUpWithAnExternalIdUpsertsOnIt(_ kind: SyncUpKind) async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        let target = SyncUpTarget.target(kind, createFieldlist: ["Name", "External_Id__c"], externalIdFieldName: "External_Id__c")
        let existing = try #require(world.server("Account", named: "Globex")?["Id"]?.stringValue)
        try world.org.update(recordID: existing, fields: ["External_Id__c": "GLX"])
        try world.store.createLocally(["Name": "Globex (renamed)", "External_Id__c": "GLX"], inSoup: "accounts", objectType: "Account")
        try world.store.createLocally(["Name": "Initech", "External_Id__c": "INI"], inSoup: "accounts", objectType: "Account")
        let result = try await world.syncs.syncUp(target: target, options: .forSyncUp(fieldlist: ["Name"]), soupName: "accounts")
        #expect(result.failed.isEmpty && result.created.count == 2)
        #expect(result.created.contains(existing), "matched on the external id: the existing record")
        #expect(world.org.record(withID: existing)?["Name"] == "Globex (renamed)")
        #expect(world.server("Account").count == 3)
    }
}
