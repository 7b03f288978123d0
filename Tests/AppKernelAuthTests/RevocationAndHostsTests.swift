import Foundation
import Testing
import AppKernelAuth
import AppKernelCore
import LoopbackServer

/// RFC 7009 revocation with persisted retries, login hosts, and the token rules (401 bodies,
/// expiry-driven refresh).
@MainActor @Suite(.serialized)
struct RevocationAndHostsTests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("auth-\(UUID().uuidString)")
    }

    func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    func logIn(_ manager: UserAccountManager, _ server: LoginFormServer) async throws -> UserAccount {
        let login = Task { try await manager.logIn(config: server.oauthConfig, using: .loopback(port: 0, opener: server.browser)) }
        try await server.playBrowser(submittingLoginFormAt: try await server.nextAuthorizeRequest(), user: "ada", password: "secret")
        return try await login.value
    }

    @Test func revokeSendsTheTokenItsHintAndTheClientID() async throws {
        let server = try await LoginFormServer.start()
        defer { server.stop() }
        let manager = try UserAccountManager(store: InMemoryCredentialStore(), transport: URLSessionTransport(timeout: 10))
        let account = try await logIn(manager, server)
        var events: [AccountEvent] = []
        let observation = manager.observe { events.append($0) }
        await manager.logout(account.identity, reason: .userInitiated)
        #expect(server.revokeRequests == [["token": try #require(account.credentials.refreshToken), "token_type_hint": "refresh_token",
                                           "client_id": LoginFormServer.clientID]])
        #expect(!server.isValid(accessToken: account.credentials.accessToken), "revoking the refresh token ended its access token")
        #expect(manager.pendingRevocations.isEmpty && manager.failedRevocations.isEmpty)
        #expect(!events.contains { if case .revocationFailed = $0 { true } else { false } })
        // The strict server refuses a token sent without client_id, as RFC 7009 lets it.
        let bare = try await URLSessionTransport(timeout: 10).send(.form(server.oauthConfig.revokeURL, [("token", "x")]))
        #expect(bare.status == 401 && bare.text.contains("invalid_client"))
        withExtendedLifetime(observation) {}
    }

    @Test func aFailedRevokeIsKeptAndRetriedByTheNextLaunch() async throws {
        var knobs = LoginFormServer.Knobs()
        knobs.revokeFails = true
        let server = try await LoginFormServer.start(knobs)
        defer { server.stop() }
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let manager = try UserAccountManager(store: FileCredentialStore(testRoot: root), transport: URLSessionTransport(timeout: 10))
        let account = try await logIn(manager, server)
        let refreshToken = try #require(account.credentials.refreshToken)
        var events: [AccountEvent] = []
        let observation = manager.observe { events.append($0) }
        await manager.logout(account.identity, reason: .userInitiated)
        #expect(events == [.willLogout(account.identity, .userInitiated), .revocationFailed(account.identity, willRetry: true),
                           .didLogout(account.identity, .userInitiated), .orgDidLogout(account.identity.orgID)])
        #expect(manager.allAccounts.isEmpty, "the logout went on")
        let pending = try #require(manager.pendingRevocations.first)
        #expect(pending.identity == account.identity && pending.tokenTypeHint == .refreshToken && pending.attempts == 1)
        #expect(pending.lastFailure.contains("503"))
        var dumped = ""
        dump(pending, to: &dumped)
        #expect(!"\(pending) \(dumped)".contains(refreshToken), "a pending revocation prints without its token")
        let file = root.appendingPathComponent(FileCredentialStore.pendingRevocationsFileName)
        #expect(try mode(file) == 0o600)
        // A retry that fails again keeps it, counted.
        await manager.retryFailedRevocations()
        #expect(manager.pendingRevocations.first?.attempts == 2)

        // The next launch: a new manager on the same store retries it, and this time it goes through.
        server.change { $0.revokeFails = false }
        let relaunched = try UserAccountManager(store: FileCredentialStore(testRoot: root), transport: URLSessionTransport(timeout: 10))
        #expect(relaunched.pendingRevocations.count == 1)
        var relaunchEvents: [AccountEvent] = []
        let relaunchObservation = relaunched.observe { relaunchEvents.append($0) }
        await relaunched.retryFailedRevocations()             // waits for the retry the launch started
        #expect(relaunched.pendingRevocations.isEmpty)
        #expect(relaunchEvents == [.revocationCompleted(account.identity)])
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(server.revokeRequests.last == ["token": refreshToken, "token_type_hint": "refresh_token", "client_id": LoginFormServer.clientID])
        #expect(server.revokeRequests.count == 3)
        #expect(try UserAccountManager(store: FileCredentialStore(testRoot: root), transport: URLSessionTransport()).pendingRevocations.isEmpty)
        withExtendedLifetime((observation, relaunchObservation)) {}
    }

    @Test func theNextLogoutRetriesWhatIsPendingAndAFinalRefusalIsDropped() async throws {
        let answers = Locked<[Int]>([503, 200, 400])
        let sent = Locked<[String]>([])
        let transport = InProcessTransport { request in
            sent.withLock { $0.append(String(decoding: request.body ?? Data(), as: UTF8.self)) }
            let status = answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            return HTTPResponse(status: status, headers: ["Content-Type": "application/json"],
                                body: status == 400 ? Data(#"{"error":"unsupported_token_type","error_description":"no"}"#.utf8) : Data())
        }
        let manager = try UserAccountManager(store: InMemoryCredentialStore(), transport: transport)
        func account(_ user: String, refresh: String?) -> UserAccount {
            UserAccount(credentials: Credentials(accessToken: "AT-\(user)", refreshToken: refresh, instanceURL: URL(string: "https://na1.salesforce.com")!,
                                                 identityURL: URL(string: "https://login.salesforce.com/id/00D/\(user)")!, userID: user, orgID: "00D"),
                        loginHost: OAuthConfig.productionLoginHost, clientID: "client")
        }
        try manager.add(account("005A", refresh: "RT-A"))
        try manager.add(account("005B", refresh: nil))
        var events: [AccountEvent] = []
        let observation = manager.observe { if case .revocationFailed = $0 { events.append($0) } else if case .revocationCompleted = $0 { events.append($0) } }
        let a = UserAccountIdentity(userID: "005A", orgID: "00D")
        let b = UserAccountIdentity(userID: "005B", orgID: "00D")
        await manager.logout(a, reason: .userInitiated)              // 503: kept
        await manager.logout(b, reason: .userInitiated)              // 200 for B's access token, then A's retry: 400, final
        #expect(sent.withLock { $0 } == ["token=RT-A&token_type_hint=refresh_token&client_id=client",
                                         "token=AT-005B&token_type_hint=access_token&client_id=client",
                                         "token=RT-A&token_type_hint=refresh_token&client_id=client"])
        #expect(events == [.revocationFailed(a, willRetry: true), .revocationFailed(a, willRetry: false)])
        #expect(manager.pendingRevocations.isEmpty)
        #expect(manager.failedRevocations.map { $0.0 } == [a, a])
        #expect(manager.failedRevocations.last?.1 == .serverError(code: "unsupported_token_type", description: "no"))
        withExtendedLifetime(observation) {}
    }

    // MARK: Login hosts

    @Test func loginHostsAreKeptChosenAndChecked() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hosts = try LoginHostStorage(directory: directory)
        #expect(hosts.hosts == [.production, .sandbox])
        #expect(hosts.selected == .production)
        #expect(hosts.selected.url.absoluteString == "https://login.salesforce.com")
        let acme = try hosts.add(name: "Acme", host: "https://ACME.my.salesforce.com/", select: true)
        #expect(acme.host == "acme.my.salesforce.com" && acme.isDeletable)
        try hosts.add(name: "Partners", host: "acme.my.site.com/partners")
        try hosts.add(name: "Local", host: "http://127.0.0.1:8080")
        #expect(hosts.hosts.map(\.host) == ["login.salesforce.com", "test.salesforce.com", "acme.my.salesforce.com", "acme.my.site.com/partners",
                                            "http://127.0.0.1:8080"])
        let file = directory.appendingPathComponent(LoginHostStorage.fileName)
        #expect(try mode(file) == 0o600)

        let reloaded = try LoginHostStorage(directory: directory)
        #expect(reloaded.hosts == hosts.hosts)
        #expect(reloaded.selected.name == "Acme")
        #expect(OAuthConfig(clientID: "c", redirectURI: URL(string: "http://localhost:1717/OauthRedirect")!, loginHost: reloaded.selected)
            .authorizeURL.absoluteString == "https://acme.my.salesforce.com/services/oauth2/authorize")
        #expect(reloaded.hosts[3].url.absoluteString == "https://acme.my.site.com/partners")

        try reloaded.remove("acme.my.salesforce.com")
        #expect(reloaded.selected == .production, "removing the chosen host chooses production")
        try reloaded.select("test.salesforce.com")
        #expect(try LoginHostStorage(directory: directory).selected == .sandbox)
        #expect(try LoginHostStorage(directory: directory).hosts.count == 4)

        #expect(throws: LoginHostError.notDeletable("login.salesforce.com")) { try reloaded.remove("login.salesforce.com") }
        #expect(throws: LoginHostError.notDeletable("test.salesforce.com")) { try reloaded.remove("https://test.salesforce.com") }
        #expect(throws: LoginHostError.unknownHost("nowhere.example.com")) { try reloaded.select("nowhere.example.com") }
        #expect(throws: LoginHostError.duplicate(host: "acme.my.site.com/partners", existingName: "Partners")) {
            try reloaded.add(name: "Again", host: "acme.my.site.com/partners/")
        }
        #expect(throws: LoginHostError.emptyHost) { try reloaded.add(name: "Empty", host: "  ") }
        #expect(throws: LoginHostError.emptyName) { try reloaded.add(name: " ", host: "x.example.com") }
        for bad in ["http://acme.my.salesforce.com", "ftp://acme.com", "acme .com", "acme..com", "-acme.com", "acme.com?x=1",
                    "user:pw@acme.com", "localhost.", "ünicode.com", "intranet", String(repeating: "a", count: 64) + ".com"] {
            let error = #expect(throws: LoginHostError.self, "\(bad)") { try reloaded.add(name: "Bad", host: bad) }
            if case .invalidHost? = error {} else { Issue.record("\(bad): \(String(describing: error))") }
        }
        #expect(try LoginHostStorage(directory: directory).hosts.count == 4, "refused hosts were not kept")
        try Data("not json".utf8).write(to: file)
        #expect(throws: LoginHostError.self) { try LoginHostStorage(directory: directory) }
    }

    // MARK: Tokens

    @Test func a401SaysWhyInItsBodyOrItsHeader() async throws {
        let credentials = Credentials(accessToken: "expired", refreshToken: nil, instanceURL: URL(string: "https://na1.salesforce.com")!,
                                      identityURL: URL(string: "https://login.salesforce.com/id/00D/005")!, userID: "005", orgID: "00D")
        let config = OAuthConfig(clientID: "c", redirectURI: URL(string: "http://localhost/cb")!)
        let header = InProcessTransport { _ in
            HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer realm="x", error="invalid_token", error_description="The access token expired""#])
        }
        let headerError = await #expect(throws: OAuthError.self) { _ = try await LoginSession(config: config, transport: header).identity(for: credentials) }
        #expect(headerError == .serverError(code: "invalid_token", description: "The access token expired"))
        let body = InProcessTransport { _ in
            HTTPResponse(status: 401, body: Data(#"{"error":"invalid_token","error_description":"expired","error_uri":"https://help.example.com/t"}"#.utf8))
        }
        let bodyError = await #expect(throws: OAuthError.self) { _ = try await LoginSession(config: config, transport: body).identity(for: credentials) }
        #expect(bodyError == .serverError(code: "invalid_token", description: "expired", uri: URL(string: "https://help.example.com/t")))
        let refreshError = await #expect(throws: OAuthError.self) {
            var withRefresh = credentials
            withRefresh.refreshToken = "r"
            _ = try await TokenClient(config: config, transport: header).refresh(withRefresh)
        }
        #expect(refreshError == .serverError(code: "invalid_token", description: "The access token expired"))
    }

    @Test func mobilePolicyValuesAreReadAsNumbersOrStrings() throws {
        func identity(_ policy: String) throws -> UserIdentity {
            try UserIdentity(json: Data(#"{"user_id":"005","organization_id":"00D","username":"u@x.com","mobile_policy":\#(policy)}"#.utf8))
        }
        #expect(try identity(#"{"pin_length":4,"screen_lock":10}"#).mobilePolicy == UserIdentity.MobilePolicy(pinLength: 4, screenLockMinutes: 10))
        #expect(try identity(#"{"pin_length":"6","screen_lock":"5"}"#).mobilePolicy == UserIdentity.MobilePolicy(pinLength: 6, screenLockMinutes: 5))
        #expect(try identity(#"{"pin_length":"six"}"#).mobilePolicy == UserIdentity.MobilePolicy())
    }

    @Test func credentialsAboutToExpireAreRefreshedBeforeA401() async throws {
        let refreshes = Locked(0)
        let transport = InProcessTransport { _ in
            refreshes.withLock { $0 += 1 }
            return HTTPResponse(status: 200, body: Data(#"{"access_token":"fresh","token_type":"BEARER","expires_in":"7200","instance_url":"https://na1.salesforce.com","id":"https://login.salesforce.com/id/00D/005","unknown":[1,2]}"#.utf8))
        }
        let manager = try UserAccountManager(store: InMemoryCredentialStore(), transport: transport)
        let now = Date()
        var credentials = Credentials(accessToken: "old", refreshToken: "r", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                      identityURL: URL(string: "https://login.salesforce.com/id/00D/005")!, userID: "005", orgID: "00D",
                                      expiresAt: now.addingTimeInterval(3600))
        try manager.add(UserAccount(credentials: credentials, loginHost: OAuthConfig.productionLoginHost, clientID: "c"))
        let identity = UserAccountIdentity(userID: "005", orgID: "00D")
        #expect(try await manager.freshCredentials(for: identity, now: now).accessToken == "old", "an hour left: no refresh")
        #expect(refreshes.withLock { $0 } == 0)
        #expect(try await manager.freshCredentials(for: identity, now: now.addingTimeInterval(3570)).accessToken == "fresh")
        #expect(refreshes.withLock { $0 } == 1)
        let fresh = try #require(manager.account(for: identity)?.credentials)
        #expect(fresh.tokenType == "Bearer" && fresh.refreshToken == "r")
        #expect(try #require(fresh.expiresAt).timeIntervalSinceNow > 7000)
        credentials.expiresAt = nil
        try manager.add(UserAccount(credentials: credentials, loginHost: OAuthConfig.productionLoginHost, clientID: "c"))
        #expect(try await manager.freshCredentials(for: identity, now: now.addingTimeInterval(1e9)).accessToken == "old", "no known expiry: as it is")
    }

    @Test func cancellingARequestEndsItAtOnce() async throws {
        let (arrived, arrival) = AsyncStream.makeStream(of: Void.self)
        let server = try TestHTTPServer.start { _ in
            arrival.yield()
            return .init(status: 200, body: Data(repeating: 65, count: 100), trickle: .seconds(1))
        }
        defer { server.stop() }
        let transport = URLSessionTransport(timeout: 600)
        let request = Task { try await transport.send(HTTPRequest(url: server.baseURL)) }
        var iterator = arrived.makeAsyncIterator()
        _ = await iterator.next()                             // the server has the request
        let cancelled = ContinuousClock.now
        request.cancel()
        let error = await #expect(throws: OAuthError.self) { _ = try await request.value }
        #expect(error == .cancelled)
        // The connection closed soon after, not at the 600 s deadline nor after the 3-minute
        // trickle: timed by the server (which notices within a byte or two, a second each), not by
        // this task's resumption, which a loaded machine delays.
        let connection = await server.log.closedConnection(within: .seconds(60))
        #expect(try #require(connection?.closed) - cancelled < .seconds(60))
    }
}
