import Foundation
import Testing
import AppKernelAuth
import LoopbackServer

/// Both flows end to end, over real HTTP on loopback, through URLSession.
@Suite(.serialized, .enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
struct LoopbackLoginTests {
    func config(_ server: PythonServer) -> OAuthConfig {
        OAuthConfig(clientID: LoopbackOAuthServer.clientID, redirectURI: URL(string: "test://callback")!,
                    loginHost: server.baseURL, scopes: ["api", "refresh_token"])
    }

    func withServer(_ body: (PythonServer, OAuthConfig, URLSessionTransport) async throws -> Void) async throws {
        let server = try await LoopbackOAuthServer.start()
        defer { server.stop() }
        try await body(server, config(server), URLSessionTransport(timeout: 10))
    }

    @Test func userAgentFlowEndToEnd() async throws {
        try await withServer { server, config, transport in
            let session = LoginSession(config: config, transport: transport)
            let (credentials, identity) = try await session.logIn(flow: .userAgent, loginHint: "ada@acme.com")
            #expect(credentials.orgID == "00DACME00000001")
            #expect(credentials.userID == "005ADA000000001")
            #expect(credentials.accessToken.hasPrefix("00D!"))
            #expect(credentials.refreshToken?.hasPrefix("5Aep+") == true, "a '+' survives the fragment")
            #expect(credentials.signature == "c2lnbmF0dXJl+/=")
            #expect(credentials.instanceURL == server.baseURL)
            #expect(credentials.scopes == ["api", "refresh_token"])
            #expect(identity.username == "ada@acme.com")
            #expect(identity.displayName == "Ada Lovelace")
            #expect(identity.mobilePolicy == UserIdentity.MobilePolicy(pinLength: 4, screenLockMinutes: 10))
            #expect(identity.url(named: "rest", version: "62.0")?.absoluteString == "\(server.baseURL.absoluteString)/services/data/v62.0/")
        }
    }

    @Test func theAuthorizeRedirectIsCapturedNotFollowed() async throws {
        try await withServer { _, config, transport in
            let request = AuthorizationRequest(config: config, flow: .userAgent, loginHint: "bob@acme.com")
            let callback = try await LoginSession(config: config, transport: transport).authorize(request)
            #expect(callback.scheme == "test")
            #expect(request.isCallback(callback))
            #expect(try request.parseCallback(callback).userID == "005BOB000000002")
        }
    }

    @Test func webServerFlowWithPKCEEndToEnd() async throws {
        try await withServer { _, config, transport in
            let (credentials, identity) = try await LoginSession(config: config, transport: transport)
                .logIn(flow: .webServer, loginHint: "cy@beta.com")
            #expect(credentials.orgID == "00DBETA00000002")
            #expect(identity.userID == "005CY0000000003")
        }
    }

    @Test func aCodeExchangedWithTheWrongVerifierIsRefused() async throws {
        try await withServer { _, config, transport in
            let request = AuthorizationRequest(config: config, flow: .webServer)
            let code = try request.parseCodeCallback(try await LoginSession(config: config, transport: transport).authorize(request))
            let tokens = TokenClient(config: config, transport: transport)
            let error = await #expect(throws: OAuthError.self) {
                _ = try await tokens.exchange(code: code, codeVerifier: String(repeating: "x", count: 43))
            }
            #expect(error == .serverError(code: "invalid_grant", description: "invalid code verifier"))
        }
    }

    @Test func refreshKeepsTheRefreshTokenAndRevokeEndsIt() async throws {
        try await withServer { _, config, transport in
            let session = LoginSession(config: config, transport: transport)
            let (credentials, _) = try await session.logIn(flow: .webServer, loginHint: "ada@acme.com")
            let tokens = TokenClient(config: config, transport: transport)
            let fresh = try await tokens.refresh(credentials)
            #expect(fresh.accessToken != credentials.accessToken)
            #expect(fresh.refreshToken == credentials.refreshToken, "no refresh token came back: the old one is kept")
            #expect(try await session.identity(for: fresh).userID == "005ADA000000001")
            try await tokens.revoke(token: try #require(credentials.refreshToken))
            let refreshError = await #expect(throws: OAuthError.self) { _ = try await tokens.refresh(credentials) }
            #expect(refreshError == .serverError(code: "invalid_grant", description: "expired access/refresh token"))
            let identityError = await #expect(throws: OAuthError.self) { _ = try await session.identity(for: fresh) }
            if case .httpStatus(403, _)? = identityError {} else { Issue.record("expected 403, got \(String(describing: identityError))") }
            let revokeError = await #expect(throws: OAuthError.self) { try await tokens.revoke(token: "never-issued") }
            #expect(revokeError == .serverError(code: "unsupported_token_type", description: "this token type is not supported"))
        }
    }

    @Test func aDeniedLoginComesBackAsTheServersError() async throws {
        try await withServer { _, config, transport in
            let error = await #expect(throws: OAuthError.self) {
                _ = try await LoginSession(config: config, transport: transport).logIn(flow: .userAgent, loginHint: "eve@nowhere.com")
            }
            #expect(error == .serverError(code: "access_denied", description: "end-user denied authorization"))
        }
    }

    @Test func anUnknownClientGetsNoRedirect() async throws {
        try await withServer { _, config, transport in
            var wrong = config
            wrong.clientID = "3MVG9-unknown"
            let error = await #expect(throws: OAuthError.self) {
                _ = try await LoginSession(config: wrong, transport: transport).logIn(flow: .userAgent)
            }
            #expect(error == .noRedirect(status: 400, summary: "unknown client_id"), "the server's reason is kept")
        }
    }

    @Test func anUnreachableServerIsATransportError() async throws {
        let config = OAuthConfig(clientID: "c", redirectURI: URL(string: "test://callback")!, loginHost: URL(string: "http://127.0.0.1:9")!)
        let error = await #expect(throws: OAuthError.self) {
            _ = try await LoginSession(config: config, transport: URLSessionTransport(timeout: 5)).logIn(flow: .userAgent)
        }
        if case .transport? = error {} else { Issue.record("expected a transport error, got \(String(describing: error))") }
    }
}
