public import Foundation
import AppKernelCore

/// One login attempt: the authorize URL to open, and the parsing of the callback it ends with.
///
/// Every request has a fresh random `state`, checked on return (CSRF); the web-server flow also
/// has a PKCE code verifier whose S256 challenge goes in the URL.
///
/// ```swift
/// let request = AuthorizationRequest(config: config, flow: .userAgent)
/// open(request.url)                                     // a browser, or LoginSession over HTTP
/// let credentials = try request.parseCallback(redirect) // the redirect to config.redirectURI
/// ```
public struct AuthorizationRequest: Sendable, Hashable {
    /// The OAuth 2.0 flow.
    public enum Flow: String, Sendable, Hashable, CustomStringConvertible {
        /// `response_type=token`: the tokens come back in the callback's fragment.
        case userAgent
        /// `response_type=code` with PKCE: a code comes back in the query and is exchanged.
        case webServer

        /// `userAgent` or `webServer`.
        public var description: String { rawValue }
    }

    /// The login configuration.
    public let config: OAuthConfig
    /// The flow.
    public let flow: Flow
    /// The anti-forgery value the callback must carry back.
    public let state: String
    /// The PKCE code verifier (web-server flow).
    public let codeVerifier: String?
    /// A username to pre-fill on the login page.
    public let loginHint: String?

    /// Creates a request with a fresh `state` (and, for the web-server flow, a fresh verifier).
    public init(config: OAuthConfig, flow: Flow, loginHint: String? = nil) {
        self.config = config
        self.flow = flow
        self.state = SecureRandom.token(byteCount: 24)
        self.codeVerifier = flow == .webServer ? SecureRandom.token(byteCount: 48) : nil
        self.loginHint = loginHint
    }

    /// Creates a request with a given `state` and verifier (tests, or a resumed login).
    /// - Throws: ``OAuthError/invalidCodeVerifier(_:)`` for a verifier that is not 43–128 of
    ///   `A–Z a–z 0–9 - . _ ~`, or missing in the web-server flow.
    public init(config: OAuthConfig, flow: Flow, state: String, codeVerifier: String?, loginHint: String? = nil) throws(OAuthError) {
        if flow == .webServer {
            guard let codeVerifier else { throw .invalidCodeVerifier("the web-server flow needs one") }
            guard (43...128).contains(codeVerifier.count) else {
                throw .invalidCodeVerifier("it has \(codeVerifier.count) characters; RFC 7636 asks for 43 to 128")
            }
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
            guard codeVerifier.allSatisfy(allowed.contains) else {
                throw .invalidCodeVerifier("only A–Z, a–z, 0–9 and - . _ ~ are allowed")
            }
        }
        self.config = config
        self.flow = flow
        self.state = state
        self.codeVerifier = flow == .webServer ? codeVerifier : nil
        self.loginHint = loginHint
    }

    /// The S256 code challenge: base64url(SHA-256(verifier)).
    public var codeChallenge: String? {
        codeVerifier.map { Base64URL.encode(SHA256.hash(Array($0.utf8))) }
    }

    /// The authorize URL, every parameter strictly percent-encoded.
    public var url: URL {
        var parameters: [(String, String)] = [
            ("response_type", flow == .userAgent ? "token" : "code"),
            ("client_id", config.clientID),
            ("redirect_uri", config.redirectURI.absoluteString),
            ("display", config.display),
        ]
        if !config.scopes.isEmpty { parameters.append(("scope", config.scopes.joined(separator: " "))) }
        parameters.append(("state", state))
        if let loginHint { parameters.append(("login_hint", loginHint)) }
        if let codeChallenge {
            parameters.append(("code_challenge", codeChallenge))
            parameters.append(("code_challenge_method", "S256"))
        }
        return URL(string: config.authorizeURL.absoluteString + "?" + FormEncoding.encode(parameters)) ?? config.authorizeURL
    }

    /// Whether `url` is a callback for this request's redirect URI (same scheme, host, port and path).
    public func isCallback(_ url: URL) -> Bool {
        let expected = config.redirectURI
        return url.scheme?.lowercased() == expected.scheme?.lowercased() && url.host?.lowercased() == expected.host?.lowercased()
            && url.port == expected.port && url.path == expected.path
    }

    /// Parses the user-agent flow's callback (parameters in the fragment) into credentials.
    /// - Throws: ``OAuthError``: a callback for another redirect URI, a `state` mismatch (checked
    ///   before anything else is trusted), the server's `error`, a missing or malformed parameter.
    public func parseCallback(_ url: URL) throws(OAuthError) -> Credentials {
        guard flow == .userAgent else { throw .wrongFlow(expected: flow) }
        let parameters = try checkedParameters(url, in: url.fragment(percentEncoded: true))
        return try Credentials(oauthParameters: parameters)
    }

    /// Parses the web-server flow's callback (parameters in the query) into the code to exchange.
    /// - Throws: ``OAuthError`` as ``parseCallback(_:)`` does.
    public func parseCodeCallback(_ url: URL) throws(OAuthError) -> String {
        guard flow == .webServer else { throw .wrongFlow(expected: flow) }
        let parameters = try checkedParameters(url, in: url.query(percentEncoded: true))
        guard let code = parameters["code"], !code.isEmpty else { throw .missingParameter("code") }
        return code
    }

    private func checkedParameters(_ url: URL, in component: String?) throws(OAuthError) -> [String: String] {
        guard isCallback(url) else { throw .unexpectedRedirect(expected: config.redirectURI, received: url) }
        guard let pairs = FormEncoding.decode(component ?? "") else {
            throw .malformedParameter("callback", reason: "it contains a broken percent-escape")
        }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters[name] == nil else { throw .duplicateParameter(name) }
            parameters[name] = value
        }
        guard parameters["state"] == state else { throw .stateMismatch }
        if let error = parameters["error"] {
            throw .serverError(code: error, description: parameters["error_description"], uri: parameters["error_uri"].flatMap(URL.init(string:)))
        }
        return parameters
    }
}

extension Credentials {
    /// Builds credentials from OAuth parameters (a callback's, or a token response's as strings).
    /// - Throws: ``OAuthError/missingParameter(_:)`` or ``OAuthError/malformedParameter(_:reason:)``.
    /// `token_type` must be Bearer, in any case (RFC 6749 §5.1, §7.1); `expires_in` is optional
    /// and counted from `receivedAt`; fields this client does not know are ignored.
    init(oauthParameters parameters: [String: String], previousRefreshToken: String? = nil, receivedAt: Date = Date()) throws(OAuthError) {
        func required(_ name: String) throws(OAuthError) -> String {
            guard let value = parameters[name], !value.isEmpty else { throw .missingParameter(name) }
            return value
        }
        func httpsURL(_ name: String) throws(OAuthError) -> URL {
            let text = try required(name)
            guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw .malformedParameter(name, reason: "not an http(s) URL")
            }
            return url
        }
        let accessToken = try required("access_token")
        let instanceURL = try httpsURL("instance_url")
        let identityURL = try httpsURL("id")
        guard let ids = Credentials.ids(fromIdentityURL: identityURL) else {
            throw .malformedParameter("id", reason: "the identity URL does not end in /id/<org id>/<user id>")
        }
        let tokenType = try required("token_type")
        guard tokenType.lowercased() == "bearer" else { throw .unsupportedTokenType(tokenType) }
        var expiresAt: Date?
        if let text = parameters["expires_in"] {
            guard let seconds = Int64(text), seconds >= 0 else { throw .malformedParameter("expires_in", reason: "not a number of seconds") }
            expiresAt = receivedAt.addingTimeInterval(TimeInterval(seconds))
        }
        var issuedAt: Int64?
        if let text = parameters["issued_at"] {
            guard let value = Int64(text) else { throw .malformedParameter("issued_at", reason: "not a number of milliseconds") }
            issuedAt = value
        }
        var communityURL: URL?
        if let text = parameters["sfdc_community_url"] {
            guard let url = URL(string: text) else { throw .malformedParameter("sfdc_community_url", reason: "not a URL") }
            communityURL = url
        }
        self.init(accessToken: accessToken,
                  refreshToken: parameters["refresh_token"].flatMap { $0.isEmpty ? nil : $0 } ?? previousRefreshToken,
                  instanceURL: instanceURL, identityURL: identityURL, userID: ids.userID, orgID: ids.orgID,
                  issuedAt: issuedAt,
                  scopes: (parameters["scope"] ?? "").split(separator: " ").map(String.init),
                  tokenType: "Bearer", signature: parameters["signature"],
                  communityID: parameters["sfdc_community_id"], communityURL: communityURL, expiresAt: expiresAt)
    }
}
