public import Foundation

/// Drives a whole login over HTTP with no person in it — the in-process, *auto-approve* mode:
/// open the authorize URL, follow the login pages' redirects, capture the redirect to the app's
/// callback URL without following it, parse it (state-checked), exchange the code (web-server
/// flow), and fetch the identity.
///
/// It only works against a server that approves at once (an embedded org, a test server, a
/// session cookie in ``authorizeHeaders``): a real login page answers 200 with a form, and
/// ``authorize(_:)`` fails with ``OAuthError/noRedirect(status:summary:)``. Apps log in with
/// ``UserAccountManager/logIn(config:using:loginHint:makeCurrent:)`` and ``LoginMethod/loopback(port:opener:timeout:clock:)``
/// or ``LoginMethod/deviceFlow``.
///
/// ```swift
/// let session = LoginSession(config: config, transport: SocketTransport())
/// let (credentials, identity) = try await session.logIn(flow: .webServer, loginHint: "ada@acme.com")
/// ```
public struct LoginSession: Sendable {
    /// The login configuration.
    public let config: OAuthConfig
    /// How requests are sent.
    public let transport: any HTTPTransport
    /// Headers sent with the authorize request (a session cookie standing in for the user's
    /// typed password, for instance).
    public var authorizeHeaders: [String: String]
    /// How many redirects between login pages are followed before giving up.
    public var maximumRedirects = 10

    /// Creates a session.
    public init(config: OAuthConfig, transport: any HTTPTransport = SocketTransport(), authorizeHeaders: [String: String] = [:]) {
        self.config = config
        self.transport = transport
        self.authorizeHeaders = authorizeHeaders
    }

    /// Opens the request's authorize URL and returns the callback URL it redirects to.
    /// - Throws: ``OAuthError/noRedirect(status:summary:)`` when the pages end without
    ///   redirecting to the app — the summary keeps what the page said (the server's reason, or
    ///   the login form's title).
    public func authorize(_ request: AuthorizationRequest) async throws(OAuthError) -> URL {
        var url = request.url
        for _ in 0...maximumRedirects {
            let response = try await send(HTTPRequest(url: url, headers: authorizeHeaders))
            guard (300..<400).contains(response.status), let next = response.location(relativeTo: url) else {
                let summary = ResponseSummary.summarize(response.body, contentType: response.headers["content-type"])
                throw .noRedirect(status: response.status, summary: summary.isEmpty ? nil : summary)
            }
            if request.isCallback(next) { return next }
            url = next
        }
        throw .noRedirect(status: 310, summary: "more than \(maximumRedirects) redirects")
    }

    /// Logs in with `flow` and returns the credentials and the user's identity.
    public func logIn(flow: AuthorizationRequest.Flow, loginHint: String? = nil) async throws(OAuthError) -> (Credentials, UserIdentity) {
        let request = AuthorizationRequest(config: config, flow: flow, loginHint: loginHint)
        let callback = try await authorize(request)
        let credentials: Credentials
        switch flow {
        case .userAgent:
            credentials = try request.parseCallback(callback)
        case .webServer:
            let code = try request.parseCodeCallback(callback)
            credentials = try await TokenClient(config: config, transport: transport).exchange(code: code, codeVerifier: request.codeVerifier ?? "")
        }
        return (credentials, try await identity(for: credentials))
    }

    /// Fetches the identity of the credentials' user.
    /// - Throws: ``OAuthError/serverError(code:description:uri:)`` for a refused token that
    ///   says why (a JSON `error`, or `WWW-Authenticate: Bearer error="invalid_token"`),
    ///   ``OAuthError/httpStatus(_:body:)`` for another refusal, or a malformed answer.
    public func identity(for credentials: Credentials) async throws(OAuthError) -> UserIdentity {
        let response = try await send(HTTPRequest(url: credentials.identityURL,
                                                  headers: ["Authorization": "Bearer \(credentials.accessToken)", "Accept": "application/json"],
                                                  responseLimit: config.responseLimit))
        guard response.status == 200 else {
            if let error = OAuthError.carried(by: response) { throw error }
            throw .httpStatus(response.status, body: response.text)
        }
        return try UserIdentity(json: response.body)
    }

    private func send(_ request: HTTPRequest) async throws(OAuthError) -> HTTPResponse {
        try await TokenClient.send(request, over: transport)
    }
}
