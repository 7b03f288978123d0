import Foundation
import Testing
import TestSupport
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

/// The embedded org answers in the shapes Salesforce's REST API documents — one test per shape,
/// each checked against `Fixtures/shapes` (written from the documentation) and against what
/// the documentation says of the values.
@MainActor
struct DocumentedShapeTests {
    let org = EmbeddedOrg.sample()

    func json(_ client: RestClient, _ request: RestRequest) async throws -> JSONValue {
        try await client.send(request: request).asJSON()
    }

    func refusal(_ client: RestClient, _ request: RestRequest) async -> RestClientError? {
        await #expect(throws: RestClientError.self) { _ = try await client.send(request: request) }
    }

    func create(_ client: RestClient, _ type: String, _ fields: [String: JSONValue]) async throws -> String {
        try #require(try await json(client, client.requestForCreate(withObjectType: type, fields: fields, apiVersion: nil))["id"]?.stringValue)
    }

    /// Every key of every record, nested ones too.
    func keys(_ value: JSONValue) -> [String] {
        switch value {
        case .object(let members): members.keys.sorted() + members.values.flatMap(keys)
        case .array(let elements): elements.flatMap(keys)
        default: []
        }
    }

    // MARK: Query

    @Test func parentFieldsNestUnderTheirRelationshipAndAnEmptyLookupIsNull() async throws {
        let client = try await org.loggedInClient()
        _ = try await create(client, "Contact", ["LastName": "Noether"])
        let page = try await json(client, client.request(forQuery: "SELECT Name, Account.Name FROM Contact ORDER BY LastName", apiVersion: nil))
        #expect(DocumentedShape.mismatches(page, try DocumentedShape.named("query-parent-fields")) == [])
        let records = try #require(page["records"]?.arrayValue)
        #expect(records.map { $0["Account"]?["Name"]?.stringValue ?? "null" }
            == ["Acme Corporation", "Globex", "Acme Corporation", "null", "Globex", "Acme Corporation"])
        #expect(records[3]["Account"] == .null, "the key is there, its value null")
        #expect(records[0]["Account"]?["attributes"]?["type"] == "Account")
        #expect(records[0]["Account"]?["attributes"]?["url"]?.stringValue?.hasPrefix("/services/data/v62.0/sobjects/Account/001") == true)
        #expect(!keys(page).contains { $0.contains(".") }, "never flat: no \"Account.Name\" key")
        #expect(!keys(page).contains("AccountId"), "the id field only when selected")

        let cases = try await json(client, client.request(forQuery: "select Subject, contact.account.name from Case where Contact.LastName = 'hopper'",
                                                          apiVersion: nil))
        let grace = try #require(cases["records"]?[0])
        #expect(grace["Contact"]?["Account"]?["Name"] == "Globex", "deeper paths nest further, under the declared names")
        #expect(grace["Contact"]?["attributes"]?["type"] == "Contact")
        #expect(grace["Contact"]?.objectValue?.keys.sorted() == ["Account", "attributes"])
    }

    @Test func childSubqueriesAreNestedQueryResultsOrNull() async throws {
        let client = try await org.loggedInClient()
        _ = try await create(client, "Account", ["Name": "Vandelay Industries"])
        let page = try await json(client, client.request(forQuery: "SELECT Name, (SELECT LastName FROM Contacts ORDER BY LastName) FROM Account ORDER BY Name",
                                                         apiVersion: nil))
        #expect(DocumentedShape.mismatches(page, try DocumentedShape.named("query-child-subquery")) == [])
        let records = try #require(page["records"]?.arrayValue)
        #expect(records.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation", "Globex", "Vandelay Industries"])
        #expect(records[0]["Contacts"]?["records"]?.arrayValue?.map { $0["LastName"]?.stringValue ?? "" } == ["Hamilton", "Lovelace", "Turing"])
        #expect(records[0]["Contacts"]?["totalSize"] == 3)
        #expect(records[0]["Contacts"]?["done"] == true)
        #expect(records[0]["Contacts"]?["records"]?[0]?["attributes"]?["type"] == "Contact")
        #expect(records[2]["Contacts"] == .null, "no children: null, not an empty result")

        let ada = try await json(client, client.request(forQuery: "SELECT LastName, (SELECT Subject FROM Cases WHERE Status = 'New') FROM Contact WHERE LastName = 'Lovelace'",
                                                        apiVersion: nil))
        #expect(ada["records"]?[0]?["Cases"]?["records"]?.arrayValue?.map { $0["Subject"]?.stringValue ?? "" } == ["Ada's case 1", "Ada's case 2"])
    }

    @Test(arguments: [
        ("SELECT Name, (SELECT LastName FROM Contacts FROM Account", 1, 45, "expecting ')', found 'FROM'"),
        ("SELECT Id, (SELECT Id, (SELECT Id FROM Cases) FROM Contacts) FROM Account", 1, 24,
         "a subquery can't hold another subquery: Salesforce nests child relationships one level deep"),
        ("SELECT Name,\n  (SELECT LastName FROM Contacts\nFROM Account", 3, 1, "expecting ')', found 'FROM'"),
        ("SELECT Name, (SELECT FROM Contacts) FROM Account", 1, 27, "expecting 'FROM', found 'Contacts'"),
        ("SELECT Name FROM Account WHERE", 1, 31, "expecting a field name, found <EOF>"),
        ("SELECT Name, () FROM Account", 1, 15, "expecting 'SELECT', found ')'"),
    ].map(OneLine.init))
    func malformedQueriesAreTypedErrorsNamingWhere(_ example: OneLine<(String, Int, Int, String)>) {
        let (text, line, column, message) = example.value
        let error = #expect(throws: SOQLError.self) { _ = try SOQLQuery(text) }
        #expect(error == SOQLError(message, line: line, column: column))
        #expect(error?.description == "line \(line), column \(column): \(message)")
    }

    @Test func theSubqueryGrammarParses() throws {
        let query = try SOQLQuery("SELECT Name, (SELECT LastName, Email FROM Contacts WHERE Title = 'CEO' ORDER BY LastName DESC LIMIT 2), Id FROM Account")
        #expect(query.fields == ["Name", "Id"])
        #expect(query.object == "Account")
        let contacts = try #require(query.subqueries.first)
        #expect(contacts.object == "Contacts")
        #expect(contacts.fields == ["LastName", "Email"])
        #expect(contacts.conditions == [SOQLQuery.Condition(field: "Title", equals: true, value: "CEO")])
        #expect(contacts.orderBy == SOQLQuery.Ordering(field: "LastName", ascending: false))
        #expect(contacts.limit == 2)
    }

    @Test(arguments: [
        ("SELECT Name FRM Contact", "MALFORMED_QUERY", "\nSELECT Name FRM Contact\n            ^\nERROR at Row:1:Column:13\nexpecting 'FROM', found 'FRM'"),
        ("SELECT Name, (SELECT Id FROM Contactz) FROM Account", "INVALID_TYPE",
         "\nSELECT Name, (SELECT Id FROM Contactz) FROM Account\n                             ^\nERROR at Row:1:Column:30\nDidn't understand relationship 'Contactz' in FROM part of query call."),
        ("SELECT Acount.Name FROM Contact", "INVALID_FIELD",
         "\nSELECT Acount.Name FROM Contact\n       ^\nERROR at Row:1:Column:8\nDidn't understand relationship 'Acount' in field path."),
        ("SELECT Name,\n Salary FROM Contact", "INVALID_FIELD", "\n Salary FROM Contact\n ^\nERROR at Row:2:Column:2\nNo such column 'Salary' on entity 'Contact'."),
        ("SELECT Id FROM Widget__c", "INVALID_TYPE", "\nSELECT Id FROM Widget__c\n               ^\nERROR at Row:1:Column:16\nsObject type 'Widget__c' is not supported."),
    ].map(OneLine.init))
    func queryErrorsPointAtTheRowAndColumn(_ example: OneLine<(String, String, String)>) async throws {
        let (soql, code, message) = example.value
        let client = try await org.loggedInClient()
        let error = await refusal(client, client.request(forQuery: soql, apiVersion: nil))
        #expect(error?.statusCode == 400)
        #expect(error?.serverErrors == [ServerError(message: message, errorCode: code)])
        #expect(DocumentedShape.mismatches(try JSONValue(jsonData: Data((error?.responseBody ?? "").utf8)), try DocumentedShape.named("error")) == [])
    }

    @Test func queryAllReturnsDeletedRecordsAndQueryDoesNot() async throws {
        let client = try await org.loggedInClient()
        let found = try await json(client, client.request(forQuery: "SELECT Id FROM Contact WHERE LastName = 'Turing'", apiVersion: nil))
        let turing = try #require(found["records"]?[0]?["Id"]?.stringValue)
        _ = try await client.send(request: client.requestForDelete(withObjectType: "Contact", objectId: turing, apiVersion: nil))
        let soql = "SELECT Name, IsDeleted FROM Contact ORDER BY Name"
        let live = try await json(client, client.request(forQuery: soql, apiVersion: nil))
        let all = try await json(client, client.requestForQueryAll(soql, apiVersion: nil))
        #expect(DocumentedShape.mismatches(all, try DocumentedShape.named("query-all")) == [])
        #expect(live["totalSize"] == 4)
        #expect(live["records"]?.arrayValue?.allSatisfy { $0["IsDeleted"] == false } == true)
        #expect(all["totalSize"] == 5)
        #expect(all["records"]?.arrayValue?.filter { $0["IsDeleted"] == true }.map { $0["Name"]?.stringValue ?? "" } == ["Alan Turing"])
        let gone = await refusal(client, client.requestForRetrieve(withObjectType: "Contact", objectId: turing, fieldList: nil, apiVersion: nil))
        #expect(gone?.serverErrors.first?.errorCode == "ENTITY_IS_DELETED")
    }

    // MARK: External ids

    @Test func upsertMatchingSeveralRecordsAnswers300WithTheirURLs() async throws {
        let client = try await org.loggedInClient()
        let first = try await create(client, "Account", ["Name": "Initech East", "External_Id__c": "INI"])
        let second = try await create(client, "Account", ["Name": "Initech West", "External_Id__c": "INI"])
        let error = await refusal(client, client.requestForUpsert(withObjectType: "Account", externalIdField: "External_Id__c", externalId: "INI",
                                                                  fields: ["Industry": "Software"], apiVersion: nil))
        #expect(error?.statusCode == 300)
        let body = try JSONValue(jsonData: Data(try #require(error?.responseBody).utf8))
        #expect(DocumentedShape.mismatches(body, try DocumentedShape.named("upsert-multiple-matches")) == [])
        #expect(error?.matchingRecordURLs == ["/services/data/v62.0/sobjects/Account/\(first)", "/services/data/v62.0/sobjects/Account/\(second)"])
        #expect(error?.userFacingMessage(fallback: "Could not save")
            == "Could not save (HTTP 300: more than one record matches: /services/data/v62.0/sobjects/Account/\(first), /services/data/v62.0/sobjects/Account/\(second))")
        #expect(org.record(withID: first)?.keys.contains("Industry") == false, "neither record is touched")
        #expect(org.record(withID: second)?.keys.contains("Industry") == false)
    }

    @Test func upsertCreatesOrUpdatesOneRecordWithTheDocumentedResult() async throws {
        let client = try await org.loggedInClient()
        let upsert = { (value: String, fields: [String: JSONValue], version: String?) in
            client.requestForUpsert(withObjectType: "Account", externalIdField: "External_Id__c", externalId: value, fields: fields, apiVersion: version)
        }
        let created = try await client.send(request: upsert("INI-1", ["Name": "Initech"], nil))
        #expect(created.status == 201)
        #expect(DocumentedShape.mismatches(try created.asJSON(), try DocumentedShape.named("upsert-result")) == [])
        #expect(try created.asJSON()["created"] == true)
        let id = try #require(try created.asJSON()["id"]?.stringValue)
        #expect(org.record(withID: id)?["External_Id__c"] == "INI-1", "the external id is set from the URL")
        let updated = try await client.send(request: upsert("ini-1", ["Industry": "Software"], nil))
        #expect(updated.status == 200, "external ids match ignoring case")
        #expect(try updated.asJSON() == ["id": .string(id), "success": true, "errors": [], "created": false])
        let old = try await client.send(request: upsert("INI-1", ["Industry": "Energy"], "v45.0"))
        #expect(old.status == 204, "before v46.0 an update answers 204")
        #expect(old.data.isEmpty)
        let onID = try await client.send(request: client.requestForUpsert(withObjectType: "Account", externalIdField: "Id", externalId: "",
                                                                         fields: ["Name": "Hooli"], apiVersion: nil))
        #expect(onID.status == 201, "upsert on Id with no id: a create")
        #expect(try onID.asJSON()["created"] == true)
        let byID = try await client.send(request: client.requestForUpsert(withObjectType: "Account", externalIdField: "Id", externalId: id,
                                                                         fields: ["Name": "Initech Corp"], apiVersion: nil))
        #expect(byID.status == 200, "upsert on Id with an id: an update")
        #expect(org.record(withID: id)?["Name"] == "Initech Corp")
        let notExternal = await refusal(client, client.requestForUpsert(withObjectType: "Account", externalIdField: "Name", externalId: "Initech",
                                                                        fields: [:], apiVersion: nil))
        #expect(notExternal?.statusCode == 404)
        #expect(notExternal?.serverErrors.first == ServerError(message: "Provided external ID field does not exist or is not accessible: Name", errorCode: "NOT_FOUND"))
    }

    @Test func aRecordIsFoundByExternalIDAsRetrieveReturnsIt() async throws {
        let client = try await org.loggedInClient()
        let id = try await create(client, "Account", ["Name": "Initech", "External_Id__c": "INI-1"])
        let get = { (value: String, fields: [String]?) in
            client.requestForRetrieve(withObjectType: "Account", externalIdField: "External_Id__c", externalId: value, fieldList: fields, apiVersion: nil)
        }
        let record = try await json(client, get("INI-1", nil))
        #expect(DocumentedShape.mismatches(record, try DocumentedShape.named("record")) == [])
        #expect(record["Id"] == .string(id))
        #expect(record["Name"] == "Initech")
        #expect(record["Industry"] == .null, "every field, nulls included")
        #expect(record["attributes"] == ["type": "Account", "url": .string("/services/data/v62.0/sobjects/Account/\(id)")])
        #expect(try await json(client, get("INI-1", ["Name"])).objectValue?.keys.sorted() == ["Id", "Name", "attributes"], "?fields= and the Id")
        let none = await refusal(client, get("INI-2", nil))
        #expect(none?.statusCode == 404)
        #expect(none?.serverErrors.first?.errorCode == "NOT_FOUND")
        let twin = try await create(client, "Account", ["Name": "Initech Two", "External_Id__c": "INI-1"])
        let several = await refusal(client, get("INI-1", nil))
        #expect(several?.statusCode == 300)
        #expect(several?.matchingRecordURLs == ["/services/data/v62.0/sobjects/Account/\(id)", "/services/data/v62.0/sobjects/Account/\(twin)"])
        let byID = try await json(client, client.requestForRetrieve(withObjectType: "Account", objectId: id, fieldList: nil, apiVersion: nil))
        #expect(DocumentedShape.mismatches(byID, try DocumentedShape.named("record")) == [])
    }

    // MARK: Search

    @Test func soslSearchAnswersSearchRecordsWithAttributes() async throws {
        let client = try await org.loggedInClient()
        let found = try await json(client, client.requestForSearch("FIND {Lovelace} IN ALL FIELDS RETURNING Contact(Name, Email), Account(Name)", apiVersion: nil))
        #expect(DocumentedShape.mismatches(found, try DocumentedShape.named("search")) == [])
        let records = try #require(found["searchRecords"]?.arrayValue)
        #expect(records.count == 1)
        #expect(records.first?.objectValue?.keys.sorted() == ["Email", "Name", "attributes"], "the fields RETURNING asked for")
        #expect(records.first?["attributes"]?["type"] == "Contact")
        let wildcard = try await json(client, client.requestForSearch("FIND {glob*} RETURNING Account(Name), Contact", apiVersion: nil))
        #expect(wildcard["searchRecords"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Globex"])
        let everywhere = try await json(client, client.requestForSearch("FIND {Globex}", apiVersion: nil))
        #expect(everywhere["searchRecords"]?.arrayValue?.map { $0.objectValue?.keys.sorted() ?? [] } == [["Id", "attributes"]], "no RETURNING: Id only")
        let nothing = try await json(client, client.requestForSearch("FIND {Zanzibar}", apiVersion: nil))
        #expect(nothing == ["searchRecords": []])
        let old = try await json(client, client.requestForSearch("FIND {Globex} RETURNING Account(Name)", apiVersion: "v35.0"))
        #expect(old.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Globex"], "before v36.0: a bare array")
        let unbraced = await refusal(client, client.requestForSearch("FIND Acme", apiVersion: nil))
        #expect(unbraced?.statusCode == 400)
        #expect(unbraced?.serverErrors.first?.errorCode == "MALFORMED_SEARCH")
        #expect(unbraced?.serverErrors.first?.message.contains("ERROR at Row:1:Column:6") == true)
        let unknown = await refusal(client, client.requestForSearch("FIND {Acme} RETURNING Widget", apiVersion: nil))
        #expect(unknown?.serverErrors.first?.errorCode == "INVALID_TYPE")
    }

    @Test func parameterizedSearchAnswersSearchRecordsByGETAndPOST() async throws {
        let client = try await org.loggedInClient()
        let byGET = try await json(client, client.requestForParameterizedSearch("Hopper", objectTypes: ["Contact": ["Name", "Email"]], apiVersion: nil))
        #expect(DocumentedShape.mismatches(byGET, try DocumentedShape.named("search")) == [])
        #expect(byGET["searchRecords"]?.arrayValue?.map { $0["Email"]?.stringValue ?? "" } == ["grace@example.com"])
        let global = try await json(client, client.requestForParameterizedSearch("Globex", apiVersion: nil))
        #expect(global["searchRecords"]?[0]?.objectValue?.keys.sorted() == ["Id", "attributes"])
        let byPOST = try await json(client, client.request(method: .post, path: "/services/data/v62.0/parameterizedSearch",
                                                           body: ["q": "Acme", "sobjects": [["name": "Account", "fields": ["Id", "Name"]]]]))
        #expect(DocumentedShape.mismatches(byPOST, try DocumentedShape.named("search")) == [])
        #expect(byPOST["searchRecords"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation"])
        let sosl = await refusal(client, client.requestForParameterizedSearch("FIND {Acme}", apiVersion: nil))
        #expect(sosl?.statusCode == 400, "q takes no SOSL")
    }

    // MARK: Describe

    @Test func describeHasTheDocumentedKeys() async throws {
        let client = try await org.loggedInClient()
        let account = try await json(client, client.requestForDescribe(withObjectType: "Account", apiVersion: nil))
        #expect(DocumentedShape.mismatches(account, try DocumentedShape.named("describe")) == [])
        #expect(account["name"] == "Account")
        #expect(account["keyPrefix"] == "001")
        #expect(account["urls"]?["rowTemplate"] == "/services/data/v62.0/sobjects/Account/{ID}")
        let children = account["childRelationships"]?.arrayValue?.map { "\($0["childSObject"]?.stringValue ?? "").\($0["field"]?.stringValue ?? "") as \($0["relationshipName"]?.stringValue ?? "")" }
        #expect(children == ["Case.AccountId as Cases", "Contact.AccountId as Contacts"])
        let contact = try await json(client, client.requestForDescribe(withObjectType: "Contact", apiVersion: nil))
        let accountID = try #require(contact["fields"]?.arrayValue?.first { $0["name"] == "AccountId" })
        #expect(accountID["type"] == "reference")
        #expect(accountID["referenceTo"] == ["Account"])
        #expect(accountID["relationshipName"] == "Account")
        let name = try #require(contact["fields"]?.arrayValue?.first { $0["name"] == "Name" })
        #expect(name["createable"] == false, "a contact's Name is computed")
        #expect(name["updateable"] == false)
        #expect(contact["fields"]?.arrayValue?.first { $0["name"] == "External_Id__c" }?["externalId"] == true)
        let unknown = await refusal(client, client.requestForDescribe(withObjectType: "Widget", apiVersion: nil))
        #expect(unknown?.statusCode == 404)
        #expect(DocumentedShape.mismatches(try JSONValue(jsonData: Data((unknown?.responseBody ?? "").utf8)), try DocumentedShape.named("error")) == [])
    }

    @Test func describeGlobalListsEveryObject() async throws {
        let client = try await org.loggedInClient()
        let global = try await json(client, client.requestForDescribeGlobal(apiVersion: "v60.0"))
        #expect(DocumentedShape.mismatches(global, try DocumentedShape.named("describe-global")) == [])
        #expect(global["sobjects"]?.arrayValue?.map { $0["name"]?.stringValue ?? "" } == ["Account", "Case", "Contact"])
        #expect(global["sobjects"]?[0]?["urls"]?["sobject"] == "/services/data/v60.0/sobjects/Account", "URLs carry the version asked for")
    }

    // MARK: Who the user is

    @Test func userinfoAndTheIdentityURLEachHaveTheirOwnNames() async throws {
        let client = try await org.loggedInClient()
        let userinfo = try await json(client, client.requestForUserInfo())
        #expect(DocumentedShape.mismatches(userinfo, try DocumentedShape.named("userinfo")) == [])
        #expect(userinfo["preferred_username"] == "ada@acme.com")
        #expect(userinfo["user_id"] == "005ADA000000001")
        #expect(userinfo["organization_id"] == "00DACME000000001")
        #expect(userinfo["name"] == "Ada Lovelace")
        #expect(userinfo.objectValue?.keys.contains("username") == false, "userinfo names it preferred_username")
        let identityURL = await client.credentials.identityURL
        #expect(userinfo["sub"] == .string(identityURL.absoluteString))
        let identity = try await json(client, client.request(method: .get, path: identityURL.path))
        #expect(DocumentedShape.mismatches(identity, try DocumentedShape.named("identity")) == [])
        #expect(identity["username"] == "ada@acme.com")
        #expect(identity["display_name"] == "Ada Lovelace")
        #expect(identity["first_name"] == "Ada")
        #expect(identity["urls"]?["rest"]?.stringValue?.hasSuffix("/services/data/v{version}/") == true)
        let parsed = try UserIdentity(json: try await client.send(request: client.request(method: .get, path: identityURL.path)).data)
        #expect(parsed.url(named: "sobjects", version: "62.0")?.absoluteString.hasSuffix("/services/data/v62.0/sobjects/") == true)
    }

    // MARK: Versions

    @Test func theVersionListNeedsNoTokenAndAscends() async throws {
        let answer = try await org.send(HTTPRequest(url: org.baseURL.appendingPathComponent("services/data")))
        #expect(answer.status == 200)
        let versions = try JSONValue(jsonData: answer.body)
        #expect(DocumentedShape.mismatches(versions, try DocumentedShape.named("versions")) == [])
        let numbers = versions.arrayValue?.compactMap { $0["version"]?.stringValue.flatMap(Double.init) } ?? []
        #expect(numbers == numbers.sorted() && numbers.last == 62)
        #expect(versions.arrayValue?.last == ["label": "Winter '25", "url": "/services/data/v62.0", "version": "62.0"])
        #expect(versions.arrayValue?.first { $0["version"] == "60.0" }?["label"] == "Spring '24")
    }

    @Test(arguments: [("60.0", 404, "NOT_FOUND"), ("v60", 404, "NOT_FOUND"), ("vabc", 404, "NOT_FOUND"), ("v63.0", 404, "NOT_FOUND"),
                      ("v30.0", 410, "GONE")])
    func aPathWithABadVersionGetsSalesforcesErrorArray(_ version: String, _ status: Int, _ code: String) async throws {
        let transport = org.urlSessionTransport()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: transport).logIn(flow: .webServer)
        let client = RestClient(credentials: credentials, transport: transport)
        let error = await refusal(client, client.request(method: .get, path: "/services/data/\(version)/limits"))
        #expect(error?.statusCode == status)
        #expect(error?.serverErrors.first?.errorCode == code)
        if status == 404 {
            #expect(try JSONValue(jsonData: Data((error?.responseBody ?? "").utf8))
                == [["errorCode": "NOT_FOUND", "message": "The requested resource does not exist"]], "exactly the documented array")
        }
    }
}
