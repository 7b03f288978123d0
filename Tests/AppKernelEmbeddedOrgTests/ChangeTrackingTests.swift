import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

struct DateTimeSOQLTests {
    @Test func comparisonsInListsAndSeveralOrderingsParse() throws {
        let query = try SOQLQuery("SELECT Id FROM Account WHERE LastModifiedDate > 2026-11-24T10:00:00.000+0000 and Id IN ('001A', '001B') "
                                  + "AND Name NOT IN ('x') AND NumberOfEmployees <= 5 ORDER BY LastModifiedDate DESC, Name")
        #expect(query.conditions == [
            SOQLQuery.Condition(field: "LastModifiedDate", .greater, value: "2026-11-24T10:00:00.000+0000", isDateTime: true),
            SOQLQuery.Condition(field: "Id", .in, value: ["001A", "001B"]),
            SOQLQuery.Condition(field: "Name", .notIn, value: ["x"]),
            SOQLQuery.Condition(field: "NumberOfEmployees", .lessOrEqual, value: 5),
        ])
        #expect(query.orderings == [SOQLQuery.Ordering(field: "LastModifiedDate", ascending: false), SOQLQuery.Ordering(field: "Name", ascending: true)])
    }

    @Test(arguments: ["SELECT Id FROM Account WHERE Name = 'a' OR Name = 'b'", "SELECT Id FROM Account WHERE Id IN ()",
                      "SELECT Id FROM Account WHERE Id IN ('a'", "SELECT Id FROM Account WHERE Id NOT = 'a'",
                      "SELECT Id FROM Account WHERE LastModifiedDate > 2026-11-24", "SELECT Id FROM Account WHERE CreatedDate > LAST_N_DAYS:3",
                      "SELECT Id FROM Account ORDER BY Name,"])
    func outsideTheSubsetStaysMalformed(_ text: String) {
        #expect(throws: SOQLError.self) { _ = try SOQLQuery(text) }
    }
}

/// The audit dates, the SOQL a sync needs, and what a test does on the server.
@MainActor
struct ChangeTrackingTests {
    static let start = SalesforceDateTime.date(fromMillis: 1_795_514_400_000)   // 2026-11-24T10:00:00Z
    let time = EmbeddedOrg.RecordClock(start: start, step: .seconds(1))

    func org(batch: Int = 2000) -> EmbeddedOrg { EmbeddedOrg.sample(queryBatchSize: batch, recordClock: time) }

    func records(_ client: RestClient, _ soql: String) async throws -> [JSONValue] {
        try await client.send(request: client.request(forQuery: soql, apiVersion: nil)).asJSON()["records"]?.arrayValue ?? []
    }

    @Test func everyWriteStampsTheAuditDatesFromTheRecordClock() async throws {
        let org = org()
        let client = try await org.loggedInClient()
        let acme = try #require(org.records(of: "Account").first)
        #expect(acme["CreatedDate"] == "2026-11-24T10:00:00.000+0000", "the first seeded record, at the clock's start")
        #expect(acme["LastModifiedDate"] == acme["CreatedDate"])
        #expect(acme["SystemModstamp"] == acme["CreatedDate"])
        let id = try #require(acme["Id"]?.stringValue)
        let before = time.current
        _ = try await client.send(request: client.requestForUpdate(withObjectType: "Account", objectId: id, fields: ["Industry": "Energy"], apiVersion: nil))
        let updated = try #require(org.record(withID: id))
        #expect(updated["LastModifiedDate"]?.stringValue == SalesforceDateTime.string(from: before))
        #expect(updated["SystemModstamp"] == updated["LastModifiedDate"])
        #expect(updated["CreatedDate"] == acme["CreatedDate"])
        let read = try await client.send(request: client.requestForRetrieve(withObjectType: "Account", objectId: id, fieldList: nil, apiVersion: nil)).asJSON()
        #expect(read["LastModifiedDate"] == updated["LastModifiedDate"], "retrieve returns them")
        #expect(time.current == before.addingTimeInterval(1), "a read takes no timestamp; the update took one")

        let refused = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForUpdate(withObjectType: "Account", objectId: id,
                                                                       fields: ["LastModifiedDate": "2030-01-01T00:00:00.000+0000"], apiVersion: nil))
        }
        #expect(refused?.serverErrors.first?.errorCode == "INVALID_FIELD_FOR_INSERT_UPDATE", "the audit dates are the server's")
    }

    @Test func lastModifiedDateFiltersInEveryLiteralFormAndOrders() async throws {
        let org = org()
        let client = try await org.loggedInClient()
        let all = try await records(client, "SELECT Id, Name, LastModifiedDate FROM Contact ORDER BY LastModifiedDate")
        #expect(all.count == 5)
        let ada = try #require(all.first { $0["Name"] == "Ada Lovelace" }?["Id"]?.stringValue)
        let stamps = all.compactMap { $0["LastModifiedDate"]?.stringValue }
        let seen = try #require(stamps.max())
        time.advance(by: .seconds(60))
        try org.update(recordID: ada, fields: ["Title": "Countess"])
        for literal in [seen, String(seen.dropLast(9)) + "Z", String(seen.prefix(19)) + "+00:00"] {
            let changed = try await records(client, "SELECT Id, Name FROM Contact WHERE LastModifiedDate > \(literal)")
            #expect(changed.map { $0["Name"] } == ["Ada Lovelace"], "\(literal)")
        }
        let unchanged = try await records(client, "select Id from Contact where LastModifiedDate <= \(seen) order by Name desc")
        #expect(unchanged.count == 4)
        let newestFirst = try await records(client, "SELECT Name FROM Contact ORDER BY LastModifiedDate DESC, Name ASC LIMIT 2")
        #expect(newestFirst.map { $0["Name"] } == ["Ada Lovelace", "Margaret Hamilton"])
        let named = try await records(client, "SELECT Name FROM Contact WHERE Id IN ('\(ada)', '003000000000000AAA') AND Name != 'x'")
        #expect(named.map { $0["Name"] } == ["Ada Lovelace"])
        let others = try await records(client, "SELECT Name FROM Contact WHERE Id NOT IN ('\(ada)') ORDER BY Name")
        #expect(others.count == 4)
        #expect(try await records(client, "SELECT Name FROM Contact WHERE Id IN ('')").isEmpty)
        let children = try await records(client, "SELECT Name, (SELECT Subject FROM Cases WHERE LastModifiedDate > \(seen)) FROM Contact WHERE Name = 'Ada Lovelace'")
        #expect(children.first?["Cases"] == .null, "subqueries filter on dates too")
    }

    @Test(arguments: [("SELECT Id FROM Contact WHERE LastModifiedDate > '2026-11-24T10:00:00Z'", "must be of type dateTime and should not be enclosed in quotes"),
                      ("SELECT Id FROM Contact WHERE Name > 2026-11-24T10:00:00Z", "must be of type string and should be enclosed in quotes")])
    func aLiteralOfTheWrongKindIsAnInvalidFieldPointingAtIt(_ soql: String, _ message: String) async throws {
        let client = try await org().loggedInClient()
        let error = await #expect(throws: RestClientError.self) { _ = try await records(client, soql) }
        #expect(error?.serverErrors.first?.errorCode == "INVALID_FIELD")
        #expect(error?.serverErrors.first?.message.contains(message) == true)
        #expect(error?.serverErrors.first?.message.contains("ERROR at Row:1:Column:30") == true)
    }

    @Test func aRequestedBatchSizeSetsThePageNeverPastTheOrgs() async throws {
        let org = EmbeddedOrg.sample(recordClock: time)
        for number in 0..<450 { org.insert("Account", ["Name": .string("Bulk \(number)")], orgID: "00DACME000000001") }
        let client = try await org.loggedInClient()
        var page = try await client.send(request: client.request(forQuery: "SELECT Id FROM Account", apiVersion: nil, batchSize: 200)).asJSON()
        var sizes = [page["records"]?.arrayValue?.count ?? 0]
        while let next = page["nextRecordsUrl"]?.stringValue {
            page = try await client.send(request: client.request(method: .get, path: next)).asJSON()
            sizes.append(page["records"]?.arrayValue?.count ?? 0)
        }
        #expect(sizes == [200, 200, 52], "452 accounts in Acme")
        let small = EmbeddedOrg.sample(queryBatchSize: 2, recordClock: time)
        let smallClient = try await small.loggedInClient()
        let first = try await smallClient.send(request: smallClient.request(forQuery: "SELECT Id FROM Contact", apiVersion: nil, batchSize: 2000)).asJSON()
        #expect(first["records"]?.arrayValue?.count == 2, "the org's own page size caps the request's")
        let header = smallClient.request(forQuery: "SELECT Id FROM Contact", apiVersion: nil, batchSize: 500).headers["Sforce-Query-Options"]
        #expect(header == "batchSize=500")
    }

    @Test func serverSideEditsAreValidatedAndLeaveNothingHalfDone() async throws {
        let org = org()
        let acme = try #require(org.records(of: "Account").first { $0["Name"] == "Acme Corporation" }?["Id"]?.stringValue)
        let before = org.records(of: "Account")
        #expect(throws: EmbeddedOrg.EditError(code: "INVALID_FIELD", message: "No such column 'Salary' on sobject of type Account")) {
            try org.update(recordID: acme, fields: ["Salary": 1])
        }
        #expect(throws: EmbeddedOrg.EditError.self) { try org.update(recordID: acme, fields: ["Name": ""]) }
        #expect(throws: EmbeddedOrg.EditError.self) { try org.update(recordID: "001000000000999AAA", fields: ["Name": "x"]) }
        let refused = #expect(throws: EmbeddedOrg.EditError.self) { try org.delete(recordID: acme) }
        #expect(refused?.code == "DELETE_FAILED", "Acme has contacts")
        #expect(org.records(of: "Account") == before)
        #expect(org.records(of: "Account", orgID: "00DBETA000000002").map { $0["Name"] } == ["Beta Labs"])

        let client = try await org.loggedInClient()
        let created = try await client.send(request: client.requestForCreate(withObjectType: "Account", fields: ["Name": "Doomed"], apiVersion: nil)).asJSON()
        let doomed = try #require(created["id"]?.stringValue)
        try org.delete(recordID: doomed)
        #expect(org.record(withID: doomed) == nil)
        let bin = try await client.send(request: client.requestForQueryAll("SELECT Id, IsDeleted FROM Account WHERE Name = 'Doomed'", apiVersion: nil)).asJSON()
        #expect(bin["records"]?[0]?["IsDeleted"] == true, "deleted on the server: in the recycle bin")
        let gone = #expect(throws: EmbeddedOrg.EditError.self) { try org.delete(recordID: doomed) }
        #expect(gone?.code == "ENTITY_IS_DELETED")
    }

    @Test func anOfflineOrgAnswersNothingUntilItIsBack() async throws {
        let org = org()
        let client = try await org.loggedInClient()
        org.faults.failAllRequests = true
        #expect(org.faults.failAllRequests)
        let error = await #expect(throws: RestClientError.self) { _ = try await records(client, "SELECT Id FROM Account") }
        guard case .network? = error else { Issue.record("expected no answer, got \(String(describing: error))"); return }
        await #expect(throws: (any Error).self) { _ = try await org.loggedInClient() }
        let viaURLSession = RestClient(credentials: await client.credentials, transport: org.urlSessionTransport())
        let lost = await #expect(throws: RestClientError.self) { _ = try await records(viaURLSession, "SELECT Id FROM Account") }
        guard case .network? = lost else { Issue.record("expected no answer through URLSession, got \(String(describing: lost))"); return }
        org.faults = EmbeddedOrg.Faults()
        #expect(try await records(client, "SELECT Id FROM Account").count == 2)
    }
}
