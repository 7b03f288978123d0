import Foundation
import Testing
import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

/// The embedded org refuses writes Salesforce refuses. Sources (REST API Developer Guide):
/// "Upsert Records Using sObject Rows by External ID" / "Insert or Update (Upsert) a Record
/// Using an External ID" ("Do not specify Id or an external ID field in the request body or an
/// error is generated"); "Status Codes and Error Responses" (`STRING_TOO_LONG`,
/// `REQUIRED_FIELD_MISSING`); the describe's `length` and `nillable` ("sObject Describe").
@Suite struct WriteStrictnessTests {
    /// An org and a token for Ada.
    static func org() async throws -> (EmbeddedOrg, String) {
        let org = EmbeddedOrg.sample()
        let client = try await org.loggedInClient()
        return (org, await client.credentials.accessToken)
    }

    static func send(_ org: EmbeddedOrg, _ token: String, _ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> HTTPResponse {
        try await org.send(HTTPRequest(method: method, url: org.baseURL.appendingPathComponent("services/data/v62.0/" + path),
                                       headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                                       body: body.map { Data($0.description.utf8) }))
    }

    /// The first error's code and fields of a Salesforce error array.
    static func error(_ response: HTTPResponse) -> (code: String?, fields: [String]?) {
        guard case .array(let entries)? = try? JSONValue(jsonData: response.body), let first = entries.first else { return (nil, nil) }
        return (first["errorCode"]?.stringValue, first["fields"]?.arrayValue?.compactMap(\.stringValue))
    }

    static let tooLong = String(repeating: "x", count: 256)

    // MARK: Upsert by external id

    @Test func anUpsertWhoseBodyCarriesTheExternalIdFieldIsRefused() async throws {
        let (org, token) = try await Self.org()
        let created = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-1", ["Name": "Initech", "External_Id__c": "EXT-1"])
        #expect(created.status == 400)
        #expect(Self.error(created).code == "INVALID_FIELD" && Self.error(created).fields == ["External_Id__c"])
        // Without it the upsert creates; then the same mistake on the update path is refused too.
        let ok = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-1", ["Name": "Initech"])
        #expect(ok.status == 201)
        let update = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-1", ["Name": "Initrode", "External_Id__c": "EXT-1"])
        #expect(update.status == 400 && Self.error(update).code == "INVALID_FIELD")
    }

    @Test func anUpsertWhoseBodyCarriesIdIsRefused() async throws {
        let (org, token) = try await Self.org()
        let response = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-2", ["Name": "Initech", "Id": "001000000000001AAA"])
        #expect(response.status == 400)
        #expect(Self.error(response) == ("INVALID_FIELD", ["Id"]))
    }

    // MARK: Field lengths

    @Test func a256CharacterNameIsTooLongOnCreateUpdateAndUpsert() async throws {
        let (org, token) = try await Self.org()
        let create = try await Self.send(org, token, "POST", "sobjects/Account", ["Name": .string(Self.tooLong)])
        #expect(create.status == 400 && Self.error(create) == ("STRING_TOO_LONG", ["Name"]))
        #expect(create.text.contains("Account Name: data value too large") && create.text.contains("max length=255"))
        let fits = try await Self.send(org, token, "POST", "sobjects/Account", ["Name": .string(String(Self.tooLong.dropLast()))])
        #expect(fits.status == 201, "255 characters fit")
        let id = try #require(try JSONValue(jsonData: fits.body)["id"]?.stringValue)
        let update = try await Self.send(org, token, "PATCH", "sobjects/Account/\(id)", ["Name": .string(Self.tooLong)])
        #expect(update.status == 400 && Self.error(update).code == "STRING_TOO_LONG")
        let upsert = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-3", ["Name": .string(Self.tooLong)])
        #expect(upsert.status == 400 && Self.error(upsert).code == "STRING_TOO_LONG")
        #expect(org.record(withID: id)?["Name"]?.stringValue == String(Self.tooLong.dropLast()), "nothing was written")
    }

    @Test func aContactsLastNameIsBoundByItsDescribedLength() async throws {
        let (org, token) = try await Self.org()
        let response = try await Self.send(org, token, "POST", "sobjects/Contact", ["LastName": .string(String(repeating: "y", count: 81))])
        #expect(response.status == 400 && Self.error(response) == ("STRING_TOO_LONG", ["LastName"]))
    }

    @Test func collectionsAndCompositeAreBoundToo() async throws {
        let (org, token) = try await Self.org()
        let collection = try await Self.send(org, token, "POST", "composite/sobjects", [
            "allOrNone": false,
            "records": [["attributes": ["type": "Account"], "Name": .string(Self.tooLong)],
                        ["attributes": ["type": "Account"], "Name": "Fits"]],
        ])
        #expect(collection.status == 200)
        let results = try #require(try JSONValue(jsonData: collection.body).arrayValue)
        #expect(results[0]["success"] == false && results[0]["errors"]?[0]?["statusCode"]?.stringValue == "STRING_TOO_LONG")
        #expect(results[1]["success"] == true)
        let composite = try await Self.send(org, token, "POST", "composite", [
            "compositeRequest": [["method": "POST", "url": "/services/data/v62.0/sobjects/Contact", "referenceId": "c",
                                  "body": ["FirstName": "No last name"]]],
        ])
        #expect(composite.text.contains("REQUIRED_FIELD_MISSING"))
    }

    // MARK: Required fields

    @Test func requiredFieldsAreRequiredOnCreateUpdateAndUpsert() async throws {
        let (org, token) = try await Self.org()
        let create = try await Self.send(org, token, "POST", "sobjects/Contact", ["FirstName": "Ada"])
        #expect(create.status == 400 && Self.error(create) == ("REQUIRED_FIELD_MISSING", ["LastName"]))
        let account = try #require(org.record(withID: "001000000000001AAA")?["Id"]?.stringValue, "the sample's first account")
        let blank = try await Self.send(org, token, "PATCH", "sobjects/Account/\(account)", ["Name": ""])
        #expect(blank.status == 400 && Self.error(blank) == ("REQUIRED_FIELD_MISSING", ["Name"]))
        let upsert = try await Self.send(org, token, "PATCH", "sobjects/Account/External_Id__c/EXT-4", ["Industry": "Energy"])
        #expect(upsert.status == 400 && Self.error(upsert) == ("REQUIRED_FIELD_MISSING", ["Name"]))
    }
}
