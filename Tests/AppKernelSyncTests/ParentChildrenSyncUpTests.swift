import AppKernelEmbeddedOrg
import AppKernelCore
import AppKernelREST
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// Parent-children sync up (`SFParentChildrenSyncUpTarget`): a parent and its children in one
/// composite request, the children of a created parent pointing at it by reference.
struct ParentChildrenSyncUpTests {
    static func syncsJSON(mergeMode: String) -> String {
        """
        {"syncs": [
          {"syncName": "accountsWithContacts", "syncType": "syncDown", "soupName": "accounts",
           "target": {"type": "parent_children",
                      "parent": {"idFieldName": "Id", "sobjectType": "Account", "modificationDateFieldName": "LastModifiedDate", "soupName": "accounts"},
                      "parentFieldlist": ["Id", "Name", "Industry"],
                      "children": {"parentIdFieldName": "AccountId", "idFieldName": "Id", "sobjectType": "Contact",
                                   "modificationDateFieldName": "LastModifiedDate", "soupName": "contacts", "sobjectTypePlural": "Contacts"},
                      "childrenFieldlist": ["Id", "LastName", "AccountId"], "relationshipType": "LOOKUP", "parentSoqlFilter": ""},
           "options": {"mergeMode": "OVERWRITE"}},
          {"syncName": "syncUpAccountsWithContacts", "syncType": "syncUp", "soupName": "accounts",
           "target": {"iOSImpl": "SFParentChildrenSyncUpTarget",
                      "parent": {"idFieldName": "Id", "sobjectType": "Account", "modificationDateFieldName": "LastModifiedDate", "soupName": "accounts"},
                      "createFieldlist": ["Name", "Industry"], "updateFieldlist": ["Name", "Industry"],
                      "children": {"parentIdFieldName": "AccountId", "idFieldName": "Id", "sobjectType": "Contact",
                                   "modificationDateFieldName": "LastModifiedDate", "soupName": "contacts", "sobjectTypePlural": "Contacts"},
                      "childrenCreateFieldlist": ["LastName"], "childrenUpdateFieldlist": ["LastName"], "relationshipType": "LOOKUP"},
           "options": {"mergeMode": "\(mergeMode)"}}
        ]}
        """
    }

    func synced(_ mergeMode: String = "OVERWRITE") async throws -> SyncFixture {
        let world = try await SyncFixture.make(syncsJSON: Self.syncsJSON(mergeMode: mergeMode))
        try await world.syncs.reSync(named: "accountsWithContacts")
        return world
    }

    @Test func aCreatedParentAndItsChildrenGoInOneCompositeAndGetTheirServerIds() async throws {
        let world = try await synced()
        defer { world.remove() }
        let initech = try world.store.createLocally(["Name": "Initech", "Industry": "Software"], inSoup: "accounts", objectType: "Account")
        let localId = try #require(initech["Id"]?.stringValue)
        for name in ["Gibbons", "Waddams"] {
            try world.store.createLocally(["LastName": .string(name), "AccountId": .string(localId)], inSoup: "contacts", objectType: "Contact")
        }
        let ada = try #require(world.server("Contact", named: "Ada Lovelace")?["Id"]?.stringValue)
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["LastName": "King"])
        let mark = world.org.requestLog.count
        let result = try await world.syncs.syncUp(named: "syncUpAccountsWithContacts")
        #expect(result.failed.isEmpty && result.state.status == .done)
        #expect(result.state.totalSize == 2, "Acme (a changed child) and Initech")
        #expect(world.requests(since: mark) == ["POST /services/data/v62.0/composite", "POST /services/data/v62.0/composite"])
        #expect(result.updated == [ada])
        let serverInitech = try #require(world.server("Account", named: "Initech")?["Id"]?.stringValue)
        #expect(result.created.first == serverInitech && result.created.count == 3)
        let children = world.server("Contact").filter { $0["AccountId"]?.stringValue == serverInitech }
        #expect(children.compactMap { $0["LastName"]?.stringValue }.sorted() == ["Gibbons", "Waddams"])
        #expect(world.org.record(withID: ada)?["LastName"] == "King")
        let localChildren = try world.entries("contacts").filter { $0["AccountId"]?.stringValue == serverInitech }
        #expect(localChildren.count == 2, "the children's parent id is the server's now")
        #expect(localChildren.allSatisfy { !MobileSync.isLocalID($0["Id"]?.stringValue ?? "local_") && $0["__local__"] == false })
        #expect(try world.entry("accounts", id: serverInitech)?["__local__"] == false)
        #expect(try world.store.locallyModified(soup: "accounts").isEmpty && world.store.locallyModified(soup: "contacts").isEmpty)
    }

    @Test func leaveIfChangedLeavesATreeWhoseChildTheServerChanged() async throws {
        let world = try await synced("LEAVE_IF_CHANGED")
        defer { world.remove() }
        let ada = try #require(world.server("Contact", named: "Ada Lovelace")?["Id"]?.stringValue)
        let grace = try #require(world.server("Contact", named: "Grace Hopper")?["Id"]?.stringValue)
        try world.store.updateLocally(inSoup: "contacts", recordId: ada, fields: ["LastName": "King (local)"])
        try world.store.updateLocally(inSoup: "contacts", recordId: grace, fields: ["LastName": "Hopper (local)"])
        world.time.advance(by: .seconds(60))
        try world.org.update(recordID: ada, fields: ["LastName": "King (server)"])
        let result = try await world.syncs.syncUp(named: "syncUpAccountsWithContacts")
        #expect(result.skipped.count == 1, "Acme's tree: Ada changed on the server")
        #expect(result.updated == [grace], "Globex's tree goes")
        #expect(world.org.record(withID: ada)?["LastName"] == "King (server)")
        #expect(world.org.record(withID: grace)?["LastName"] == "Hopper (local)")
    }

    @Test func aParentTheServerRefusesToDeleteKeepsItsError() async throws {
        let world = try await synced()
        defer { world.remove() }
        let globex = try #require(world.server("Account", named: "Globex")?["Id"]?.stringValue)
        try world.store.deleteLocally(inSoup: "accounts", recordId: globex)
        let result = try await world.syncs.syncUp(named: "syncUpAccountsWithContacts")
        #expect(result.failed.map(\.action) == [.delete])
        #expect(result.failed.first?.lastError.contains("DELETE_FAILED") == true, "Globex has contacts (and they have cases)")
        #expect(try world.entry("accounts", id: globex)?["__locally_deleted__"] == true)
        #expect(world.org.record(withID: globex) != nil)
    }
}
