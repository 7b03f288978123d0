import AppKernelCore
import AppKernelAuth
import Foundation

/// The token endpoint's other grants: Salesforce's device flow (and RFC 8628's polling form),
/// and the client-credentials flow for server-to-server integration; and the login history.
extension EmbeddedOrg {
    /// A device code asked for, and what became of it.
    struct DeviceGrant {
        var userCode: String
        var approvedBy: User?
        var denied = false
    }

    /// One login, as the org's login history (Setup → Login History; the `LoginHistory` object)
    /// records it.
    public struct LoginEvent: Sendable, Hashable {
        /// The user who logged in.
        public var username: String
        /// The user's id (`UserId`).
        public var userID: String
        /// The grant that issued the token: `authorization_code`, `device`, `client_credentials`.
        public var grant: String
        /// The connected app's consumer key (the history's `Application` names its app).
        public var clientID: String
        /// The request's `User-Agent`, as sent (`nil` when none was).
        public var userAgent: String?

        /// The history's `Browser` column: `Salesforce Mobile SDK` for the SDK's agent,
        /// `Unknown` otherwise — what an org shows for a request without it (the SDK's issue #3166).
        public var browser: String {
            userAgent?.hasPrefix("SalesforceMobileSDK/") == true ? "Salesforce Mobile SDK" : "Unknown"
        }

        /// The history's `Platform` column: the agent's os and version (`Linux 6.8.0`), or `Unknown`.
        public var platform: String {
            guard let agent = userAgent, agent.hasPrefix("SalesforceMobileSDK/") else { return "Unknown" }
            let parts = agent.split(separator: " ")
            guard parts.count > 1 else { return "Unknown" }
            return parts[1].replacingOccurrences(of: "/", with: " ")
        }
    }

    /// The logins the org has granted, oldest first.
    public var loginHistory: [LoginEvent] { state.withLock { $0.loginHistory } }

    /// Turns on the client-credentials flow ("OAuth 2.0 Client Credentials Flow for
    /// Server-to-Server Integration"): a token request with the org's consumer key and
    /// `consumerSecret` gets an access token (and no refresh token) for `username`, the
    /// connected app's run-as user.
    /// - Returns: `false` when no user has that name (the flow stays off).
    @discardableResult
    public func enableClientCredentials(consumerSecret: String, runAs username: String) -> Bool {
        guard let user = users.first(where: { $0.username == username }) else { return false }
        state.withLock { $0.integration = (consumerSecret, user) }
        return true
    }

    /// The user codes of the device logins waiting for approval, oldest first.
    public var pendingDeviceUserCodes: [String] {
        state.withLock { state in state.deviceGrants.values.filter { $0.approvedBy == nil && !$0.denied }.map(\.userCode).sorted() }
    }

    /// The user `username` enters `userCode` at the verification address and allows the app
    /// (`deny` refuses it instead): the device's next poll gets tokens (or `access_denied`).
    /// - Returns: `false` when no pending device login has that code or no user that name.
    @discardableResult
    public func approveDevice(userCode: String, username: String, deny: Bool = false) -> Bool {
        guard let user = users.first(where: { $0.username == username }) else { return false }
        return state.withLock { state in
            guard let code = state.deviceGrants.first(where: { $0.value.userCode == userCode && $0.value.approvedBy == nil && !$0.value.denied })?.key
            else { return false }
            if deny { state.deviceGrants[code]?.denied = true } else { state.deviceGrants[code]?.approvedBy = user }
            return true
        }
    }

    /// The token endpoint's answer to a form that is not a code exchange or a refresh.
    func otherGrant(_ form: [String: String], userAgent: String?, _ state: inout State) -> HTTPResponse {
        if form["grant_type"] == nil, form["response_type"] == "device_code" {
            guard form["client_id"] == clientID else { return Self.oauthError("invalid_client_id", "client identifier invalid") }
            let deviceCode = SecureRandom.token(byteCount: 16)
            let userCode = String(SecureRandom.bytes(4).hexString.uppercased())
            state.deviceGrants[deviceCode] = DeviceGrant(userCode: userCode)
            // Salesforce's answer: no expires_in; the code is good for 10 minutes.
            return Self.json(200, ["device_code": .string(deviceCode), "user_code": .string(userCode),
                                   "verification_uri": .string(baseURL.absoluteString + "/setup/connect"), "interval": 5])
        }
        switch form["grant_type"] {
        case "device", "urn:ietf:params:oauth:grant-type:device_code":
            // Salesforce's form sends `code`; RFC 8628's, `device_code`.
            let code = (form["grant_type"] == "device" ? form["code"] : form["device_code"]) ?? ""
            guard form["client_id"] == clientID else { return Self.oauthError("invalid_client_id", "client identifier invalid") }
            guard let grant = state.deviceGrants[code] else { return Self.oauthError("invalid_grant", "invalid device code") }
            if grant.denied {
                state.deviceGrants[code] = nil
                return Self.oauthError("access_denied", "end-user denied authorization")
            }
            guard let user = grant.approvedBy else { return Self.oauthError("authorization_pending", "authorization pending") }
            state.deviceGrants[code] = nil
            recordLogin(user, grant: "device", userAgent: userAgent, &state)
            return Self.json(200, JSONValue.object(issue(user, refresh: true, &state).mapValues(JSONValue.string)))
        case "client_credentials":
            guard let integration = state.integration else {
                return Self.oauthError("invalid_grant", "no client credentials user enabled")
            }
            guard form["client_id"] == clientID, let secret = form["client_secret"], secret == integration.secret else {
                return Self.oauthError("invalid_client", "invalid client credentials")
            }
            recordLogin(integration.user, grant: "client_credentials", userAgent: userAgent, &state)
            var fields = issue(integration.user, refresh: false, &state)
            fields["scope"] = "api"
            return Self.json(200, JSONValue.object(fields.mapValues(JSONValue.string)))
        default:
            return Self.oauthError("unsupported_grant_type", "grant type not supported")
        }
    }

    /// Adds a login to the history.
    func recordLogin(_ user: User, grant: String, userAgent: String?, _ state: inout State) {
        state.loginHistory.append(LoginEvent(username: user.username, userID: user.userID, grant: grant, clientID: clientID, userAgent: userAgent))
    }

    /// A request's `User-Agent` header, its name in any case.
    static func userAgent(of request: HTTPRequest) -> String? {
        request.headers.first { $0.key.caseInsensitiveCompare("User-Agent") == .orderedSame }?.value
    }
}
