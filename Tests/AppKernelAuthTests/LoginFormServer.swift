import AppKernelAuth
import AppKernelCore
import Foundation
import LoopbackServer

/// An OAuth server with a real login form, on loopback, for the login tests — standard library
/// only (`TestHTTPServer` over the C library's sockets):
///
/// - `GET /services/oauth2/authorize` serves an HTML login form; only a `POST /login` of the form
///   with the right user and password redirects (302) to the app's redirect URI with `code` and
///   `state` (or with `error=access_denied` when the user denies).
/// - `POST /services/oauth2/token`: the code (PKCE S256 verified, `client_id` and `redirect_uri`
///   matched), refresh tokens, the device code (RFC 8628 and Salesforce's variant).
/// - `GET /id/<org>/<user>`: the identity for a valid bearer token; 401 with
///   `WWW-Authenticate: Bearer error="invalid_token"` otherwise.
/// - `POST /services/oauth2/revoke`: strict RFC 7009 — `token` without `client_id` is refused
///   with `invalid_client`; an unknown token is 200.
/// - `POST /services/oauth2/device/authorize`, `GET|POST /activate`: the device flow's pages.
///
/// Its knobs (`tokenType`, `tokenAnswer`, `revokeFails`, `devicePollScript`, …) make it
/// misbehave on purpose.
final class LoginFormServer: Sendable {
    static let clientID = "3MVG9-login-form"
    static let org = "00DFORM00000001"
    static let users = ["ada": (password: "secret", id: "005ADA000000001", username: "ada@example.com", name: "Ada Lovelace")]

    enum TokenAnswer: Sendable { case json, html, trickle }

    struct Knobs: Sendable {
        /// The `token_type` sent ("bearer": any case must do).
        var tokenType = "bearer"
        /// The `expires_in` sent, if any.
        var expiresIn: Int? = 3600
        /// How the token endpoint answers.
        var tokenAnswer = TokenAnswer.json
        /// Revocations fail with 503.
        var revokeFails = false
        /// Answers to device polls before the real one ("authorization_pending", "slow_down", …).
        var devicePollScript: [String] = []
        /// The device code's lifetime and polling interval.
        var deviceExpiresIn = 600
        var deviceInterval = 5
    }

    struct PendingLogin: Sendable {
        var redirectURI: String
        var state: String
        var challenge: String
    }

    struct DeviceEntry: Sendable {
        var userCode: String
        var approvedUser: String?
        var denied = false
    }

    struct State: Sendable {
        var knobs = Knobs()
        var pending: [String: PendingLogin] = [:]
        var codes: [String: (user: String, challenge: String, redirectURI: String)] = [:]
        var accessTokens: [String: String] = [:]
        var refreshTokens: [String: (user: String, access: [String])] = [:]
        var devices: [String: DeviceEntry] = [:]
        var revokeRequests: [[String: String]] = []
        var issuedAccessTokens: [String] = []
        var tokenRequests: [[String: String]] = []
    }

    final class StateBox: Sendable {
        private let lock: Locked<State>
        init(_ state: State) { lock = Locked(state) }
        func withLock<R: Sendable>(_ body: (inout State) -> R) -> R { lock.withLock { body(&$0) } }
    }

    let http: TestHTTPServer
    private let state: StateBox
    private let authorizeURLs: AsyncStream<URL>
    private let authorizeContinuation: AsyncStream<URL>.Continuation

    private init(http: TestHTTPServer, state: StateBox, stream: (AsyncStream<URL>, AsyncStream<URL>.Continuation)) {
        self.http = http
        self.state = state
        (authorizeURLs, authorizeContinuation) = stream
    }

    /// Starts a server on an ephemeral loopback port.
    static func start(_ knobs: Knobs = Knobs()) async throws -> LoginFormServer {
        let state = StateBox(State(knobs: knobs))
        let box = Locked<String?>(nil)
        let http = try TestHTTPServer.start { request in
            let base = box.withLock { $0 } ?? ""
            return LoginFormServer.route(request, base: base, state: state)
        }
        box.withLock { $0 = http.baseURL.absoluteString }
        return LoginFormServer(http: http, state: state, stream: AsyncStream.makeStream(of: URL.self))
    }

    func stop() {
        http.stop()
        authorizeContinuation.finish()
    }

    var baseURL: URL { http.baseURL }

    /// The connected app: a loopback redirect URI (its port is the listener's), the device
    /// authorization endpoint of RFC 8628.
    var oauthConfig: OAuthConfig {
        OAuthConfig(clientID: Self.clientID, redirectURI: URL(string: "http://127.0.0.1/OauthRedirect")!, loginHost: baseURL,
                    scopes: ["api", "refresh_token"], deviceAuthorizationURL: baseURL.appendingPathComponent("services/oauth2/device/authorize"))
    }

    /// The browser of these tests: it records the authorize URL it is asked to open.
    var browser: BrowserOpener {
        let continuation = authorizeContinuation
        return BrowserOpener { url in continuation.yield(url) }
    }

    /// The next authorize URL the browser was asked to open.
    func nextAuthorizeRequest() async throws -> URL {
        var iterator = authorizeURLs.makeAsyncIterator()
        guard let url = await iterator.next() else { throw BrowserError("the server stopped") }
        return url
    }

    func change(_ update: @Sendable (inout Knobs) -> Void) { state.withLock { update(&$0.knobs) } }
    var revokeRequests: [[String: String]] { state.withLock { $0.revokeRequests } }
    var issuedAccessTokens: [String] { state.withLock { $0.issuedAccessTokens } }
    var tokenRequests: [[String: String]] { state.withLock { $0.tokenRequests } }
    func isValid(accessToken: String) -> Bool { state.withLock { $0.accessTokens[accessToken] != nil } }

    struct BrowserError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Playing the browser

    private static let browserTransport = URLSessionTransport(timeout: 10)

    /// Opens `authorizeURL`, fills the login form in and submits it, and follows the redirect to
    /// the app (the loopback listener). Returns the app's page.
    @discardableResult
    func playBrowser(submittingLoginFormAt authorizeURL: URL, user: String, password: String, action: String = "login") async throws -> HTTPResponse {
        let redirect = try await submitLoginForm(at: authorizeURL, user: user, password: password, action: action)
        return try await Self.browserTransport.send(HTTPRequest(url: redirect))
    }

    /// Opens `authorizeURL`, submits the login form, and returns where the server redirects —
    /// without following it (what an app's own user agent hands back).
    func submitLoginForm(at authorizeURL: URL, user: String, password: String, action: String = "login") async throws -> URL {
        let page = try await Self.browserTransport.send(HTTPRequest(url: authorizeURL))
        guard page.status == 200 else { throw BrowserError("the authorize page answered \(page.status): \(page.text)") }
        let (actionURL, hidden) = try Self.form(in: page.text, base: authorizeURL)
        let fields = hidden + [("username", user), ("password", password), ("action", action)]
        let posted = try await Self.browserTransport.send(HTTPRequest(method: "POST", url: actionURL,
                                                                      headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                                      body: Data(TestHTTPServer.encode(fields).utf8)))
        guard posted.status == 302, let location = posted.location(relativeTo: actionURL) else {
            throw BrowserError("the login form answered \(posted.status), not a redirect: \(posted.text)")
        }
        return location
    }

    /// Opens the device flow's verification page, enters `userCode` and logs in.
    func approveDevice(at verificationURI: URL, userCode: String, user: String, password: String, action: String = "approve") async throws {
        let page = try await Self.browserTransport.send(HTTPRequest(url: verificationURI))
        let (actionURL, hidden) = try Self.form(in: page.text, base: verificationURI)
        let fields = hidden + [("user_code", userCode), ("username", user), ("password", password), ("action", action)]
        let posted = try await Self.browserTransport.send(HTTPRequest(method: "POST", url: actionURL,
                                                                      headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                                      body: Data(TestHTTPServer.encode(fields).utf8)))
        guard posted.status == 200, posted.text.contains(action == "approve" ? "Device approved" : "Device denied") else {
            throw BrowserError("the activation page answered \(posted.status): \(posted.text)")
        }
    }

    /// The form's action and hidden fields.
    private static func form(in html: String, base: URL) throws -> (URL, [(String, String)]) {
        func attribute(_ name: String, in tag: Substring) -> String? {
            guard let range = tag.range(of: "\(name)=\"") else { return nil }
            let rest = tag[range.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]).replacingOccurrences(of: "&amp;", with: "&") }
        }
        guard let formStart = html.range(of: "<form"), let formEnd = html[formStart.upperBound...].firstIndex(of: ">"),
              let action = attribute("action", in: html[formStart.lowerBound...formEnd]),
              let actionURL = URL(string: action, relativeTo: base)?.absoluteURL else {
            throw BrowserError("no form on the page: \(html)")
        }
        var hidden: [(String, String)] = []
        var rest = html[formEnd...]
        while let open = rest.range(of: "<input") {
            guard let close = rest[open.upperBound...].firstIndex(of: ">") else { break }
            let tag = rest[open.lowerBound...close]
            if attribute("type", in: tag) == "hidden", let name = attribute("name", in: tag) { hidden.append((name, attribute("value", in: tag) ?? "")) }
            rest = rest[close...]
        }
        return (actionURL, hidden)
    }

    // MARK: The server

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func loginPage(requestID: String, message: String = "") -> TestHTTPServer.Response {
        .html(200, """
            <!doctype html><html><head><title>Log in to Form Org</title></head><body>
            <h1>Log in to Form Org</h1><p>\(escape(message))</p>
            <form method="post" action="/login">
            <input type="hidden" name="request_id" value="\(escape(requestID))">
            <label>Username <input name="username"></label> <label>Password <input type="password" name="password"></label>
            <button name="action" value="login">Log in</button> <button name="action" value="deny">Deny</button>
            </form></body></html>
            """)
    }

    private static func errorPage(_ status: Int, _ title: String, _ text: String) -> TestHTTPServer.Response {
        .html(status, "<!doctype html><html><head><title>\(escape(title))</title><style>p { color: red }</style></head><body><p>\(escape(text))</p></body></html>")
    }

    private static func oauthError(_ status: Int, _ code: String, _ description: String, uri: String? = nil) -> TestHTTPServer.Response {
        var object = ["error": code, "error_description": description]
        if let uri { object["error_uri"] = uri }
        return .json(status, object)
    }

    private static func appending(_ parameters: [(String, String)], to uri: String) -> String {
        uri + (uri.contains("?") ? "&" : "?") + TestHTTPServer.encode(parameters)
    }

    private static func isAllowedRedirect(_ uri: String) -> Bool {
        guard let url = URL(string: uri) else { return false }
        if url.scheme == "http", url.host == "127.0.0.1" || url.host == "localhost" { return true }   // any loopback port (RFC 8252 §7.3)
        return uri == "appkernel://oauth/done"
    }

    static func route(_ request: TestHTTPServer.Request, base: String, state: StateBox) -> TestHTTPServer.Response {
        switch (request.method, request.path) {
        case ("GET", "/services/oauth2/authorize"):
            let query = request.query
            guard query["client_id"] == clientID else {
                return errorPage(400, "Error: OAUTH_EC_APP_NOT_FOUND", "The client_id \(query["client_id"] ?? "") is not a connected app of this org.")
            }
            guard let redirect = query["redirect_uri"], isAllowedRedirect(redirect) else {
                return errorPage(400, "Error: redirect_uri_mismatch", "The redirect_uri is not registered.")
            }
            guard query["response_type"] == "code", query["code_challenge_method"] == "S256", let challenge = query["code_challenge"],
                  let clientState = query["state"] else {
                return .redirect(appending([("error", "invalid_request"), ("error_description", "PKCE S256 and state are required"),
                                            ("state", query["state"] ?? "")], to: redirect))
            }
            let requestID = UUID().uuidString
            state.withLock { $0.pending[requestID] = PendingLogin(redirectURI: redirect, state: clientState, challenge: challenge) }
            return loginPage(requestID: requestID)
        case ("POST", "/login"):
            let form = request.form
            guard let requestID = form["request_id"], let pending = state.withLock({ $0.pending[requestID] }) else {
                return errorPage(400, "Session expired", "This login page has expired; start again.")
            }
            if form["action"] == "deny" {
                state.withLock { _ = $0.pending.removeValue(forKey: requestID) }
                return .redirect(appending([("error", "access_denied"), ("error_description", "end-user denied authorization"),
                                            ("state", pending.state)], to: pending.redirectURI))
            }
            guard let name = form["username"], let user = users[name], user.password == form["password"] else {
                return loginPage(requestID: requestID, message: "Wrong username or password.")
            }
            let code = "c0de+" + UUID().uuidString
            state.withLock { state in
                state.pending[requestID] = nil
                state.codes[code] = (name, pending.challenge, pending.redirectURI)
            }
            return .redirect(appending([("code", code), ("state", pending.state)], to: pending.redirectURI))
        case ("POST", "/services/oauth2/token"):
            return token(request.form, base: base, state: state)
        case ("POST", "/services/oauth2/device/authorize"):
            return deviceAuthorization(request.form, base: base, state: state)
        case ("GET", "/activate"):
            return .html(200, """
                <!doctype html><html><head><title>Connect a device</title></head><body>
                <form method="post" action="/activate"><input name="user_code"><input name="username"><input type="password" name="password">
                <button name="action" value="approve">Approve</button><button name="action" value="deny">Deny</button></form></body></html>
                """)
        case ("POST", "/activate"):
            let form = request.form
            guard let name = form["username"], let user = users[name], user.password == form["password"] else {
                return errorPage(200, "Connect a device", "Wrong username or password.")
            }
            let found: Bool = state.withLock { state in
                guard let key = state.devices.first(where: { $0.value.userCode == form["user_code"] })?.key else { return false }
                if form["action"] == "deny" { state.devices[key]?.denied = true } else { state.devices[key]?.approvedUser = name }
                return true
            }
            guard found else { return errorPage(200, "Connect a device", "Unknown code.") }
            return .html(200, "<html><body>\(form["action"] == "deny" ? "Device denied" : "Device approved")</body></html>")
        case ("POST", "/services/oauth2/revoke"):
            let form = request.form
            state.withLock { $0.revokeRequests.append(form) }
            guard form["client_id"] == clientID else { return oauthError(401, "invalid_client", "client authentication failed") }
            guard let token = form["token"], !token.isEmpty else { return oauthError(400, "invalid_request", "token is required") }
            if state.withLock({ $0.knobs.revokeFails }) {
                return TestHTTPServer.Response(status: 503, headers: ["Content-Type": "text/plain", "Retry-After": "30"], body: Data("revocation unavailable".utf8))
            }
            state.withLock { state in
                if let refresh = state.refreshTokens.removeValue(forKey: token) {
                    for access in refresh.access { state.accessTokens[access] = nil }
                }
                state.accessTokens[token] = nil
            }
            return TestHTTPServer.Response(status: 200)   // unknown tokens too (RFC 7009 §2.2)
        case ("GET", let path) where path.hasPrefix("/id/"):
            let authorization = request.headers["authorization"] ?? ""
            let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : ""
            guard let name = state.withLock({ $0.accessTokens[token] }), let user = users[name] else {
                return TestHTTPServer.Response(status: 401, headers: ["WWW-Authenticate": #"Bearer realm="form", error="invalid_token", error_description="The access token expired""#])
            }
            guard path == "/id/\(org)/\(user.id)" else { return oauthError(403, "insufficient_scope", "another user's identity") }
            return .json(200, ["user_id": user.id, "organization_id": org, "username": user.username, "display_name": user.name,
                               "email": user.username, "active": true, "user_type": "STANDARD",
                               "urls": ["rest": base + "/services/data/v{version}/"],
                               "mobile_policy": ["pin_length": "6", "screen_lock": "5"]])
        default:
            return errorPage(404, "Not found", "No page at \(request.path).")
        }
    }

    private static func token(_ form: [String: String], base: String, state: StateBox) -> TestHTTPServer.Response {
        let knobs = state.withLock { state in
            state.tokenRequests.append(form)
            return state.knobs
        }
        guard form["client_id"] == clientID else { return oauthError(401, "invalid_client", "unknown client") }
        if form["response_type"] == "device_code" { return deviceAuthorization(form, base: base, state: state) }   // Salesforce's variant
        let user: String
        switch form["grant_type"] {
        case "authorization_code":
            guard let entry = state.withLock({ $0.codes.removeValue(forKey: form["code"] ?? "") }) else {
                return oauthError(400, "invalid_grant", "invalid authorization code")
            }
            let digest = Base64URL.encode(SHA256.hash(Array((form["code_verifier"] ?? "").utf8)))
            guard digest == entry.challenge else { return oauthError(400, "invalid_grant", "invalid code verifier") }
            guard form["redirect_uri"] == entry.redirectURI else { return oauthError(400, "invalid_grant", "redirect_uri mismatch") }
            user = entry.user
        case "refresh_token":
            guard let entry = state.withLock({ $0.refreshTokens[form["refresh_token"] ?? ""] }) else {
                return oauthError(400, "invalid_grant", "expired access/refresh token")
            }
            user = entry.user
        case "urn:ietf:params:oauth:grant-type:device_code", "device":
            let deviceCode = form["device_code"] ?? form["code"] ?? ""
            let outcome: (user: String?, error: String?) = state.withLock { state in
                guard let entry = state.devices[deviceCode] else { return (nil, "invalid_grant") }
                if !state.knobs.devicePollScript.isEmpty { return (nil, state.knobs.devicePollScript.removeFirst()) }
                if entry.denied { return (nil, "access_denied") }
                guard let approved = entry.approvedUser else { return (nil, "authorization_pending") }
                state.devices[deviceCode] = nil
                return (approved, nil)
            }
            guard let approved = outcome.user else {
                let code = outcome.error ?? "invalid_grant"
                return oauthError(400, code, "device: \(code)", uri: "https://example.com/errors/\(code)")
            }
            user = approved
        default:
            return oauthError(400, "unsupported_grant_type", "grant type not supported")
        }
        switch knobs.tokenAnswer {
        case .html:
            return errorPage(200, "Scheduled Maintenance", "The service is down for maintenance; please try again later.")
        case .json, .trickle:
            let issued = issue(user, refresh: form["grant_type"] != "refresh_token", base: base, knobs: knobs, state: state)
            var response = TestHTTPServer.Response.json(200, issued)
            if case .trickle = knobs.tokenAnswer { response.trickle = Duration.seconds(1) }
            return response
        }
    }

    private static func issue(_ name: String, refresh: Bool, base: String, knobs: Knobs, state: StateBox) -> [String: Any] {
        let user = users[name]!
        let access = "00D!" + UUID().uuidString
        var answer: [String: Any] = ["access_token": access, "instance_url": base, "id": "\(base)/id/\(org)/\(user.id)",
                                     "token_type": knobs.tokenType, "issued_at": "\(Int(Date().timeIntervalSince1970 * 1000))",
                                     "signature": "c2ln", "scope": "api refresh_token", "extra_field": ["nested": true]]
        if let expiresIn = knobs.expiresIn { answer["expires_in"] = expiresIn }
        state.withLock { state in
            state.accessTokens[access] = name
            state.issuedAccessTokens.append(access)
        }
        if refresh {
            let token = "5Aep+" + UUID().uuidString
            answer["refresh_token"] = token
            state.withLock { $0.refreshTokens[token] = (name, [access]) }
        }
        return answer
    }

    private static func deviceAuthorization(_ form: [String: String], base: String, state: StateBox) -> TestHTTPServer.Response {
        guard form["client_id"] == clientID else { return oauthError(401, "invalid_client", "unknown client") }
        let deviceCode = "dev-" + UUID().uuidString
        let userCode = String(UUID().uuidString.prefix(4) + "-" + UUID().uuidString.prefix(4))
        let knobs = state.withLock { state in
            state.devices[deviceCode] = DeviceEntry(userCode: userCode)
            return state.knobs
        }
        return .json(200, ["device_code": deviceCode, "user_code": userCode, "verification_uri": base + "/activate",
                           "verification_uri_complete": base + "/activate?user_code=" + userCode,
                           "expires_in": knobs.deviceExpiresIn, "interval": knobs.deviceInterval])
    }
}
