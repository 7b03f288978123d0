public import AppKernelCore
public import Foundation

/// A token whose revocation failed and is retried until it succeeds: at the next launch (the
/// manager's creation), the next logout, or ``UserAccountManager/retryFailedRevocations()``.
/// It is kept in the credential store (``FileCredentialStore``: `pending-revocations.json`,
/// `0600`). Prints without its token.
public struct PendingRevocation: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// Whose token it is.
    public var identity: UserAccountIdentity
    /// The revocation endpoint of the login host the token came from.
    public var revokeURL: URL
    /// The connected app the token was issued to (`client_id`, RFC 7009 §2.1).
    public var clientID: String
    /// What the token is (`token_type_hint`).
    public var tokenTypeHint: TokenClient.TokenTypeHint
    /// How many attempts failed so far.
    public var attempts: Int
    /// Why the last attempt failed.
    public var lastFailure: String
    /// When the first attempt failed.
    public var firstFailedAt: Date
    /// The token to revoke.
    let token: String

    init(identity: UserAccountIdentity, revokeURL: URL, clientID: String, tokenTypeHint: TokenClient.TokenTypeHint, token: String,
         failure: OAuthError, at date: Date = Date()) {
        self.identity = identity
        self.revokeURL = revokeURL
        self.clientID = clientID
        self.tokenTypeHint = tokenTypeHint
        self.token = token
        self.attempts = 1
        self.lastFailure = failure.description
        self.firstFailedAt = date
    }

    /// "revocation of <identity>'s <hint> (<n> failed attempts: <last failure>)".
    public var description: String {
        "revocation of \(identity)'s \(tokenTypeHint.rawValue) (\(attempts) failed attempt\(attempts == 1 ? "" : "s"): \(lastFailure))"
    }

    /// A mirror without the token.
    public var customMirror: Mirror {
        Mirror(self, children: ["identity": identity, "revokeURL": revokeURL, "tokenTypeHint": tokenTypeHint, "attempts": attempts,
                                "lastFailure": lastFailure, "token": "<redacted>"])
    }

    /// Revokes the token.
    func revoke(over transport: any HTTPTransport) async throws(OAuthError) {
        let config = OAuthConfig(clientID: clientID, redirectURI: revokeURL, loginHost: revokeURL)
        var request = HTTPRequest.form(revokeURL, [("token", token), ("token_type_hint", tokenTypeHint.rawValue), ("client_id", clientID)])
        request.headers["Accept"] = "application/json"
        _ = try await TokenClient(config: config, transport: transport).send(request, expectJSON: false)
    }

    /// Whether a revocation that failed with `error` is worth trying again: no answer, a
    /// deadline, a cancelled attempt, an answer that is not OAuth's (a 503 — RFC 7009 §2.2.1 —
    /// a proxy's page), or `temporarily_unavailable` / `server_error`. An OAuth refusal
    /// (`unsupported_token_type`, `invalid_client`, …) is final: retrying cannot change it.
    static func isWorthRetrying(_ error: OAuthError) -> Bool {
        switch error {
        case .transport, .timedOut, .cancelled, .httpStatus, .unexpectedResponse: true
        case .serverError(let code, _, _): code == "temporarily_unavailable" || code == "server_error"
        default: false
        }
    }
}
