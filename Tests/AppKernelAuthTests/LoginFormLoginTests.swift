import Foundation
import Testing
import AppKernelAuth
import LoopbackServer

// The acceptance test of issue 19 ("Log in to a real org from Linux"), as written there — but
// for the opener: the test passes `server.browser` so that it plays the browser (without it the
// system opener would print the URL, or on a desktop open a real browser).
@MainActor @Test func contractLoopbackLoginThroughARealLoginForm() async throws {
    let server = try await LoginFormServer.start()          // your stdlib test server: form first, redirect after POST
    defer { server.stop() }
    let manager = try UserAccountManager(store: InMemoryCredentialStore(), transport: URLSessionTransport())
    let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
    let authorizeURL = try await server.nextAuthorizeRequest()   // what the browser would have opened
    try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
    let account = try await login.value
    #expect(account.userIdentity?.username == "ada@example.com")
}

/// The loopback flow (RFC 8252 §7.3) against a server with a login form: every bad input ends in
/// a ``LoginError`` naming the step, and no token is kept or printed.
@MainActor @Suite(.serialized)
struct LoginFormLoginTests {
    func withServer(_ knobs: LoginFormServer.Knobs = .init(), timeout: TimeInterval = 10,
                    _ body: (LoginFormServer, UserAccountManager) async throws -> Void) async throws {
        let server = try await LoginFormServer.start(knobs)
        defer { server.stop() }
        try await body(server, try UserAccountManager(store: InMemoryCredentialStore(), transport: URLSessionTransport(timeout: timeout)))
    }

    func parameters(of url: URL) -> [String: String] {
        TestHTTPServer.decodeForm(url.query(percentEncoded: true) ?? "")
    }

    @Test func theLoopbackLoginUsesPKCEAndKeepsTheTokensAsTheRFCsSay() async throws {
        try await withServer { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser), loginHint: "ada") }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let query = parameters(of: authorizeURL)
            #expect(query["response_type"] == "code")
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["login_hint"] == "ada")
            let redirect = try #require(query["redirect_uri"].flatMap(URL.init(string:)))
            #expect(redirect.host == "127.0.0.1" && redirect.path == "/OauthRedirect" && redirect.port != nil)
            let page = try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            #expect(page.status == 200 && page.text.contains("You are logged in"))
            #expect(page.headers["cache-control"] == "no-store")
            let account = try await login.value
            #expect(account.credentials.tokenType == "Bearer", "the server said \"bearer\"")
            #expect(account.credentials.expiresAt != nil, "expires_in is kept")
            #expect(account.userIdentity?.mobilePolicy == UserIdentity.MobilePolicy(pinLength: 6, screenLockMinutes: 5), "numbers sent as strings")
            #expect(manager.currentIdentity == account.identity)
            let exchange = try #require(server.tokenRequests.first)
            #expect(exchange["redirect_uri"] == redirect.absoluteString, "the exchange names the same redirect URI")
            #expect(exchange["code_verifier"]?.count == 64)
        }
    }

    @Test func aFixedPortFromTheRedirectURIAsConnectedAppsRegisterIt() async throws {
        try await withServer { server, manager in
            let probe = try TestHTTPServer.start { _ in .init(status: 200) }
            let port = probe.port
            probe.stop()
            var config = server.oauthConfig
            config.redirectURI = URL(string: "http://localhost:\(port)/OauthRedirect")!
            let login = Task { try await manager.logIn(config: config, using: .loopback(opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            #expect(parameters(of: authorizeURL)["redirect_uri"] == "http://localhost:\(port)/OauthRedirect")
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            #expect(try await login.value.userIdentity?.username == "ada@example.com")
        }
    }

    @Test func forgedAndStrayRequestsAreRefusedAndTheWaitGoesOn() async throws {
        try await withServer { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let query = parameters(of: authorizeURL)
            let redirect = try #require(query["redirect_uri"])
            let state = try #require(query["state"])
            let browser = URLSessionTransport(timeout: 10)
            func get(_ text: String) async throws -> HTTPResponse { try await browser.send(HTTPRequest(url: URL(string: text)!)) }
            let wrongState = try await get("\(redirect)?code=stolen&state=forged")
            #expect(wrongState.status == 400 && wrongState.text.contains("does not belong to the login in progress"))
            let missingState = try await get("\(redirect)?code=stolen")
            #expect(missingState.status == 400)
            let twice = try await get("\(redirect)?code=stolen&state=\(state)&state=\(state)")
            #expect(twice.status == 400, "a repeated parameter is not trusted")
            let favicon = try await get(redirect.replacingOccurrences(of: "/OauthRedirect", with: "/favicon.ico"))
            #expect(favicon.status == 404)
            let posted = try await browser.send(HTTPRequest(method: "POST", url: URL(string: "\(redirect)?code=x&state=\(state)")!))
            #expect(posted.status == 405)
            let escaped = try await get("\(redirect)?state=forged&error=%3Cscript%3E")
            #expect(!escaped.text.contains("<script>"), "nothing from a request is echoed unescaped")
            // The real callback still ends the login.
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            #expect(try await login.value.userIdentity?.username == "ada@example.com")
            #expect(server.tokenRequests.count == 1, "no forged code was exchanged")
        }
    }

    @Test func aSecondCallbackFindsTheListenerClosed() async throws {
        try await withServer { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let callback = try await server.submitLoginForm(at: authorizeURL, user: "ada", password: "secret")
            let first = try await URLSessionTransport(timeout: 10).send(HTTPRequest(url: callback))
            #expect(first.status == 200)
            _ = try await login.value
            await #expect(throws: (any Error).self, "exactly one callback: the listener is closed") {
                _ = try await URLSessionTransport(timeout: 5).send(HTTPRequest(url: callback))
            }
            #expect(manager.allAccounts.count == 1)
        }
    }

    @Test func anErrorCallbackEndsTheLoginWithTheServersError() async throws {
        try await withServer { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let page = try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "", action: "deny")
            #expect(page.text.contains("Login failed") && page.text.contains("access_denied"))
            let error = await #expect(throws: LoginError.self) { try await login.value }
            #expect(error == LoginError(step: .callback, error: .serverError(code: "access_denied", description: "end-user denied authorization")))
            #expect(manager.allAccounts.isEmpty)
        }
    }

    @Test func aPortInUseIsATypedError() async throws {
        try await withServer { server, manager in
            let error = await #expect(throws: LoginError.self) {
                try await manager.logIn(config: server.oauthConfig, using: .loopback(port: server.http.port, opener: server.browser))
            }
            #expect(error == LoginError(step: .listen, error: .portInUse(Int(server.http.port))))
            #expect(error?.description.contains("in use") == true)
        }
    }

    @Test func aRedirectURIThatIsNotLoopbackIsRefusedBeforeListening() async throws {
        try await withServer { server, manager in
            var config = server.oauthConfig
            config.redirectURI = URL(string: "https://example.com/callback")!
            let error = await #expect(throws: LoginError.self) { try await manager.logIn(config: config, using: .loopback(port: 0)) }
            #expect(error?.step == .listen)
            if case .malformedParameter("redirect_uri", _)? = error?.error {} else { Issue.record("\(String(describing: error))") }
        }
    }

    @Test func theWaitHasADeadlineOnTheGivenClock() async throws {
        try await withServer { server, manager in
            let clock = ManualClock()
            let login = Task {
                try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser, timeout: .seconds(120), clock: clock))
            }
            let authorizeURL = try await server.nextAuthorizeRequest()
            await clock.waitForSleepers()
            clock.advance(by: .seconds(119))
            clock.advance(by: .seconds(1))
            let error = await #expect(throws: LoginError.self) { try await login.value }
            #expect(error?.step == .awaitCallback)
            if case .timedOut? = error?.error {} else { Issue.record("\(String(describing: error))") }
            #expect(clock.sleeps == [.seconds(120)])
            await #expect(throws: (any Error).self, "the listener is closed") {
                try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            }
        }
    }

    @Test func cancellingTheLoginEndsItAndClosesTheListener() async throws {
        try await withServer { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            login.cancel()                                        // what the app does on Ctrl-C
            let error = await #expect(throws: LoginError.self) { try await login.value }
            #expect(error == LoginError(step: .awaitCallback, error: .cancelled))
            await #expect(throws: (any Error).self) {
                try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            }
        }
    }

    @Test func anOpenerThatFailsNamesTheStep() async throws {
        try await withServer { server, manager in
            struct NoBrowser: Error {}
            let error = await #expect(throws: LoginError.self) {
                try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: BrowserOpener { _ in throw NoBrowser() }))
            }
            #expect(error?.step == .openBrowser)
        }
    }

    @Test func aLoginFormIsNeverAutoApproved() async throws {
        try await withServer { server, manager in
            let error = await #expect(throws: LoginError.self) { try await manager.logIn(config: server.oauthConfig, using: .autoApprove()) }
            #expect(error?.step == .authorize)
            guard case .noRedirect(200, let summary?)? = error?.error else { Issue.record("\(String(describing: error))"); return }
            #expect(summary.hasPrefix("Log in to Form Org"))
            #expect(error?.description.contains("log in with .loopback or .deviceFlow") == true)
            // The entry point of earlier callers is the same testing mode, and throws OAuthError.
            await #expect(throws: OAuthError.self) { try await manager.logIn(config: server.oauthConfig, flow: .webServer) }
        }
    }

    @Test func anAuthorizeErrorPageKeepsTheServersReason() async throws {
        try await withServer { server, manager in
            var config = server.oauthConfig
            config.clientID = "3MVG9-unknown"
            let error = await #expect(throws: LoginError.self) { try await manager.logIn(config: config, using: .autoApprove()) }
            #expect(error == LoginError(step: .authorize, error: .noRedirect(
                status: 400, summary: "Error: OAUTH_EC_APP_NOT_FOUND: The client_id 3MVG9-unknown is not a connected app of this org.")))
        }
    }

    @Test func theAppsOwnUserAgentHandsBackTheCallback() async throws {
        try await withServer { server, manager in
            var config = server.oauthConfig
            config.redirectURI = URL(string: "appkernel://oauth/done")!
            let account = try await manager.logIn(config: config, using: .userAgent { authorizeURL in
                try await server.submitLoginForm(at: authorizeURL, user: "ada", password: "secret")
            })
            #expect(account.userIdentity?.username == "ada@example.com")
        }
    }

    // MARK: Token responses

    func failingLogin(_ knobs: LoginFormServer.Knobs, timeout: TimeInterval = 10) async throws -> (LoginError?, LoginFormServer) {
        var result: (LoginError?, LoginFormServer)?
        try await withServer(knobs, timeout: timeout) { server, manager in
            let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            let error = await #expect(throws: LoginError.self) { try await login.value }
            #expect(manager.allAccounts.isEmpty, "no token is kept")
            for token in server.issuedAccessTokens {
                #expect(error?.description.contains(token) == false, "no token is printed")
                #expect(!String(reflecting: error as Any).contains(token))
            }
            result = (error, server)
        }
        return try #require(result)
    }

    @Test func aMacTokenIsRefused() async throws {
        var knobs = LoginFormServer.Knobs()
        knobs.tokenType = "mac"
        let (error, _) = try await failingLogin(knobs)
        #expect(error == LoginError(step: .tokenExchange, error: .unsupportedTokenType("mac")))
    }

    @Test func anHTMLPageInsteadOfJSONIsTyped() async throws {
        var knobs = LoginFormServer.Knobs()
        knobs.tokenAnswer = .html
        let (error, _) = try await failingLogin(knobs)
        #expect(error == LoginError(step: .tokenExchange, error: .unexpectedResponse(
            status: 200, contentType: "text/html; charset=utf-8",
            summary: "Scheduled Maintenance: The service is down for maintenance; please try again later.")))
    }

    @Test func aTricklingServerHitsTheWholeRequestDeadline() async throws {
        var knobs = LoginFormServer.Knobs()
        knobs.tokenAnswer = .trickle                          // one byte a second: an idle timeout never trips
        let (error, server) = try await failingLogin(knobs, timeout: 2)
        #expect(error?.step == .tokenExchange)
        #expect(error?.error == .timedOut("POST /services/oauth2/token: no complete answer within 2 s"))
        // Timed by the server, which a loaded machine does not delay as it does this task's
        // resumption: the answer trickled for minutes, and the 2 s deadline cut it off.
        let token = await server.http.log.closedConnection(labelled: "/services/oauth2/token", within: .seconds(60))
        let duration = try #require(token?.duration)
        #expect(duration < .seconds(30), "the 2 s deadline holds (\(duration)), where a byte a second kept it for the whole body")
    }
}
