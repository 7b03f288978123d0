import Foundation
import Testing
import AppKernel
import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelTesting

struct SOQLQueryTests {
    @Test func theSubsetParses() throws {
        let query = try SOQLQuery("select Name, Id, Account.Name from Contact where LastName = 'O\\'Hara' and Age != 3 order by Name desc limit 10")
        #expect(query.fields == ["Name", "Id", "Account.Name"])
        #expect(query.object == "Contact")
        #expect(query.conditions == [SOQLQuery.Condition(field: "LastName", equals: true, value: "O'Hara"),
                                     SOQLQuery.Condition(field: "Age", equals: false, value: 3)])
        #expect(query.orderBy?.field == "Name")
        #expect(query.orderBy?.ascending == false)
        #expect(query.limit == 10)
    }

    @Test(arguments: ["", "SELECT FROM Contact", "SELECT Name Contact", "SELECT Name FROM Contact WHERE Name LIKE 'a%'",
                      "SELECT Name FROM Contact LIMIT x", "SELECT Name FROM Contact WHERE Name = 'open", "SELECT Name FROM Contact GROUP BY Name",
                      "SELECT Name FROM Contact WHERE Name = ", "SELECT Name FROM Contact ORDER Name"])
    func outsideTheSubsetIsMalformed(_ text: String) {
        #expect(throws: SOQLError.self) { _ = try SOQLQuery(text) }
    }
    /// The record list finds its object type without the parser; for every query of the subset
    /// it finds the parser's object.
    @MainActor @Test(arguments: ["SELECT Name, Id FROM Contact ORDER BY Name", "select Name, Id, Account.Name from Contact where LastName = 'O\\'Hara' limit 3",
                                 "SELECT Name, (SELECT Subject FROM Cases WHERE Status = 'New') FROM Contact", "SELECT Id FROM Account WHERE Name IN ('FROM', 'x')"])
    func theRecordListReadsTheParsersObject(_ text: String) throws {
        let org = EmbeddedOrg.sample()
        let credentials = Credentials(accessToken: "T", refreshToken: nil, instanceURL: org.baseURL, identityURL: org.baseURL,
                                      userID: "005ADA000000001", orgID: "00DACME000000001")
        let client = RestClient(credentials: credentials, transport: org)
        #expect(RecordList(client: client, query: text).objectType == (try SOQLQuery(text).object))
    }
}

@MainActor
struct EmbeddedOrgEndpointTests {
    func client(_ org: EmbeddedOrg = .sample()) async throws -> (EmbeddedOrg, RestClient) {
        (org, try await org.loggedInClient())
    }

    @Test func loginGoesThroughTheRealOAuthCode() async throws {
        let org = EmbeddedOrg.sample()
        let (credentials, identity) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer, loginHint: "bob@beta.com")
        let (viaFragment, _) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .userAgent, loginHint: "ada@acme.com")
        #expect(viaFragment.userID == "005ADA000000001")
        #expect(identity.displayName == "Bob Beta")
        #expect(credentials.orgID == "00DBETA000000002")
        let denied = await #expect(throws: OAuthError.self) {
            _ = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer, loginHint: "eve@nowhere.com")
        }
        #expect(denied == .serverError(code: "access_denied", description: "end-user denied authorization"))
        let deniedFragment = await #expect(throws: OAuthError.self) {
            _ = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .userAgent, loginHint: "eve@nowhere.com")
        }
        #expect(deniedFragment == .serverError(code: "access_denied", description: "end-user denied authorization"))
        #expect(org.requestLog.contains("POST /services/oauth2/token"))
    }

    @Test func queriesFilterSortFollowRelationshipsAndStayInTheirOrg() async throws {
        let (_, client) = try await client()
        let json = try await client.send(request: client.request(forQuery: "SELECT Name, Account.Name FROM Contact WHERE Account.Name = 'Globex' ORDER BY Name DESC", apiVersion: nil)).asJSON()
        #expect(json["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Linus Torvalds", "Grace Hopper"])
        #expect(json["records"]?[0]?["Account"]?["Name"] == "Globex", "parent fields nest under the relationship")
        #expect(json["records"]?[0]?.objectValue?.keys.contains("Account.Name") == false)
        #expect(json["records"]?[0]?["attributes"]?["type"] == "Contact")
        #expect(json["totalSize"] == 2)
        let (_, bob) = try await session(login: "bob@beta.com")
        let beta = try await bob.send(request: bob.request(forQuery: "SELECT Name FROM Account", apiVersion: nil)).asJSON()
        #expect(beta["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Beta Labs"])
    }

    func session(login: String) async throws -> (EmbeddedOrg, RestClient) {
        let org = EmbeddedOrg.sample()
        return (org, try await org.loggedInClient(username: login))
    }

    @Test func queriesPageWithNextRecordsURL() async throws {
        let org = EmbeddedOrg.sample(queryBatchSize: 2)
        let client = try await org.loggedInClient()
        let first = try await client.send(request: client.request(forQuery: "SELECT Id FROM Contact", apiVersion: nil)).asJSON()
        #expect(first["done"] == false)
        #expect(first["records"]?.arrayValue?.count == 2)
        #expect(first["totalSize"] == 5)
        let next = try #require(first["nextRecordsUrl"]?.stringValue)
        #expect(next.hasPrefix("/services/data/v62.0/query/01g"))
        let second = try await client.send(request: client.request(method: .get, path: next)).asJSON()
        #expect(second["records"]?.arrayValue?.count == 2)
        let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
        try await list.load()
        #expect(list.rows.map { $0.name ?? "" } == ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"])
    }

    @Test func sObjectsAreCreatedRetrievedUpdatedUpsertedAndDeleted() async throws {
        let (org, client) = try await client()
        let created = try await client.send(request: client.requestForCreate(withObjectType: "Contact", fields: ["FirstName": "Katherine", "LastName": "Johnson"], apiVersion: nil))
        #expect(created.status == 201)
        let id = try #require(try created.asJSON()["id"]?.stringValue)
        #expect(id.hasPrefix("003"))
        let fetched = try await client.send(request: client.requestForRetrieve(withObjectType: "Contact", objectId: id, fieldList: ["Name"], apiVersion: nil)).asJSON()
        #expect(fetched["Name"] == "Katherine Johnson")
        #expect(fetched.objectValue?.keys.contains("Email") == false, "only the fields asked for")
        let updated = try await client.send(request: client.requestForUpdate(withObjectType: "Contact", objectId: id, fields: ["Title": "Mathematician"], apiVersion: nil))
        #expect(updated.status == 204)
        #expect(org.record(withID: id)?["Title"] == "Mathematician")
        let upsertNew = try await client.send(request: client.requestForUpsert(withObjectType: "Contact", externalIdField: "External_Id__c", externalId: "K-1",
                                                                                fields: ["LastName": "Hopper"], apiVersion: nil))
        #expect(upsertNew.status == 201)
        #expect(try upsertNew.asJSON()["created"] == true)
        let upsertOld = try await client.send(request: client.requestForUpsert(withObjectType: "Contact", externalIdField: "External_Id__c", externalId: "K-1",
                                                                                fields: ["Title": "Admiral"], apiVersion: nil))
        #expect(try upsertOld.asJSON()["created"] == false)
        #expect(try await client.send(request: client.requestForDelete(withObjectType: "Contact", objectId: id, apiVersion: nil)).status == 204)
        let gone = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForRetrieve(withObjectType: "Contact", objectId: id, fieldList: nil, apiVersion: nil))
        }
        #expect(gone?.serverErrors.first?.errorCode == "ENTITY_IS_DELETED")
        #expect(gone?.statusCode == 404)
    }

    @Test func describesVersionsAndLimitsAnswer() async throws {
        let (_, client) = try await client()
        #expect(try await client.send(request: client.requestForDescribe(withObjectType: "Account", apiVersion: nil)).asJSON()["keyPrefix"] == "001")
        #expect(try await client.send(request: client.requestForDescribeGlobal(apiVersion: nil)).asJSON()["sobjects"]?.arrayValue?.count == 3)
        #expect(try await client.send(request: client.requestForVersions()).asJSON().arrayValue?.last?["version"] == "62.0")
        #expect(try await client.send(request: client.requestForLimits(apiVersion: nil)).asJSON()["DailyApiRequests"]?["Max"] == 15000)
        #expect(try await client.send(request: client.requestForUserInfo()).asJSON()["preferred_username"] == "ada@acme.com")
    }

    @Test(arguments: [
        ("SELECT Name FROM Contact WHERE", 400, "MALFORMED_QUERY"),
        ("SELECT Name FROM Widget", 400, "INVALID_TYPE"),
        ("SELECT Salary FROM Contact", 400, "INVALID_FIELD"),
    ])
    func badQueriesGetSalesforcesErrors(_ soql: String, _ status: Int, _ code: String) async throws {
        let (_, client) = try await client()
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.request(forQuery: soql, apiVersion: nil)) }
        #expect(error?.statusCode == status)
        #expect(error?.serverErrors.first?.errorCode == code)
    }

    @Test func writeErrorsAreSalesforces() async throws {
        let (org, client) = try await client()
        let cases: [(RestRequest, Int, String)] = [
            (client.requestForRetrieve(withObjectType: "Contact", objectId: "003000000009999AAA", fieldList: nil, apiVersion: nil), 404, "NOT_FOUND"),
            (client.requestForCreate(withObjectType: "Contact", fields: ["FirstName": "No"], apiVersion: nil), 400, "REQUIRED_FIELD_MISSING"),
            (client.requestForCreate(withObjectType: "Contact", fields: ["LastName": "X", "Salary": 1], apiVersion: nil), 400, "INVALID_FIELD"),
            (client.requestForUpsert(withObjectType: "Contact", externalIdField: "Nope", externalId: "1", fields: [:], apiVersion: nil), 404, "NOT_FOUND"),
            (client.requestForDescribe(withObjectType: "Widget", apiVersion: nil), 404, "NOT_FOUND"),
        ]
        for (request, status, code) in cases {
            let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: request) }
            #expect(error?.statusCode == status, "\(request.path)")
            #expect(error?.serverErrors.first?.errorCode == code, "\(request.path)")
        }
        let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact")
        try await list.load()
        let ada = try #require(list.rows.first { $0.name == "Ada Lovelace" })
        let error = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForDelete(withObjectType: "Contact", objectId: ada.id, apiVersion: nil))
        }
        #expect(error?.serverErrors.first?.errorCode == "DELETE_FAILED")
        #expect(error?.serverErrors.first?.message.hasPrefix("Your attempt to delete Ada Lovelace could not be completed because it is associated with the following cases.") == true)
        #expect(org.hasChildren(recordID: ada.id))
    }

    @Test func expiredTokensAreRefreshedAndInjectedFaultsSurface() async throws {
        let (org, client) = try await client()
        org.expireAccessTokens()
        #expect(try await client.send(request: client.requestForLimits(apiVersion: nil)).status == 200, "refreshed and replayed")
        #expect(await client.refreshCount == 1)
        org.injectFault(.failNext(2, status: 503))
        for _ in 0..<2 {
            let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
            #expect(error?.statusCode == 503)
        }
        #expect(try await client.send(request: client.requestForLimits(apiVersion: nil)).status == 200)
        org.injectFault(.dropNext(1))
        let dropped = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
        if case .network(let underlying)? = dropped { #expect(underlying is EmbeddedOrg.ConnectionDropped) } else { Issue.record("\(String(describing: dropped))") }
    }

    @Test func aRevokedRefreshTokenFailsTheRefresh() async throws {
        let org = EmbeddedOrg.sample()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer)
        let tokens = TokenClient(config: org.oauthConfig, transport: org)
        try await tokens.revoke(token: try #require(credentials.refreshToken))
        let client = RestClient(credentials: credentials, transport: org) { try await tokens.refresh($0) }
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
        guard case .apiFailed(_, let underlying as OAuthError, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(underlying == .serverError(code: "invalid_grant", description: "expired access/refresh token"))
    }
}

/// The embedded org through the real URLSession stack (a registered URLProtocol).
struct EmbeddedOrgURLSessionTests {
    @Test func loginQueryAndErrorsTravelThroughURLSession() async throws {
        let org = EmbeddedOrg.sample()
        let transport = org.urlSessionTransport()
        let (credentials, identity) = try await LoginSession(config: org.oauthConfig, transport: transport).logIn(flow: .webServer)
        #expect(identity.username == "ada@acme.com")
        let tokens = TokenClient(config: org.oauthConfig, transport: transport)
        let client = RestClient(credentials: credentials, transport: transport) { try await tokens.refresh($0) }
        let page = try await client.send(request: client.request(forQuery: "SELECT Name FROM Account ORDER BY Name", apiVersion: nil)).asJSON()
        #expect(page["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation", "Globex"])
        let created = try await client.send(request: client.requestForCreate(withObjectType: "Account", fields: ["Name": "Initech"], apiVersion: nil))
        #expect(created.status == 201, "a JSON body reaches the org through URLSession")
        org.expireAccessTokens()
        let error = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForRetrieve(withObjectType: "Account", objectId: "001000000000999AAA", fieldList: nil, apiVersion: nil))
        }
        #expect(error?.serverErrors.first?.errorCode == "NOT_FOUND", "refreshed after the 401, then the real answer")
        #expect(await client.refreshCount == 1)
        #expect(org.requestLog.filter { $0 == "POST /services/oauth2/token" }.count == 2)
    }
}

struct EmbeddedOrgDelayTests {
    @Test func anInjectedDelayHoldsTheAnswerOnTheOrgsClock() async throws {
        let clock = TestClock()
        let org = EmbeddedOrg.sample(clock: clock)
        let client = try await org.loggedInClient()
        org.injectFault(.delayNext(.seconds(5)))
        let answer = Task { try await client.send(request: client.requestForLimits(apiVersion: nil)).status }
        while clock.pendingCount == 0 { await Task.yield() }
        await clock.advance(by: .seconds(4))
        #expect(clock.pendingCount == 1, "still waiting")
        await clock.advance(by: .seconds(1))
        #expect(try await answer.value == 200)
    }
}

@MainActor
struct EmbeddedOrgMoreTests {
    @Test func theOrgPersistsToAFolderAndRestores() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("org-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let org = EmbeddedOrg.sample()
        let client = try await org.loggedInClient()
        let created = try await client.send(request: client.requestForCreate(withObjectType: "Account", fields: ["Name": "Initech", "Industry": "Software"], apiVersion: nil))
        let id = try #require(try created.asJSON()["id"]?.stringValue)
        let keyRing = try KeyRing(directory: directory.appendingPathComponent("keys"), provider: .inMemory(SecretKey.random()))
        try org.persist(to: directory.appendingPathComponent("embedded-org"), keyRing: keyRing)
        let later = EmbeddedOrg.sample()
        try later.restore(from: directory.appendingPathComponent("embedded-org"), keyRing: keyRing)
        #expect(later.record(withID: id)?["Name"] == "Initech")
        let laterClient = try await later.loggedInClient()
        let accounts = try await laterClient.send(request: laterClient.request(forQuery: "SELECT Name FROM Account ORDER BY Name", apiVersion: nil)).asJSON()
        #expect(accounts["records"]?.arrayValue?.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation", "Globex", "Initech"])
        let next = try await laterClient.send(request: laterClient.requestForCreate(withObjectType: "Account", fields: ["Name": "Hooli"], apiVersion: nil))
        #expect(try next.asJSON()["id"]?.stringValue != id, "ids keep counting after a restore")
    }
}
