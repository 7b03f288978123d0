import Foundation

/// The token endpoint: exchanges an authorization code, refreshes and revokes tokens.
///
/// ```swift
/// let tokens = TokenClient(config: config, transport: URLSessionTransport())
/// let fresh = try await tokens.refresh(credentials)     // keeps the old refresh token
/// try await tokens.revoke(token: refreshToken)
/// ```
public struct TokenClient: Sendable {
    /// The login configuration (client id, redirect URI, endpoints).
    public let config: OAuthConfig
    /// How requests are sent.
    public let transport: any HTTPTransport

    /// Creates a client.
    public init(config: OAuthConfig, transport: any HTTPTransport) {
        self.config = config
        self.transport = transport
    }

    /// Exchanges a web-server flow's code, proving possession of the PKCE verifier.
    /// - Throws: ``OAuthError/serverError(code:description:)`` (e.g. `invalid_grant`), or a
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
    ///   one; ``OAuthError/serverError(code:description:)`` (`invalid_grant`: revoked or expired).
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

    /// Revokes a refresh or access token.
    /// - Throws: ``OAuthError/serverError(code:description:)`` (`unsupported_token_type`, `invalid_token`).
    public func revoke(token: String) async throws(OAuthError) {
        _ = try await send(.form(config.revokeURL, [("token", token)]), expectJSON: false)
    }

    private func post(_ url: URL, _ parameters: [(String, String)]) async throws(OAuthError) -> [String: String] {
        let response = try await send(.form(url, parameters), expectJSON: true)
        return try Self.stringFields(of: response)
    }

    private func send(_ request: HTTPRequest, expectJSON: Bool) async throws(OAuthError) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as OAuthError {
            throw error
        } catch {
            throw .transport("\(request.method) \(request.url.path): \(error.localizedDescription)")
        }
        guard (200..<300).contains(response.status) else {
            if let fields = try? Self.stringFields(of: response), let code = fields["error"] {
                throw .serverError(code: code, description: fields["error_description"])
            }
            throw .httpStatus(response.status, body: response.text)
        }
        return response
    }

    /// The top-level fields of a JSON object, as strings (numbers and booleans written out).
    static func stringFields(of response: HTTPResponse) throws(OAuthError) -> [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw .httpStatus(response.status, body: response.text)
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
