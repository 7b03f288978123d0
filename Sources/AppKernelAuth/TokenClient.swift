import Foundation

/// The token endpoint: exchanges an authorization code, refreshes and revokes tokens.
///
/// ```swift
/// let tokens = TokenClient(config: config, transport: SocketTransport())
/// let fresh = try await tokens.refresh(credentials)     // keeps the old refresh token
/// try await tokens.revoke(token: refreshToken)
/// ```
public struct TokenClient: Sendable {
    /// The login configuration (client id, redirect URI, endpoints).
    public let config: OAuthConfig
    /// How requests are sent.
    public let transport: any HTTPTransport

    /// Creates a client.
    public init(config: OAuthConfig, transport: any HTTPTransport = SocketTransport()) {
        self.config = config
        self.transport = transport
    }

    /// Exchanges a web-server flow's code, proving possession of the PKCE verifier.
    /// - Throws: ``OAuthError/serverError(code:description:uri:)`` (e.g. `invalid_grant`), or a
    ///   missing/malformed parameter in the answer.
    public func exchange(code: String, codeVerifier: String) async throws(OAuthError) -> Credentials {
        let parameters = try await post(config.tokenURL, [
            ("grant_type", "authorization_code"), ("code", code), ("code_verifier", codeVerifier),
            ("client_id", config.clientID), ("redirect_uri", config.redirectURI.absoluteString),
        ])
        return try Credentials(oauthParameters: parameters)
    }

    /// Gets a new access token; keeps the old refresh token when the answer has none (Salesforce
    /// does not rotate it by default).
    /// - Throws: ``OAuthError/missingParameter(_:)`` (`refresh_token`) for credentials without
    ///   one; ``OAuthError/serverError(code:description:uri:)`` (`invalid_grant`: revoked or expired).
    public func refresh(_ credentials: Credentials) async throws(OAuthError) -> Credentials {
        guard let refreshToken = credentials.refreshToken else { throw .missingParameter("refresh_token") }
        let parameters = try await post(config.tokenURL, [
            ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", config.clientID),
        ])
        var fresh = try Credentials(oauthParameters: parameters, previousRefreshToken: refreshToken)
        if fresh.communityURL == nil { fresh.communityURL = credentials.communityURL }
        if fresh.communityID == nil { fresh.communityID = credentials.communityID }
        return fresh
    }

    /// What a token is, for revocation's `token_type_hint` (RFC 7009 §2.1).
    public enum TokenTypeHint: String, Sendable, Hashable, Codable {
        /// A refresh token (revoking it revokes its access tokens too).
        case refreshToken = "refresh_token"
        /// An access token.
        case accessToken = "access_token"
    }

    /// Revokes a token as RFC 7009 §2.1 asks of a public client: `token`, `token_type_hint`
    /// and `client_id` in a form POST. Any 2xx is success — the server answers 200 for a token
    /// it does not know too (§2.2).
    /// - Throws: ``OAuthError/serverError(code:description:uri:)`` (`unsupported_token_type`,
    ///   `invalid_client`, …), ``OAuthError/httpStatus(_:body:)`` (503: try again later, §2.2.1),
    ///   or a transport error.
    public func revoke(token: String, hint: TokenTypeHint) async throws(OAuthError) {
        _ = try await send(.form(config.revokeURL, [("token", token), ("token_type_hint", hint.rawValue), ("client_id", config.clientID)]),
                           expectJSON: false)
    }

    /// Revokes a token whose type is not given: a refresh token is assumed (the hint only
    /// speeds the server's lookup; it searches all types when the hint is wrong, RFC 7009 §2.1).
    public func revoke(token: String) async throws(OAuthError) {
        try await revoke(token: token, hint: .refreshToken)
    }

    func post(_ url: URL, _ parameters: [(String, String)]) async throws(OAuthError) -> [String: String] {
        let response = try await send(.form(url, parameters), expectJSON: true)
        return try Self.stringFields(of: response)
    }

    func send(_ request: HTTPRequest, expectJSON: Bool) async throws(OAuthError) -> HTTPResponse {
        var request = request
        if request.responseLimit == nil { request.responseLimit = config.responseLimit }
        let response = try await Self.send(request, over: transport)
        guard (200..<300).contains(response.status) else {
            if let error = OAuthError.carried(by: response) { throw error }
            throw .httpStatus(response.status, body: response.text)
        }
        return response
    }

    /// Sends `request`, mapping a failure to ``OAuthError``: ``OAuthError/cancelled`` for a
    /// cancelled task, the transport's own ``OAuthError`` (a deadline),
    /// ``OAuthError/responseTooLarge(_:)`` for a body over the request's limit, else
    /// ``OAuthError/transport(_:)`` naming the request.
    static func send(_ request: HTTPRequest, over transport: any HTTPTransport) async throws(OAuthError) -> HTTPResponse {
        do {
            try Task.checkCancellation()
            let response = try await transport.send(request)
            // A transport that does not bound what it reads is checked here all the same.
            if let limit = request.responseLimit, response.body.count > limit.bytes {
                throw ResponseTooLarge(method: request.method, url: request.url, limit: limit.bytes, setting: limit.setting,
                                       evidence: .received(response.body.count))
            }
            return response
        } catch let error as OAuthError {
            throw error
        } catch let error as ResponseTooLarge {
            throw .responseTooLarge(error)
        } catch let error as HTTPTransportError {
            throw .transport(error.description)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw .transport("\(request.method) \(request.url.path): \(error.localizedDescription)")
        }
    }

    /// The top-level fields of a JSON object, as strings (numbers and booleans written out).
    /// - Throws: ``OAuthError/unexpectedResponse(status:contentType:summary:)`` when the body is
    ///   not a JSON object (an HTML page, say); the summary never holds a token.
    static func stringFields(of response: HTTPResponse) throws(OAuthError) -> [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            let contentType = response.headers["content-type"]
            let looksLikeJSON = contentType?.lowercased().contains("json") == true && response.text.contains("{")
            // A JSON-looking body that failed to parse may hold a token: keep none of it.
            let summary = looksLikeJSON ? "a malformed JSON object of \(response.body.count) bytes" : ResponseSummary.summarize(response.body, contentType: contentType)
            throw .unexpectedResponse(status: response.status, contentType: contentType, summary: summary)
        }
        var fields: [String: String] = [:]
        for (key, value) in object {
            switch value {
            case let text as String: fields[key] = text
            case let number as NSNumber: fields[key] = number.stringValue
            default: break
            }
        }
        return fields
    }
}
