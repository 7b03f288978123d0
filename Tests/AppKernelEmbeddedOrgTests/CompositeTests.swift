import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

/// `composite`, sObject collections, recent items and the UI API layout: what MobileSync's batch,
/// collection, MRU and layout targets call, in the documented shapes (`Fixtures/shapes`).
@MainActor
struct CompositeTests {
    let org = EmbeddedOrg.sample(recordClock: EmbeddedOrg.RecordClock(start: SalesforceDateTime.date(fromMillis: 1_795_514_400_000)))

    func json(_ client: RestClient, _ request: RestRequest) async throws -> JSONValue {
        try await client.send(request: request).asJSON()
    }

    // MARK: Composite

    @Test func subrequestsRunInOrderAndReferToEarlierResults() async throws {
        let client = try await org.loggedInClient()
        let requests = [client.requestForCreate(withObjectType: "Account", fields: ["Name": "Initech"], apiVersion: nil),
                        client.requestForCreate(withObjectType: "Contact", fields: ["LastName": "Waddams", "AccountId": "@{newAccount.id}"], apiVersion: nil),
                        client.requestForRetrieve(withObjectType: "Account", objectId: "@{newAccount.id}", fieldList: ["Name"], apiVersion: nil),
                        client.request(forQuery: "SELECT Id, Account.Name FROM Contact WHERE LastName = 'Waddams'", apiVersion: nil)]
        let request = client.compositeRequest(requests, refIds: ["newAccount", "newContact", "readBack", "query"], allOrNone: true, apiVersion: nil)
        #expect(request.path == "/services/data/v62.0/composite")
        let body = try JSONValue(jsonData: try #require(request.body))
        #expect(body["compositeRequest"]?[1]?["body"]?["AccountId"] == "@{newAccount.id}")
        #expect(body["compositeRequest"]?[2]?["url"] == "/services/data/v62.0/sobjects/Account/%40%7BnewAccount.id%7D?fields=Name",
                "a reference in a path segment is percent-encoded by the builder; the org decodes it")
        let answer = try await json(client, request)
        let responses = try #require(answer["compositeResponse"]?.arrayValue)
        #expect(DocumentedShape.mismatches(["compositeResponse": .array(Array(responses.prefix(3)))], try DocumentedShape.named("composite")) == [],
                "creates and a retrieve (the query's body is a query result)")
        #expect(responses.map { $0["httpStatusCode"] } == [201, 201, 200, 200])
        #expect(responses.map { $0["referenceId"] } == ["newAccount", "newContact", "readBack", "query"])
        let id = try #require(responses[0]["body"]?["id"]?.stringValue)
        #expect(responses[0]["httpHeaders"]?["Location"]?.stringValue == "/services/data/v62.0/sobjects/Account/\(id)")
        #expect(responses[2]["body"]?["Name"] == "Initech")
        #expect(responses[3]["body"]?["records"]?[0]?["Account"]?["Name"] == "Initech")
        #expect(org.requestLog.filter { $0.hasSuffix("/composite") }.count == 1)
    }

    @Test func allOrNoneRollsEverythingBackAndHaltsTheRest() async throws {
        let client = try await org.loggedInClient()
        let before = org.records(of: "Account")
        let requests = [client.requestForCreate(withObjectType: "Account", fields: ["Name": "Initech"], apiVersion: nil),
                        client.requestForCreate(withObjectType: "Account", fields: ["Industry": "Energy"], apiVersion: nil),   // no Name
                        client.requestForCreate(withObjectType: "Account", fields: ["Name": "Hooli"], apiVersion: nil)]
        let answer = try await json(client, client.compositeRequest(requests, refIds: ["a", "b", "c"], allOrNone: true, apiVersion: nil))
        #expect(DocumentedShape.mismatches(answer, try DocumentedShape.named("composite")) == [])
        let responses = try #require(answer["compositeResponse"]?.arrayValue)
        #expect(responses.map { $0["httpStatusCode"] } == [400, 400, 400])
        #expect(responses.map { $0["body"]?[0]?["errorCode"] } == ["PROCESSING_HALTED", "REQUIRED_FIELD_MISSING", "PROCESSING_HALTED"])
        #expect(org.records(of: "Account") == before, "the first create was rolled back")

        let partial = try await json(client, client.compositeRequest(
            requests + [client.requestForUpdate(withObjectType: "Account", objectId: "@{b.id}", fields: ["Name": "x"], apiVersion: nil)],
            refIds: ["a", "b", "c", "d"], allOrNone: false, apiVersion: nil))
        let results = try #require(partial["compositeResponse"]?.arrayValue)
        #expect(results.map { $0["httpStatusCode"] } == [201, 400, 201, 400])
        #expect(results[3]["body"]?[0]?["errorCode"] == "PROCESSING_HALTED", "it refers to a subrequest that failed")
        #expect(results[3]["body"]?[0]?["message"]?.stringValue?.contains("@{b.id}") == true)
        #expect(org.records(of: "Account").count == before.count + 2)
    }

    @Test(arguments: [(#"{"compositeRequest": []}"#, "INVALID_INPUT"), (#"[]"#, "JSON_PARSER_ERROR"),
                      (#"{"compositeRequest": [{"method": "GET", "url": "/services/data/v62.0/limits"}]}"#, "INVALID_INPUT"),
                      (#"{"compositeRequest": [{"method": "GET", "url": "/services/data/v62.0/limits", "referenceId": "a"}, {"method": "GET", "url": "/services/data/v62.0/limits", "referenceId": "a"}]}"#, "INVALID_INPUT")])
    func malformedCompositeRequestsAreRefusedWhole(_ body: String, _ code: String) async throws {
        let client = try await org.loggedInClient()
        var request = client.request(method: .post, path: "/services/data/v62.0/composite")
        request.body = Data(body.utf8)
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: request) }
        #expect(error?.statusCode == 400)
        #expect(error?.serverErrors.first?.errorCode == code)
    }

    @Test func moreThanTwentyFiveSubrequestsExceedTheLimit() async throws {
        let client = try await org.loggedInClient()
        let reads = (0..<26).map { _ in client.requestForLimits(apiVersion: nil) }
        let error = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.compositeRequest(reads, refIds: (0..<26).map { "r\($0)" }, allOrNone: false, apiVersion: nil))
        }
        #expect(error?.serverErrors.first?.errorCode == "LIMIT_EXCEEDED")
    }

    // MARK: Collections

    @Test func collectionsCreateUpdateUpsertAndDeleteWithPerRecordResults() async throws {
        let client = try await org.loggedInClient()
        let created = try await json(client, client.requestForCollectionCreate(allOrNone: false, records: [
            ["attributes": ["type": "Account"], "Name": "Initech"], ["attributes": ["type": "Account"], "Industry": "Energy"],
            ["attributes": ["type": "Contact"], "LastName": "Waddams"]], apiVersion: nil))
        #expect(DocumentedShape.mismatches(created, try DocumentedShape.named("collection-results")) == [])
        let results = try #require(created.arrayValue)
        #expect(results.map { $0["success"] } == [true, false, true])
        #expect(results[1]["errors"]?[0]?["statusCode"] == "REQUIRED_FIELD_MISSING")
        #expect(results[1]["id"] == nil, "a failed create has no id")
        let initech = try #require(results[0]["id"]?.stringValue), waddams = try #require(results[2]["id"]?.stringValue)

        let updated = try await json(client, client.requestForCollectionUpdate(allOrNone: false, records: [
            ["attributes": ["type": "Account"], "Id": .string(initech), "Industry": "Software"],
            ["attributes": ["type": "Account"], "id": "001000000000999AAA", "Name": "Ghost"],
            ["attributes": ["type": "Account"], "Id": "nonsense", "Name": "x"]], apiVersion: nil))
        #expect(updated.arrayValue?.map { $0["success"] } == [true, false, false])
        #expect(updated.arrayValue?.map { $0["errors"]?[0]?["statusCode"] ?? .null } == [.null, "INVALID_CROSS_REFERENCE_KEY", "MALFORMED_ID"])
        #expect(updated[1]?["id"] == "001000000000999AAA", "a failed update keeps its id")
        #expect(org.record(withID: initech)?["Industry"] == "Software")

        let upserted = try await json(client, client.requestForCollectionUpsert(allOrNone: false, objectType: "Account", externalIdField: "External_Id__c", records: [
            ["attributes": ["type": "Account"], "External_Id__c": "INI-1", "Name": "Initrode"],
            ["attributes": ["type": "Account"], "External_Id__c": "INI-1", "Name": "Initrode again"]], apiVersion: nil))
        #expect(upserted.arrayValue?.map { $0["created"] } == [true, false])
        #expect(upserted[0]?["id"] == upserted[1]?["id"])

        let deleted = try await json(client, client.requestForCollectionDelete(allOrNone: false, objectIds: [waddams, waddams, "001000000000999AAA"], apiVersion: nil))
        #expect(deleted.arrayValue?.map { $0["success"] } == [true, false, false])
        #expect(deleted.arrayValue?.map { $0["errors"]?[0]?["statusCode"] ?? .null } == [.null, "ENTITY_IS_DELETED", "INVALID_CROSS_REFERENCE_KEY"])
        #expect(deleted[0]?["id"]?.stringValue == waddams)

        let read = try await json(client, client.requestForCollectionRetrieve(withObjectType: "Account", objectIds: [initech, "001000000000999AAA"],
                                                                              fieldList: ["LastModifiedDate", "Name"], apiVersion: nil))
        #expect(read[0]?["Name"] == "Initech")
        #expect(read[0]?["LastModifiedDate"]?.stringValue?.hasSuffix("+0000") == true)
        #expect(read[0]?["attributes"]?["type"] == "Account")
        #expect(read[1] == .null, "an id that is not there is null")
    }

    @Test func allOrNoneCollectionsRollBackAndSaySo() async throws {
        let client = try await org.loggedInClient()
        let before = org.records(of: "Account")
        let answer = try await json(client, client.requestForCollectionCreate(allOrNone: true, records: [
            ["attributes": ["type": "Account"], "Name": "Initech"], ["attributes": ["type": "Account"], "Name": ""]], apiVersion: nil))
        #expect(answer.arrayValue?.map { $0["errors"]?[0]?["statusCode"] } == ["ALL_OR_NONE_OPERATION_ROLLED_BACK", "REQUIRED_FIELD_MISSING"])
        #expect(answer[0]?["id"] == nil)
        #expect(org.records(of: "Account") == before)
        let tooMany = (0...200).map { number -> [String: JSONValue] in ["attributes": ["type": "Account"], "Name": .string("A\(number)")] }
        let error = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForCollectionCreate(allOrNone: false, records: tooMany, apiVersion: nil))
        }
        #expect(error?.serverErrors.first?.errorCode == "EXCEEDED_ID_LIMIT")
    }

    // MARK: Recent items and layouts

    @Test func recentItemsAreTheRecordsUsedLast() async throws {
        let client = try await org.loggedInClient()
        let accounts = org.records(of: "Account").compactMap { $0["Id"]?.stringValue }
        _ = try await client.send(request: client.requestForRetrieve(withObjectType: "Account", objectId: accounts[0], fieldList: nil, apiVersion: nil))
        let info = try await json(client, client.requestForMetadata(withObjectType: "Account", apiVersion: nil))
        #expect(DocumentedShape.mismatches(info, try DocumentedShape.named("sobject-basic-info")) == [])
        #expect(info["recentItems"]?.arrayValue?.map { $0["Name"] } == ["Acme Corporation", "Globex"], "retrieved last, so first; Beta's is not Ada's")
        let recent = try await json(client, client.request(method: .get, path: "/services/data/v62.0/recent", queryParameters: [.init("limit", "2")]))
        #expect(recent.arrayValue?.map { $0["Id"]?.stringValue ?? "" } == [accounts[0], org.records(of: "Contact").last?["Id"]?.stringValue ?? ""],
                "Margaret, the last record seeded in Acme")
    }

    @Test(arguments: [("Full", "View", 2), ("Compact", "View", 1), ("Full", "Edit", 1)])
    func layoutsHaveTheUIAPIShape(_ layoutType: String, _ mode: String, _ sections: Int) async throws {
        let client = try await org.loggedInClient()
        let request = client.requestForLayout(withObjectAPIName: "Contact", formFactor: "Medium", layoutType: layoutType, mode: mode, recordTypeId: nil, apiVersion: nil)
        #expect(request.path == "/services/data/v62.0/ui-api/layout/Contact")
        let layout = try await json(client, request)
        #expect(DocumentedShape.mismatches(layout, try DocumentedShape.named("layout")) == [])
        #expect(layout["layoutType"]?.stringValue == layoutType)
        #expect(layout["mode"]?.stringValue == mode)
        #expect(layout["sections"]?.arrayValue?.count == sections)
        let fields = layout["sections"]?.arrayValue?.flatMap { $0["layoutRows"]?.arrayValue ?? [] }
            .flatMap { $0["layoutItems"]?.arrayValue ?? [] }.compactMap { $0["layoutComponents"]?[0]?["apiName"]?.stringValue } ?? []
        #expect(fields.first == (layoutType == "Compact" ? "Name" : "AccountId"))
        #expect(fields.contains("LastModifiedDate") == (mode == "View" && layoutType == "Full"))
        #expect(!fields.contains("Name") || mode == "View", "Name is computed: not editable")
    }

    @Test func anUnknownLayoutParameterOrObjectIsRefused() async throws {
        let client = try await org.loggedInClient()
        let bad = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForLayout(withObjectAPIName: "Account", formFactor: "Huge", layoutType: nil, mode: nil,
                                                                       recordTypeId: nil, apiVersion: nil))
        }
        #expect(bad?.serverErrors.first?.errorCode == "INVALID_QUERY_PARAMETER_VALUE")
        let unknown = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForLayout(withObjectAPIName: "Widget__c", formFactor: nil, layoutType: nil, mode: nil,
                                                                       recordTypeId: nil, apiVersion: nil))
        }
        #expect(unknown?.statusCode == 404)
    }

    @Test func compositeGoesThroughURLSessionToo() async throws {
        let logged = try await org.loggedInClient()
        let client = RestClient(credentials: await logged.credentials, transport: org.urlSessionTransport())
        let answer = try await json(client, client.compositeRequest([client.requestForCreate(withObjectType: "Account", fields: ["Name": "Vandelay"], apiVersion: nil)],
                                                                    refIds: ["vandelay"], allOrNone: false, apiVersion: nil))
        #expect(answer["compositeResponse"]?[0]?["httpStatusCode"] == 201)
        #expect(org.records(of: "Account").contains { $0["Name"] == "Vandelay" })
    }
}
