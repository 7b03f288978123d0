// The acceptance test of the login-and-accounts issue, as written there.
import Testing
import Foundation
import AppKernelAuth

@Test func contractUserAgentCallbackIsParsedAndStateChecked() throws {
    let config = OAuthConfig(clientID: "3MVG9-test", redirectURI: URL(string: "test://callback")!,
                             loginHost: URL(string: "https://login.salesforce.com")!, scopes: ["api", "refresh_token"])
    let request = AuthorizationRequest(config: config, flow: .userAgent)
    let query = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems)
    #expect(query.contains(URLQueryItem(name: "response_type", value: "token")))
    #expect(query.contains(URLQueryItem(name: "client_id", value: "3MVG9-test")))
    let state = try #require(query.first { $0.name == "state" }?.value)
    let callback = URL(string: "test://callback#access_token=00D%21AR8&refresh_token=5Aep%2B1&instance_url=https%3A%2F%2Fna1.salesforce.com&id=https%3A%2F%2Flogin.salesforce.com%2Fid%2F00Dx0000000BV7z%2F005x00000012Q9P&issued_at=1278448832702&signature=abc%3D&scope=api%20refresh_token&token_type=Bearer&state=\(state)")!
    let credentials = try request.parseCallback(callback)
    #expect(credentials.accessToken == "00D!AR8")
    #expect(credentials.refreshToken == "5Aep+1")
    #expect(credentials.instanceURL == URL(string: "https://na1.salesforce.com"))
    #expect(credentials.userID == "005x00000012Q9P")
    #expect(credentials.orgID == "00Dx0000000BV7z")
    #expect(!String(describing: credentials).contains("00D!AR8"))
    let forged = URL(string: "test://callback#access_token=x&instance_url=https%3A%2F%2Fna1.salesforce.com&id=https%3A%2F%2Flogin.salesforce.com%2Fid%2F00D%2F005&state=forged")!
    #expect(throws: OAuthError.self) { try request.parseCallback(forged) }
    let denied = URL(string: "test://callback#error=access_denied&error_description=end-user+denied+authorization&state=\(state)")!
    #expect(throws: OAuthError.self) { try request.parseCallback(denied) }
}
