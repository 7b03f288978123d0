import Foundation

/// Why a login step failed. Messages name the parameter or the server's error, never a token.
public enum OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The callback's `state` was missing or did not match the request's: a forged or stale
    /// callback (CSRF). Nothing in it was trusted.
    case stateMismatch
    /// The server refused: `error` and `error_description` from a callback or the token endpoint.
    case serverError(code: String, description: String?)
    /// A required parameter was absent.
    case missingParameter(String)
    /// A parameter's value could not be used.
    case malformedParameter(String, reason: String)
    /// A parameter appeared twice.
    case duplicateParameter(String)
    /// The callback is not for this request's redirect URI.
    case unexpectedRedirect(expected: URL, received: URL)
    /// The callback of one flow was given to the other's parser.
    case wrongFlow(expected: AuthorizationRequest.Flow)
    /// A PKCE code verifier is not 43–128 unreserved characters.
    case invalidCodeVerifier(String)
    /// The server answered with an HTTP status and a body that is not an OAuth error.
    case httpStatus(Int, body: String)
    /// The request could not be sent or its answer read.
    case transport(String)
    /// The authorization page did not redirect to the app's redirect URI.
    case noRedirect(status: Int)

    /// What went wrong and what to do.
    public var description: String {
        switch self {
        case .stateMismatch:
            "the callback's state does not match the request's: it may be forged or stale; start a new login"
        case .serverError(let code, let description):
            "the server refused: \(code)\(description.map { " (\($0))" } ?? "")"
        case .missingParameter(let name):
            "the server's answer lacks the required parameter '\(name)'"
        case .malformedParameter(let name, let reason):
            "the parameter '\(name)' is malformed: \(reason)"
        case .duplicateParameter(let name):
            "the parameter '\(name)' appears more than once; the callback was not trusted"
        case .unexpectedRedirect(let expected, let received):
            "the callback '\(received.scheme ?? "")://\(received.host ?? "")\(received.path)' is not for the redirect URI '\(expected.absoluteString)'"
        case .wrongFlow(let expected):
            "this callback belongs to the \(expected == .userAgent ? "web-server" : "user-agent") flow, but the request uses the \(expected) flow"
        case .invalidCodeVerifier(let reason):
            "the PKCE code verifier is invalid: \(reason)"
        case .httpStatus(let status, let body):
            "the server answered HTTP \(status): \(body.prefix(200))"
        case .transport(let reason):
            "the request failed: \(reason)"
        case .noRedirect(let status):
            "the authorization page answered HTTP \(status) instead of redirecting to the app"
        }
    }
}
