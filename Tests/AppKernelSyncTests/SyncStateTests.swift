import AppKernelCore
import AppKernelREST
import AppKernelStore
@testable import AppKernelSync
import Foundation
import Testing

/// Sync states and targets in the Mobile SDK's JSON form, and the SOQL a SOQL target runs.
struct SyncStateTests {
    static let everyTarget: [SyncState.Target] = [
        .down(.soql("SELECT Name FROM Account WHERE Industry = 'Energy'", maxBatchSize: 500)),
        .down(.sosl("FIND {Acme} RETURNING Account(Id, Name)")),
        .down(.mru(objectType: "Account", fieldlist: ["Id", "Name"])),
        .down(.refresh(soupName: "accounts", objectType: "Account", fieldlist: ["Id", "Name"], countIdsPerSoql: 100)),
        .down(.parentChildren(parent: RelatedObjectInfo(sobjectType: "Account", soupName: "accounts"), parentFieldlist: ["Name"],
                              parentSoqlFilter: "Name != 'x'", children: {
                                  var children = RelatedObjectInfo(sobjectType: "Contact", soupName: "contacts")
                                  children.sobjectTypePlural = "Contacts"
                                  children.parentIdFieldName = "AccountId"
                                  return children
                              }(), childrenFieldlist: ["LastName"], relationshipType: .masterDetail)),
        .down(.layout(objectAPIName: "Account", formFactor: "Large", layoutType: "Full", mode: "Edit", recordTypeId: "012000000000000AAA")),
        .down(.metadata(objectType: "Account")),
        .up(SyncUpTarget()),
        .up(.target(.batch, createFieldlist: ["Name"], updateFieldlist: ["Name", "Industry"], externalIdFieldName: "External_Id__c", maxBatchSize: 10)),
        .up(.target(.singleRecord, createFieldlist: ["Name"])),
        .up({
            var details = SyncTargetDetails()
            details.parent = RelatedObjectInfo(sobjectType: "Account", soupName: "accounts")
            var children = RelatedObjectInfo(sobjectType: "Contact", soupName: "contacts")
            children.sobjectTypePlural = "Contacts"
            children.parentIdFieldName = "AccountId"
            details.children = children
            details.relationshipType = .masterDetail
            details.childrenCreateFieldlist = ["LastName"]
            details.childrenUpdateFieldlist = ["LastName", "Title"]
            return SyncUpTarget(kind: .parentChildren, createFieldlist: ["Name"], updateFieldlist: ["Name"], details: details)
        }()),
    ]

    @Test(arguments: everyTarget)
    func everyTargetReadsBackFromItsJSONAsItWas(_ target: SyncState.Target) throws {
        let state = SyncState(id: 7, name: "sync", target: target, options: SyncOptions(fieldlist: ["Id", "Name"], mergeMode: .leaveIfChanged),
                              soupName: "accounts", status: .failed, progress: 40, totalSize: 5, maxTimeStamp: 1_795_514_400_000,
                              startTime: 1, endTime: 2, error: "boom")
        let read = try SyncState(json: try JSONValue(jsonData: state.json.jsonData()))
        #expect(read == state)
    }

    @Test func theSDKsKeysAndImplementationNamesAreWritten() {
        let down = SyncDownTarget.refresh(soupName: "accounts", objectType: "Account", fieldlist: ["Id"])
        #expect(down.json == ["type": "refresh", "iOSImpl": "SFRefreshSyncDownTarget", "idFieldName": "Id", "modificationDateFieldName": "LastModifiedDate",
                              "soupName": "accounts", "sobjectType": "Account", "fieldlist": ["Id"], "coundIdsPerSoql": 500])
        #expect(SyncUpTarget().json == ["type": "rest", "iOSImpl": "SFCollectionSyncUpTarget", "idFieldName": "Id",
                                        "modificationDateFieldName": "LastModifiedDate", "maxBatchSize": 200])
        #expect(SyncUpTarget.target(.batch, maxBatchSize: 100).maxBatchSize == 25, "clamped to what composite takes")
        #expect(SyncUpTarget.target(.singleRecord).json["maxBatchSize"] == nil)
        let state = SyncState(id: 3, name: "s", target: .down(.metadata(objectType: "Account")), options: .forSyncDown(), soupName: "metadata")
        #expect(state.json == ["_soupEntryId": 3, "name": "s", "type": "syncDown", "soupName": "metadata", "status": "NEW", "progress": 0,
                               "totalSize": -1, "maxTimeStamp": -1, "startTime": 0, "endTime": 0, "error": "",
                               "options": ["mergeMode": "OVERWRITE"],
                               "target": ["type": "metadata", "iOSImpl": "SFMetadataSyncDownTarget", "idFieldName": "Id",
                                          "modificationDateFieldName": "LastModifiedDate", "sobjectType": "Account"]])
    }

    @Test func aUsersyncsFileFromTheSDKsDocumentationLoads() throws {
        // The shape of the Mobile SDK developer guide's MobileSyncExplorer usersyncs.json.
        let text = """
        {"syncs": [
          {"syncName": "syncDownContacts", "syncType": "syncDown", "soupName": "contacts",
           "target": {"type": "soql", "query": "SELECT FirstName, LastName, Title, MobilePhone, Email, Department, HomePhone FROM Contact LIMIT 10000"},
           "options": {"mergeMode": "OVERWRITE"}},
          {"syncName": "syncUpContacts", "syncType": "syncUp", "soupName": "contacts",
           "target": {"createFieldlist": ["FirstName", "LastName", "Title", "MobilePhone", "Email", "Department", "HomePhone"]},
           "options": {"fieldlist": ["Id", "FirstName", "LastName", "Title", "MobilePhone", "Email", "Department", "HomePhone"],
                       "mergeMode": "LEAVE_IF_CHANGED"}}
        ]}
        """
        let specs = try SyncConfig.parseSyncs(Data(text.utf8), soupNames: ["contacts"])
        let down = try SyncDownTarget(spec: specs[0])
        #expect(down.query == "SELECT Id, LastModifiedDate, FirstName, LastName, Title, MobilePhone, Email, Department, HomePhone FROM Contact "
                + "ORDER BY LastModifiedDate LIMIT 10000")
        let up = try SyncUpTarget(spec: specs[1])
        #expect(up.kind == .collection && up.createFieldlist?.count == 7 && up.updateFieldlist == nil)
        #expect(SyncOptions(spec: specs[1]) == SyncOptions(fieldlist: specs[1].fieldlist, mergeMode: .leaveIfChanged))
        #expect(throws: SyncError.self) { _ = try SyncUpTarget(spec: specs[0]) }
    }

    @Test(arguments: [JSONValue.string("x"), ["type": "sideways", "soupName": "a", "target": [:]], ["type": "syncDown", "soupName": "a"],
                      ["type": "syncDown", "soupName": "a", "name": "broken", "target": ["type": "soql"], "options": ["mergeMode": "OVERWRITE"]]])
    func aStateThatCannotBeReadIsATypedError(_ json: JSONValue) {
        let error = #expect(throws: SyncError.self) { _ = try SyncState(json: json) }
        #expect(error?.code == .invalidSyncState)
    }

    // MARK: SOQL

    @Test func theMutatorFindsTopLevelClausesOnly() {
        let mutator = SOQLMutator("select Id, (select Id from Contacts where Name = 'order by') from Account where Name = 'a where b' order by Name limit 5")
        #expect(mutator.selectedFields == ["Id"])
        #expect(mutator.isSelectingField("id"))
        #expect(mutator.clauses["where"] == "Name = 'a where b'")
        #expect(mutator.isOrderingBy("Name"))
        #expect(mutator.clauses["limit"] == "5")
        var resync = SOQLMutator("SELECT Id FROM Account WHERE Name = 'a' OR Name = 'b'")
        resync.addWherePredicates("LastModifiedDate > 2026-11-24T10:00:00.000+0000")
        #expect(resync.soql == "SELECT Id FROM Account WHERE LastModifiedDate > 2026-11-24T10:00:00.000+0000 AND (Name = 'a' OR Name = 'b')")
        var plain = SOQLMutator("SELECT Id FROM Account WHERE Industry = 'Energy' ORDER BY Name")
        plain.addWherePredicates("LastModifiedDate > 2026-11-24T10:00:00.000+0000")
        #expect(plain.soql == "SELECT Id FROM Account WHERE LastModifiedDate > 2026-11-24T10:00:00.000+0000 AND Industry = 'Energy' ORDER BY Name")
    }

    @Test func aResyncAddsTheModificationDateFilterAndKnowsWhetherPagesAreSorted() {
        let target = SyncDownTarget.soql("SELECT Id, Name FROM Account ORDER BY Name")
        #expect(target.query == "SELECT LastModifiedDate, Id, Name FROM Account ORDER BY Name")
        #expect(!target.isSortedByLatestModification)
        #expect(target.soqlToRun(maxTimeStamp: -1) == target.query)
        #expect(target.soqlToRun(maxTimeStamp: 1_795_514_400_000)
                == "SELECT LastModifiedDate, Id, Name FROM Account WHERE LastModifiedDate > 2026-11-24T10:00:00.000+0000 ORDER BY Name")
        #expect(SyncDownTarget.soql("SELECT Id FROM Account").isSortedByLatestModification)
        #expect(SyncDownTarget.soql("SELECT Id, SystemModstamp FROM Account").query == "SELECT LastModifiedDate, Id, SystemModstamp FROM Account ORDER BY LastModifiedDate")
    }
}
