import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST

let instance = URL(string: "https://na1.salesforce.com")!
func credentials(_ token: String = "T1") -> Credentials {
    Credentials(accessToken: token, refreshToken: "R", instanceURL: instance,
                identityURL: URL(string: "https://login.salesforce.com/id/00D/005")!, userID: "005", orgID: "00D")
}

struct RequestBuilderTests {
    let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in HTTPResponse(status: 200) })

    func wire(_ request: RestRequest) -> String {
        let http = request.httpRequest(instanceURL: instance, accessToken: "T1")
        let body = http.body.map { " " + String(decoding: $0, as: UTF8.self) } ?? ""
        return "\(http.method) \(http.url.absoluteString)\(body)"
    }

    @Test func everyBuilderHasTheRESTAPIsWireForm() {
        let base = "https://na1.salesforce.com/services/data/v62.0"
        let cases: [(RestRequest, String)] = [
            (client.request(forQuery: "SELECT Name, Id FROM Contact WHERE Name = 'A+B'", apiVersion: nil),
             "GET \(base)/query?q=SELECT%20Name%2C%20Id%20FROM%20Contact%20WHERE%20Name%20%3D%20%27A%2BB%27"),
            (client.requestForQueryAll("SELECT Id FROM Case", apiVersion: "v59.0"),
             "GET https://na1.salesforce.com/services/data/v59.0/queryAll?q=SELECT%20Id%20FROM%20Case"),
            (client.requestForSearch("FIND {Ada}", apiVersion: nil), "GET \(base)/search?q=FIND%20%7BAda%7D"),
            (client.requestForCreate(withObjectType: "Contact", fields: ["LastName": "Lovelace", "Age": 36], apiVersion: nil),
             #"POST \#(base)/sobjects/Contact {"Age":36,"LastName":"Lovelace"}"#),
            (client.requestForRetrieve(withObjectType: "Contact", objectId: "003A", fieldList: ["Name", "Email"], apiVersion: nil),
             "GET \(base)/sobjects/Contact/003A?fields=Name%2CEmail"),
            (client.requestForRetrieve(withObjectType: "Contact", objectId: "003A", fieldList: nil, apiVersion: nil),
             "GET \(base)/sobjects/Contact/003A"),
            (client.requestForUpdate(withObjectType: "Contact", objectId: "003A", fields: ["Title": "Countess"], apiVersion: nil),
             #"PATCH \#(base)/sobjects/Contact/003A {"Title":"Countess"}"#),
            (client.requestForUpsert(withObjectType: "Account", externalIdField: "Ext__c", externalId: "A/1", fields: ["Name": "Acme"], apiVersion: nil),
             #"PATCH \#(base)/sobjects/Account/Ext__c/A%2F1 {"Name":"Acme"}"#),
            (client.requestForUpsert(withObjectType: "Account", externalIdField: "Id", externalId: "", fields: ["Name": "Acme"], apiVersion: nil),
             #"POST \#(base)/sobjects/Account/Id {"Name":"Acme"}"#),
            (client.requestForRetrieve(withObjectType: "Account", externalIdField: "Ext__c", externalId: "A/1", fieldList: ["Name"], apiVersion: nil),
             "GET \(base)/sobjects/Account/Ext__c/A%2F1?fields=Name"),
            (client.requestForParameterizedSearch("Acme Inc", objectTypes: ["Account": ["Id", "Name"], "Contact": []], limitPerType: 5, apiVersion: nil),
             "GET \(base)/parameterizedSearch?q=Acme%20Inc&sobject=Account&Account.fields=Id%2CName&sobject=Contact&defaultLimit=5"),
            (client.requestForDelete(withObjectType: "Contact", objectId: "003A", apiVersion: nil), "DELETE \(base)/sobjects/Contact/003A"),
            (client.requestForDescribe(withObjectType: "Account", apiVersion: nil), "GET \(base)/sobjects/Account/describe"),
            (client.requestForDescribeGlobal(apiVersion: nil), "GET \(base)/sobjects"),
            (client.requestForVersions(), "GET https://na1.salesforce.com/services/data"),
            (client.requestForLimits(apiVersion: nil), "GET \(base)/limits"),
            (client.requestForUserInfo(), "GET https://na1.salesforce.com/services/oauth2/userinfo"),
            (client.request(method: .post, path: "services/apexrest/Hello", queryParameters: [.init("x", "1 2")], body: ["a": true]),
             #"POST https://na1.salesforce.com/services/apexrest/Hello?x=1%202 {"a":true}"#),
        ]
        for (request, expected) in cases { #expect(wire(request) == expected) }
    }

    @Test func requestsCarryBearerAuthAndStableIDs() {
        let request = client.requestForDelete(withObjectType: "Contact", objectId: "003A", apiVersion: nil)
        let http = request.httpRequest(instanceURL: instance, accessToken: "T1")
        #expect(http.headers["Authorization"] == "Bearer T1")
        #expect(http.headers["Accept"] == "application/json")
        #expect(http.headers["Content-Type"] == nil)
        #expect(client.requestForCreate(withObjectType: "A", fields: [:], apiVersion: nil)
            .httpRequest(instanceURL: instance, accessToken: "x").headers["Content-Type"] == "application/json")
        #expect(request.id == request.id)
        #expect(request.id != client.requestForDelete(withObjectType: "Contact", objectId: "003A", apiVersion: nil).id)
    }
}

struct RestErrorTests {
    @Test func nonSuccessAnswersCarryTheServersErrors() async throws {
        let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in
            HTTPResponse(status: 400, body: Data(#"[{"message":"Your attempt to delete Ada could not be completed","errorCode":"DELETE_FAILED","fields":[]}]"#.utf8))
        })
        let error = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.requestForDelete(withObjectType: "Contact", objectId: "003A", apiVersion: nil))
        }
        #expect(error?.statusCode == 400)
        #expect(error?.serverErrors == [ServerError(message: "Your attempt to delete Ada could not be completed", errorCode: "DELETE_FAILED")])
        #expect(error?.userFacingMessage(fallback: "Failed to delete item") == "Your attempt to delete Ada could not be completed")
        #expect(error?.description == "the REST call failed with HTTP 400 DELETE_FAILED: Your attempt to delete Ada could not be completed")
        if case .apiFailed(let response?, nil, _)? = error { #expect(response.status == 400) } else { Issue.record("\(String(describing: error))") }
    }

    @Test func aBodyThatIsNotAnErrorArrayIsSurfacedAfterTheFallback() async {
        let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in HTTPResponse(status: 500, body: Data("oops".utf8)) })
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
        #expect(error?.serverErrors.isEmpty == true)
        #expect(error?.userFacingMessage(fallback: "Failed to delete item") == "Failed to delete item (HTTP 500: oops)")
        #expect(error?.description == "the REST call failed with HTTP 500: oops")
        let alias = RestClientError.apiInvocationFailed(response: nil, underlyingError: nil, urlResponse: nil)
        if case .apiFailed = alias {} else { Issue.record("the alias builds apiFailed") }
    }

    @Test func responsesDecode() throws {
        let response = RestResponse(status: 200, data: Data(#"{"totalSize":1,"done":true,"records":[{"Id":"003A","Name":"Ada"}]}"#.utf8))
        #expect(try response.asJSON()["records"]?[0]?["Name"] == "Ada")
        #expect(try response.asJSON()["done"] == true)
        #expect(try response.asJSON()["totalSize"] == 1)
        struct Page: Decodable { var totalSize: Int }
        #expect(try response.asDecodable(Page.self).totalSize == 1)
        #expect(response.asString.hasPrefix("{\"totalSize\""))
        #expect(throws: RestClientError.self) { _ = try RestResponse(status: 204).asJSON() }
        #expect(throws: RestClientError.self) { _ = try RestResponse(status: 200, data: Data("<html>".utf8)).asJSON() }
        #expect(throws: RestClientError.self) { _ = try response.asDecodable([String].self) }
    }

    @Test func transportFailuresAndCancellationAreTyped() async {
        struct Dropped: Error {}
        let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in throw Dropped() })
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForVersions()) }
        if case .network(let underlying)? = error { #expect(underlying is Dropped) } else { Issue.record("\(String(describing: error))") }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(request: client.requestForVersions())
        }
        let result = await task.result
        guard case .failure(let failure as RestClientError) = result, case .cancelled = failure else {
            Issue.record("expected cancellation, got \(result)")
            return
        }
    }
}

/// A fake org that refuses a token until it is refreshed, counting what it sees. After
/// `refusalsBeforeOpening` refusals it opens `gate`, which the refresher waits on: so the test
/// knows every request got its 401 while the one refresh was still running — no sleeping.
actor TokenCheckingServer {
    var validToken = "T1"
    var requestsSeen: [String] = []
    var refusals = 0
    let refusalsBeforeOpening: Int
    let gate = Gate()
    init(refusalsBeforeOpening: Int = 0) { self.refusalsBeforeOpening = refusalsBeforeOpening }
    func expireToken() { validToken = "T2" }
    func answer(_ request: HTTPRequest) async -> HTTPResponse {
        let token = String(request.headers["Authorization"]?.dropFirst("Bearer ".count) ?? "")
        requestsSeen.append("\(request.url.path) with \(token)")
        guard token == validToken else {
            refusals += 1
            if refusals == refusalsBeforeOpening { await gate.open() }
            return HTTPResponse(status: 401, body: Data(#"[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]"#.utf8))
        }
        return HTTPResponse(status: 200, body: Data(#"{"ok":true}"#.utf8))
    }
}

/// Suspends waiters until opened.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}

actor RefreshCounter {
    var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}

struct SharedRefreshTests {
    @Test func manyConcurrent401sShareOneRefreshAndEachIsReplayedOnce() async throws {
        let server = TokenCheckingServer(refusalsBeforeOpening: 20)
        await server.expireToken()
        let refreshes = RefreshCounter()
        let client = RestClient(credentials: credentials("T1"), transport: InProcessTransport { await server.answer($0) }) { old in
            _ = await refreshes.next()
            await server.gate.wait()   // the token endpoint answers only once all 20 requests were refused
            var fresh = old
            fresh.accessToken = "T2"
            return fresh
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { _ = try await client.send(request: client.request(method: .get, path: "/r\(index)")) }
            }
            try await group.waitForAll()
        }
        #expect(await refreshes.count == 1)
        #expect(await client.refreshCount == 1)
        #expect(await client.credentials.accessToken == "T2")
        let seen = await server.requestsSeen
        #expect(seen.count == 40, "each request once with the old token, once replayed")
        for index in 0..<20 {
            #expect(seen.filter { $0 == "/r\(index) with T2" }.count == 1)
        }
    }

    @Test func aFailedRefreshFailsEveryWaitingRequestWithItsError() async throws {
        let server = TokenCheckingServer(refusalsBeforeOpening: 5)
        await server.expireToken()
        let refreshes = RefreshCounter()
        let client = RestClient(credentials: credentials("T1"), transport: InProcessTransport { await server.answer($0) }) { _ in
            _ = await refreshes.next()
            await server.gate.wait()
            throw OAuthError.serverError(code: "invalid_grant", description: "expired access/refresh token")
        }
        let results = await withTaskGroup(of: RestClientError?.self) { group in
            for index in 0..<5 {
                group.addTask {
                    do throws(RestClientError) {
                        _ = try await client.send(request: client.request(method: .get, path: "/r\(index)"))
                        return nil
                    } catch { return error }
                }
            }
            return await group.reduce(into: [RestClientError?]()) { $0.append($1) }
        }
        #expect(results.count == 5)
        for error in results {
            guard case .apiFailed(let response, let underlying, let urlResponse?)? = error, response == nil,
                  let underlying = underlying as? OAuthError else { Issue.record("\(String(describing: error))"); continue }
            #expect(underlying == .serverError(code: "invalid_grant", description: "expired access/refresh token"))
            #expect(urlResponse.status == 401)
        }
        #expect(await refreshes.count == 1, "one refresh, failed for all; nothing retried")
        #expect(await server.requestsSeen.count == 5, "nothing is replayed after a failed refresh")
    }

    @Test func withoutARefresherA401IsFinal() async {
        let server = TokenCheckingServer()
        await server.expireToken()
        let client = RestClient(credentials: credentials("T1"), transport: InProcessTransport { await server.answer($0) })
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForVersions()) }
        #expect(error?.statusCode == 401)
    }

    @Test func aBadOAuthToken403AlsoRefreshes() async throws {
        let calls = RefreshCounter()
        let client = RestClient(credentials: credentials("T1"), transport: InProcessTransport { request in
            request.headers["Authorization"] == "Bearer T2" ? HTTPResponse(status: 200)
                : HTTPResponse(status: 403, body: Data(#"[{"message":"Bad_OAuth_Token","errorCode":"Bad_OAuth_Token"}]"#.utf8))
        }) { old in
            _ = await calls.next()
            var fresh = old
            fresh.accessToken = "T2"
            return fresh
        }
        #expect(try await client.send(request: client.requestForVersions()).status == 200)
        #expect(await calls.count == 1)
    }

    @Test @MainActor func theCompletionFormDeliversOnceOnTheMainActor() async {
        let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in HTTPResponse(status: 204) })
        var deliveries: [Int] = []
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            client.send(request: client.requestForVersions()) { result in
                MainActor.assertIsolated()
                deliveries.append((try? result.get().status) ?? -1)
                done.resume()
            }
        }
        #expect(deliveries == [204])
    }
}
