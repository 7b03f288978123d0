import Foundation

extension LoginSession {
    /// Logs in with `method` and returns the credentials and the user's identity.
    ///
    /// ```swift
    /// let session = LoginSession(config: config, transport: URLSessionTransport())
    /// let (credentials, identity) = try await session.logIn(using: .deviceFlow)
    /// ```
    /// - Throws: ``LoginError`` naming the step that failed. No token is kept after a failure.
    public func logIn(using method: LoginMethod, loginHint: String? = nil) async throws(LoginError) -> (Credentials, UserIdentity) {
        let credentials: Credentials
        switch method.kind {
        case .loopback(let port, let opener, let timeout, let clock):
            credentials = try await loopbackLogin(port: port, opener: opener, timeout: timeout, clock: clock, loginHint: loginHint)
        case .deviceFlow(let presenter, let clock):
            credentials = try await deviceLogin(presenter: presenter, clock: clock)
        case .userAgent(let flow, let agent):
            let request = AuthorizationRequest(config: config, flow: flow, loginHint: loginHint)
            let callback: URL
            do { callback = try await agent(request.url) } catch {
                throw LoginError(step: .openBrowser, error: Self.oauthError(error, "the user agent"))
            }
            credentials = try await finish(request, callback: callback)
        case .clientCredentials(let secret, let consumerKey):
            credentials = try await clientCredentialsLogin(secret: secret, consumerKey: consumerKey)
        case .autoApprove(let flow, let headers):
            var session = self
            session.authorizeHeaders.merge(headers) { _, new in new }
            let request = AuthorizationRequest(config: config, flow: flow, loginHint: loginHint)
            let callback = try await step(.authorize) { () async throws(OAuthError) in try await session.authorize(request) }
            credentials = try await finish(request, callback: callback)
        }
        let identity = try await step(.identity) { () async throws(OAuthError) in try await self.identity(for: credentials) }
        return (credentials, identity)
    }

    /// Parses the callback of `request` and, in the web-server flow, exchanges its code.
    private func finish(_ request: AuthorizationRequest, callback: URL) async throws(LoginError) -> Credentials {
        switch request.flow {
        case .userAgent:
            return try step(.callback) { () throws(OAuthError) in try request.parseCallback(callback) }
        case .webServer:
            let code = try step(.callback) { () throws(OAuthError) in try request.parseCodeCallback(callback) }
            return try await step(.tokenExchange) { () async throws(OAuthError) in
                try await TokenClient(config: request.config, transport: transport).exchange(code: code, codeVerifier: request.codeVerifier ?? "")
            }
        }
    }

    // MARK: Loopback (RFC 8252 §7.3)

    /// The loopback flow. The redirect URI keeps the host the connected app registered: RFC 8252
    /// §8.3 recommends the IP literal over `localhost`, but the server compares the redirect URI
    /// with the registered one (§7.3 lets it relax only the port; a Salesforce connected app
    /// matches its callback URL as registered), so rewriting `localhost` to `127.0.0.1` would
    /// break every connected app registered with `localhost` (the Salesforce CLI's
    /// `http://localhost:1717/OauthRedirect`). Instead the listener closes the gap `localhost`
    /// opens: it listens on both `127.0.0.1` and `::1`, so no other program can hold the address
    /// the browser picks (see ``LoopbackListener``).
    private func loopbackLogin(port: UInt16?, opener: BrowserOpener, timeout: Duration, clock: any Clock<Duration>,
                               loginHint: String?) async throws(LoginError) -> Credentials {
        let redirect = config.redirectURI
        let host = redirect.host?.lowercased() ?? ""
        guard redirect.scheme?.lowercased() == "http", host == "localhost" || host == "127.0.0.1" else {
            throw LoginError(step: .listen, error: .malformedParameter(
                "redirect_uri", reason: "the loopback flow needs an http://localhost or http://127.0.0.1 redirect URI (RFC 8252 §7.3), not '\(redirect.absoluteString)'"))
        }
        if let port, port != 0, let registered = redirect.port, registered != Int(port) {
            throw LoginError(step: .listen, error: .malformedParameter(
                "redirect_uri", reason: "its port \(registered) is not the listener's port \(port); the server would redirect elsewhere"))
        }
        let listener = try step(.listen) { () throws(OAuthError) in
            try LoopbackListener(port: port ?? UInt16(clamping: redirect.port ?? 0), path: redirect.path, host: host)
        }
        defer { listener.stop(.cancelled) }
        var loopbackConfig = config
        loopbackConfig.redirectURI = URL(string: "http://\(host):\(listener.port)\(listener.path)")!
        let request = AuthorizationRequest(config: loopbackConfig, flow: .webServer, loginHint: loginHint)
        let callback = try await awaitCallback(listener, request: request, host: host, opener: opener, timeout: timeout, clock: clock)
        return try await finish(request, callback: callback)
    }

    /// Opens the authorize URL and waits for the listener's one callback, the deadline, or
    /// cancellation — whichever comes first. The page the opener left for the browser (if any)
    /// is removed when the wait ends, however it ends.
    private func awaitCallback(_ listener: LoopbackListener, request: AuthorizationRequest, host: String, opener: BrowserOpener,
                               timeout: Duration, clock: any Clock<Duration>) async throws(LoginError) -> URL {
        let url = request.url
        let state = request.state
        let pages = ForwardingPages()
        defer { pages.removeAll() }   // after the task group, which awaits the opener's task
        do {
            return try await withThrowingTaskGroup(of: URL?.self) { group in
                group.addTask {
                    do throws(OAuthError) { return try await listener.waitForCallback(state: state, host: host) } catch {
                        throw LoginError(step: .awaitCallback, error: error)
                    }
                }
                group.addTask {
                    do { pages.keep(try await opener.present(url)) } catch {
                        throw LoginError(step: .openBrowser, error: Self.oauthError(error, "the browser opener"))
                    }
                    return nil
                }
                group.addTask {
                    do { try await Self.sleep(clock, for: timeout) } catch { return nil }
                    throw LoginError(step: .awaitCallback, error: .timedOut("no redirect reached the listener within \(timeout)"))
                }
                while let next = try await group.next() {
                    if let callback = next {
                        group.cancelAll()
                        return callback
                    }
                }
                throw LoginError(step: .awaitCallback, error: .cancelled)
            }
        } catch let error as LoginError {
            if Task.isCancelled { throw LoginError(step: .awaitCallback, error: .cancelled) }
            throw error
        } catch {
            throw LoginError(step: .awaitCallback, error: .cancelled)
        }
    }

    private static func sleep<C: Clock>(_ clock: C, for duration: Duration) async throws where C.Duration == Duration {
        try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
    }

    // MARK: Device flow (RFC 8628)

    private func deviceLogin(presenter: DeviceCodePresenter, clock: any Clock<Duration>) async throws(LoginError) -> Credentials {
        try await Self.deviceLogin(DeviceFlowClient(config: config, transport: transport), presenter: presenter, clock: clock)
    }

    /// The device flow on `clock`: the code's lifetime runs from the moment it was asked for.
    private static func deviceLogin<C: Clock>(_ client: DeviceFlowClient, presenter: DeviceCodePresenter, clock: C) async throws(LoginError) -> Credentials
    where C.Duration == Duration {
        let issuedAt = clock.now
        let authorization: DeviceAuthorization
        do { authorization = try await client.requestAuthorization() } catch {
            throw LoginError(step: .deviceAuthorization, error: Task.isCancelled ? .cancelled : error)
        }
        await presenter.present(authorization)
        do { return try await client.poll(authorization, clock: clock, issuedAt: issuedAt) } catch {
            throw LoginError(step: .devicePolling, error: Task.isCancelled ? .cancelled : error)
        }
    }

    // MARK: Client credentials (server to server)

    /// Salesforce's client-credentials flow: the consumer key and secret for a token of the
    /// connected app's run-as user, from the My Domain's token endpoint.
    private func clientCredentialsLogin(secret: ClientSecret, consumerKey: String?) async throws(LoginError) -> Credentials {
        let host = config.loginHost.host?.lowercased() ?? ""
        if host == "login.salesforce.com" || host == "test.salesforce.com" {
            throw LoginError(step: .clientCredentials, error: .malformedParameter(
                "loginHost", reason: "Salesforce answers the client-credentials flow only on the org's My Domain, not \(host); "
                    + "set the login host to https://<your domain>.my.salesforce.com"))
        }
        let key = consumerKey ?? config.clientID
        let text: String
        do { text = try secret.read() } catch { throw LoginError(step: .clientSecret, error: .clientSecret(error)) }
        return try await step(.clientCredentials) { () async throws(OAuthError) in
            let fields = try await TokenClient(config: config, transport: transport).post(config.tokenURL, [
                ("grant_type", "client_credentials"), ("client_id", key), ("client_secret", text),
            ])
            return try Credentials(oauthParameters: fields)
        }
    }

    // MARK: Steps

    private func step<T>(_ step: LoginStep, _ body: () throws(OAuthError) -> T) throws(LoginError) -> T {
        do { return try body() } catch { throw LoginError(step: step, error: error) }
    }

    private func step<T>(_ step: LoginStep, _ body: () async throws(OAuthError) -> T) async throws(LoginError) -> T {
        do { return try await body() } catch { throw LoginError(step: step, error: Task.isCancelled ? .cancelled : error) }
    }

    private static func oauthError(_ error: any Error, _ who: String) -> OAuthError {
        switch error {
        case let error as OAuthError: error
        case is CancellationError: .cancelled
        default: .transport("\(who) failed: \(error.localizedDescription)")
        }
    }
}
