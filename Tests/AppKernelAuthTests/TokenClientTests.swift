import Foundation
import AppKernelCore
import Testing
import AppKernelAuth

/// The token client against an in-process transport: wire format and error mapping.
struct TokenClientTests {
    let config = OAuthConfig(clientID: "3MVG9-unit", redirectURI: URL(string: "test://callback")!)
    let credentials = Credentials(accessToken: "old-access", refreshToken: "r+1", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                  identityURL: URL(string: "https://login.salesforce.com/id/00D/005")!, userID: "005", orgID: "00D",
                                  communityURL: URL(string: "https://acme.my.site.com/partners"))

    func client(status: Int = 200, body: String, capture: @escaping @Sendable (HTTPRequest) -> Void = { _ in }) -> TokenClient {
        TokenClient(config: config, transport: InProcessTransport { request in
            capture(request)
            return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        })
    }

    @Test func refreshSendsAStrictlyEncodedFormAndKeepsTheOldRefreshToken() async throws {
        let sent = Locked<HTTPRequest?>(nil)
        let tokens = client(body: #"{"access_token":"new","instance_url":"https://na1.salesforce.com","id":"https://login.salesforce.com/id/00D/005","issued_at":1278448832702,"token_type":"Bearer","scope":"api"}"#) { request in
            sent.withLock { $0 = request }
        }
        let fresh = try await tokens.refresh(credentials)
        #expect(fresh.accessToken == "new")
        #expect(fresh.refreshToken == "r+1")
        #expect(fresh.issuedAt == 1_278_448_832_702, "a numeric issued_at is read too")
        #expect(fresh.communityURL == credentials.communityURL, "community details carry over")
        let request = try #require(sent.withLock { $0 })
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "https://login.salesforce.com/services/oauth2/token")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body ?? Data(), as: UTF8.self) == "grant_type=refresh_token&refresh_token=r%2B1&client_id=3MVG9-unit")
    }

    @Test func serverErrorsAreTypedWithTheServersDescription() async {
        let error = await #expect(throws: OAuthError.self) {
            _ = try await client(status: 400, body: #"{"error":"invalid_grant","error_description":"expired access/refresh token"}"#).refresh(credentials)
        }
        #expect(error == .serverError(code: "invalid_grant", description: "expired access/refresh token"))
    }

    @Test func aBodyThatIsNotAnOAuthErrorKeepsItsStatus() async {
        let error = await #expect(throws: OAuthError.self) {
            _ = try await client(status: 502, body: "<html>Bad Gateway</html>").refresh(credentials)
        }
        #expect(error == .httpStatus(502, body: "<html>Bad Gateway</html>"))
        let success = await #expect(throws: OAuthError.self) { _ = try await client(body: "not json").refresh(credentials) }
        #expect(success == .unexpectedResponse(status: 200, contentType: "application/json", summary: "not json"))
    }

    @Test func anAnswerWithoutRequiredFieldsIsNamed() async {
        let error = await #expect(throws: OAuthError.self) {
            _ = try await client(body: #"{"access_token":"x","id":"https://login.salesforce.com/id/00D/005"}"#).refresh(credentials)
        }
        #expect(error == .missingParameter("instance_url"))
    }

    @Test func refreshNeedsARefreshToken() async {
        var noRefresh = credentials
        noRefresh.refreshToken = nil
        let error = await #expect(throws: OAuthError.self) { _ = try await client(body: "{}").refresh(noRefresh) }
        #expect(error == .missingParameter("refresh_token"))
    }

    @Test func aTransportFailureIsWrapped() async {
        struct Down: Error {}
        let tokens = TokenClient(config: config, transport: InProcessTransport { _ in throw Down() })
        let error = await #expect(throws: OAuthError.self) { try await tokens.revoke(token: "t") }
        if case .transport(let reason)? = error { #expect(reason.hasPrefix("POST /services/oauth2/revoke")) } else { Issue.record("\(String(describing: error))") }
    }

    @Test func responsesReadRedirectLocations() {
        let response = HTTPResponse(status: 302, headers: ["LOCATION": "/login?x=1"])
        #expect(response.location(relativeTo: URL(string: "https://login.salesforce.com/services/oauth2/authorize")!)?.absoluteString
                == "https://login.salesforce.com/login?x=1")
    }
}
