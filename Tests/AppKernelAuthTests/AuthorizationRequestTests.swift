import Foundation
import Testing
import AppKernelAuth

struct AuthorizationRequestTests {
    let config = OAuthConfig(clientID: "3MVG9+key/x", redirectURI: URL(string: "myapp://oauth/done")!,
                             loginHost: URL(string: "https://acme.my.site.com/partners/")!, scopes: ["api", "refresh_token"])

    func callback(_ fragment: String, state: String = "s1") -> URL {
        URL(string: "myapp://oauth/done#\(fragment)&state=\(state)")!
    }

    let good = "access_token=SECRETVALUE&instance_url=https%3A%2F%2Fna1.salesforce.com&id=https%3A%2F%2Flogin.salesforce.com%2Fid%2F00D1%2F0051&token_type=Bearer"

    @Test func theAuthorizeURLIsStrictlyEncoded() throws {
        let request = try AuthorizationRequest(config: config, flow: .userAgent, state: "s1", codeVerifier: nil, loginHint: "ada+1@example.com")
        #expect(request.url.absoluteString == "https://acme.my.site.com/partners/services/oauth2/authorize?response_type=token&client_id=3MVG9%2Bkey%2Fx&redirect_uri=myapp%3A%2F%2Foauth%2Fdone&display=touch&scope=api%20refresh_token&state=s1&login_hint=ada%2B1%40example.com")
        let items = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(items.first { $0.name == "client_id" }?.value == "3MVG9+key/x")
        #expect(items.first { $0.name == "scope" }?.value == "api refresh_token")
    }

    @Test func theWebServerFlowSendsAnS256Challenge() throws {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let request = try AuthorizationRequest(config: config, flow: .webServer, state: "s1", codeVerifier: verifier)
        let items = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(items.first { $0.name == "response_type" }?.value == "code")
        #expect(items.first { $0.name == "code_challenge" }?.value == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(items.first { $0.name == "code_challenge_method" }?.value == "S256")
        #expect(try request.parseCodeCallback(URL(string: "myapp://oauth/done?code=aPrx%2B1&state=s1")!) == "aPrx+1")
    }

    @Test func freshRequestsHaveFreshStatesAndVerifiers() {
        let first = AuthorizationRequest(config: config, flow: .webServer)
        let second = AuthorizationRequest(config: config, flow: .webServer)
        #expect(first.state != second.state)
        #expect(first.codeVerifier != second.codeVerifier)
        #expect((43...128).contains(first.codeVerifier?.count ?? 0))
        #expect(AuthorizationRequest(config: config, flow: .userAgent).codeVerifier == nil)
    }

    @Test func badVerifiersAreRefused() {
        for (verifier, reason) in [(String?.none, "needs one"), ("short", "5 characters"), (String(repeating: "a", count: 129), "129"),
                                   (String(repeating: "a", count: 42) + "!", "only")] {
            let error = #expect(throws: OAuthError.self) {
                _ = try AuthorizationRequest(config: config, flow: .webServer, state: "s", codeVerifier: verifier)
            }
            #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
        }
    }

    @Test func everyCallbackErrorIsTyped() throws {
        let request = try AuthorizationRequest(config: config, flow: .userAgent, state: "s1", codeVerifier: nil)
        let cases: [(URL, OAuthError)] = [
            (callback(good, state: "forged"), .stateMismatch),
            (URL(string: "myapp://oauth/done#\(good)")!, .stateMismatch),
            (callback("error=access_denied&error_description=end-user+denied+authorization"),
             .serverError(code: "access_denied", description: "end-user denied authorization")),
            (callback("instance_url=https%3A%2F%2Fx.com&id=https%3A%2F%2Fl.com%2Fid%2F1%2F2"), .missingParameter("access_token")),
            (callback("access_token=t&id=https%3A%2F%2Fl.com%2Fid%2F1%2F2"), .missingParameter("instance_url")),
            (callback("access_token=t&instance_url=https%3A%2F%2Fx.com"), .missingParameter("id")),
            (callback("access_token=t&instance_url=ftp%3A%2F%2Fx&id=https%3A%2F%2Fl.com%2Fid%2F1%2F2"),
             .malformedParameter("instance_url", reason: "not an http(s) URL")),
            (callback("access_token=t&instance_url=https%3A%2F%2Fx.com&id=https%3A%2F%2Fl.com%2Fuser"),
             .malformedParameter("id", reason: "the identity URL does not end in /id/<org id>/<user id>")),
            (callback(good + "&issued_at=yesterday"), .malformedParameter("issued_at", reason: "not a number of milliseconds")),
            (callback(good + "&state=s1"), .duplicateParameter("state")),
            (URL(string: "otherapp://oauth/done#\(good)&state=s1")!,
             .unexpectedRedirect(expected: config.redirectURI, received: URL(string: "otherapp://oauth/done#\(good)&state=s1")!)),
            (URL(string: "myapp://oauth/done?code=c&state=s1")!, .stateMismatch),
            // RFC 6749 §4.2.2 / §7.1: token_type is required, and only Bearer is used.
            (callback(good.replacingOccurrences(of: "&token_type=Bearer", with: "")), .missingParameter("token_type")),
            (callback(good.replacingOccurrences(of: "token_type=Bearer", with: "token_type=mac")), .unsupportedTokenType("mac")),
            (callback(good + "&expires_in=soon"), .malformedParameter("expires_in", reason: "not a number of seconds")),
        ]
        for (url, expected) in cases {
            let error = #expect(throws: OAuthError.self) { _ = try request.parseCallback(url) }
            #expect(error == expected, "\(url)")
            #expect(error?.description.contains("SECRETVALUE") == false, "no token in messages")
        }
        let error = #expect(throws: OAuthError.self) { _ = try request.parseCodeCallback(URL(string: "myapp://oauth/done?code=c&state=s1")!) }
        #expect(error == .wrongFlow(expected: .userAgent))
        let webServer = try AuthorizationRequest(config: config, flow: .webServer, state: "s1", codeVerifier: String(repeating: "v", count: 43))
        #expect(throws: OAuthError.missingParameter("code")) { _ = try webServer.parseCodeCallback(URL(string: "myapp://oauth/done?state=s1")!) }
        #expect(throws: OAuthError.wrongFlow(expected: .webServer)) { _ = try webServer.parseCallback(callback(good)) }
    }

    @Test func aFullCallbackYieldsEveryField() throws {
        let request = try AuthorizationRequest(config: config, flow: .userAgent, state: "s1", codeVerifier: nil)
        let credentials = try request.parseCallback(callback(good + "&refresh_token=r%2B1&issued_at=1278448832702&scope=api+web&signature=sig%3D&sfdc_community_id=0DB1&sfdc_community_url=https%3A%2F%2Facme.my.site.com%2Fpartners"))
        #expect(credentials.accessToken == "SECRETVALUE")
        #expect(credentials.refreshToken == "r+1")
        #expect(credentials.issuedAt == 1_278_448_832_702)
        #expect(credentials.scopes == ["api", "web"])
        #expect(credentials.signature == "sig=")
        #expect(credentials.tokenType == "Bearer")
        #expect(credentials.expiresAt == nil, "Salesforce sends no expires_in")
        let lowerCase = try request.parseCallback(callback(good.replacingOccurrences(of: "token_type=Bearer", with: "token_type=bEaReR") + "&expires_in=7200"))
        #expect(lowerCase.tokenType == "Bearer", "token_type is case-insensitive (RFC 6749 §5.1)")
        let expiresAt = try #require(lowerCase.expiresAt)
        #expect(abs(expiresAt.timeIntervalSinceNow - 7200) < 60)
        #expect(lowerCase.needsRefresh(at: expiresAt.addingTimeInterval(-30)), "within the minute's leeway")
        #expect(!lowerCase.needsRefresh(at: expiresAt.addingTimeInterval(-3600)))
        #expect(credentials.communityID == "0DB1")
        #expect(credentials.communityURL?.absoluteString == "https://acme.my.site.com/partners")
        #expect(credentials.orgID == "00D1")
        #expect(credentials.userID == "0051")
    }

    @Test func tokensNeverPrint() throws {
        let credentials = Credentials(accessToken: "SECRET-ACCESS", refreshToken: "SECRET-REFRESH", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                      identityURL: URL(string: "https://login.salesforce.com/id/00D/005")!, userID: "005", orgID: "00D")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), String(reflecting: credentials), dumped, "\(credentials)"] {
            #expect(!text.contains("SECRET"), "\(text)")
            #expect(text.contains("<redacted>"))
        }
    }

    @Test func endpointsFollowTheLoginHost() {
        #expect(config.tokenURL.absoluteString == "https://acme.my.site.com/partners/services/oauth2/token")
        #expect(OAuthConfig(clientID: "c", redirectURI: URL(string: "a://b")!).revokeURL.absoluteString
                == "https://login.salesforce.com/services/oauth2/revoke")
    }

    @Test func formEncodingRoundTrips() throws {
        let pairs = [("a b", "1+2=3&4"), ("ü", "https://x.com/?q=1")]
        let encoded = FormEncoding.encode(pairs)
        #expect(encoded == "a%20b=1%2B2%3D3%264&%C3%BC=https%3A%2F%2Fx.com%2F%3Fq%3D1")
        let decoded = try #require(FormEncoding.decode(encoded))
        #expect(decoded.map(\.0) == ["a b", "ü"])
        #expect(decoded.map(\.1) == ["1+2=3&4", "https://x.com/?q=1"])
        #expect(FormEncoding.decode("x=%ZZ") == nil)
        #expect(FormEncoding.decode("flag")?.first?.1 == "")
    }
}
