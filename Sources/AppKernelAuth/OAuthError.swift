public import Foundation

/// Why a login step failed. Messages name the parameter or the server's error, never a token.
public enum OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The callback's `state` was missing or did not match the request's: a forged or stale
    /// callback (CSRF). Nothing in it was trusted.
    case stateMismatch
    /// The server refused: `error`, `error_description` and `error_uri` (RFC 6749 §4.1.2.1,
    /// §5.2) from a callback, the token, revoke or device endpoint, or a `WWW-Authenticate:
    /// Bearer error=…` header (RFC 6750 §3).
    case serverError(code: String, description: String?, uri: URL? = nil)
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
    /// The authorization page did not redirect to the app's redirect URI: it answered `status`
    /// (200: a login form that needs a person; 4xx: an error page) and `summary` says what the
    /// page said (its title and first words, no markup).
    case noRedirect(status: Int, summary: String? = nil)
    /// The token response's `token_type` is not `Bearer` (RFC 6749 §7.1: a client must not use
    /// a token whose type it does not understand). The token was dropped, never kept.
    case unsupportedTokenType(String)
    /// A success status whose body is not the JSON object the endpoint must answer (an HTML
    /// page from a proxy or a captive portal, for instance); `summary` is the page's text.
    case unexpectedResponse(status: Int, contentType: String?, summary: String)
    /// A deadline passed: what was waited for, and how long.
    case timedOut(String)
    /// The task was cancelled (the app maps Ctrl-C to this).
    case cancelled
    /// The loopback redirect listener could not listen: another program listens on the port at
    /// that loopback address (`127.0.0.1`, or `::1` when the redirect host is `localhost`).
    case portInUse(Int, address: String = "127.0.0.1")
    /// The loopback redirect listener could not be set up.
    case listenerFailed(String)
    /// The device code expired (its `expires_in` passed) before the user approved.
    case deviceCodeExpired
    /// The answer's body was larger than its limit (``OAuthConfig/maximumResponseBytes`` for
    /// the token and identity endpoints) and was refused.
    case responseTooLarge(ResponseTooLarge)
    /// The consumer secret of a client-credentials login could not be used (missing, unreadable,
    /// or handed over as text where other processes can read it).
    case clientSecret(ClientSecretError)

    /// What went wrong and what to do.
    public var description: String {
        switch self {
        case .stateMismatch:
            "the callback's state does not match the request's: it may be forged or stale; start a new login"
        case .serverError(let code, let description, let uri):
            "the server refused: \(code)\(description.map { " (\($0))" } ?? "")\(uri.map { " — see \($0.absoluteString)" } ?? "")"
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
            "the server answered HTTP \(status): \(ResponseSummary.summarize(Data(body.utf8), contentType: nil))"
        case .transport(let reason):
            "the request failed: \(reason)"
        case .noRedirect(let status, let summary):
            "the authorization page answered HTTP \(status)\(summary.map { " (\"\($0)\")" } ?? "") instead of redirecting to the app"
                + (status == 200 ? "; it waits for a person: log in with .loopback or .deviceFlow" : "")
        case .unsupportedTokenType(let type):
            "the server issued a token of type '\(type)'; only Bearer tokens are used (RFC 6749 §7.1), so it was dropped"
        case .unexpectedResponse(let status, let contentType, let summary):
            "the server answered HTTP \(status) with \(contentType ?? "no content type") instead of a JSON object: \"\(summary)\""
        case .timedOut(let what):
            "timed out: \(what)"
        case .cancelled:
            "cancelled"
        case .portInUse(let port, let address):
            "port \(port) on \(address) is in use by another program; close it or choose another port (the redirect URI's port must match)"
                + (address == "::1" ? "; a 'localhost' redirect is served on both 127.0.0.1 and ::1, as a browser may try either" : "")
        case .listenerFailed(let reason):
            "the redirect listener could not start: \(reason)"
        case .deviceCodeExpired:
            "the device code expired before the login was approved; start a new login"
        case .responseTooLarge(let error):
            error.description
        case .clientSecret(let error):
            error.description
        }
    }
}

extension OAuthError {
    /// The OAuth error a response carries, if any: a JSON body with a string `error` (and
    /// optional `error_description`, `error_uri`), or a `WWW-Authenticate: Bearer error="…"`
    /// header (RFC 6750 §3).
    static func carried(by response: HTTPResponse) -> OAuthError? {
        if let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
           let code = object["error"] as? String, !code.isEmpty {
            return .serverError(code: code, description: object["error_description"] as? String,
                                uri: (object["error_uri"] as? String).flatMap(URL.init(string:)))
        }
        if let header = response.headers["www-authenticate"], let parameters = bearerChallengeParameters(header),
           let code = parameters["error"], !code.isEmpty {
            return .serverError(code: code, description: parameters["error_description"],
                                uri: parameters["error_uri"].flatMap(URL.init(string:)))
        }
        return nil
    }

    /// The auth-params of a `Bearer` challenge (`Bearer realm="x", error="invalid_token"`), or
    /// `nil` when the header holds no Bearer challenge.
    static func bearerChallengeParameters(_ header: String) -> [String: String]? {
        let characters = Array(header)
        var index = 0
        func skipSpaces() { while index < characters.count, characters[index] == " " || characters[index] == "\t" { index += 1 } }
        func token() -> String {
            var text = ""
            while index < characters.count, !" \t,=\"".contains(characters[index]) { text.append(characters[index]); index += 1 }
            return text
        }
        while index < characters.count {
            skipSpaces()
            let scheme = token()
            guard !scheme.isEmpty else { index += 1; continue }
            var parameters: [String: String] = [:]
            while true {
                skipSpaces()
                let start = index
                let name = token()
                skipSpaces()
                guard !name.isEmpty, index < characters.count, characters[index] == "=" else { index = start; break }
                index += 1
                skipSpaces()
                var value = ""
                if index < characters.count, characters[index] == "\"" {
                    index += 1
                    while index < characters.count, characters[index] != "\"" {
                        if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                        value.append(characters[index])
                        index += 1
                    }
                    index += 1
                } else {
                    value = token()
                }
                parameters[name.lowercased()] = value
                skipSpaces()
                if index < characters.count, characters[index] == "," { index += 1 } else { break }
            }
            if scheme.lowercased() == "bearer" { return parameters }
            if index < characters.count, characters[index] == "," { index += 1 }
        }
        return nil
    }
}

/// A short, markup-free summary of a response body, for error messages: an HTML page's title
/// and first words, or a text body's first characters — at most 200 characters.
/// An HTML page as text — what the auth and REST errors show of a page a server answered with.
package enum HTMLText {
    /// The page's text: `script`, `style` and `head` elements removed, every tag a space, the
    /// common entities decoded.
    package static func plainText(of html: String) -> String {
        var text = html
        for element in ["script", "style", "head"] {
            while let open = text.range(of: "<\(element)", options: .caseInsensitive),
                  let close = text.range(of: "</\(element)>", options: .caseInsensitive, range: open.upperBound..<text.endIndex) {
                text.removeSubrange(open.lowerBound..<close.upperBound)
            }
        }
        var plain = ""
        var inTag = false
        for character in text {
            if character == "<" { inTag = true; plain.append(" ") } else if character == ">" { inTag = false } else if !inTag { plain.append(character) }
        }
        return decodingEntities(plain)
    }

    /// `text` with `&lt;`, `&gt;`, `&quot;`, `&#39;`, `&nbsp;` and `&amp;` decoded (`&amp;` last).
    package static func decodingEntities(_ text: String) -> String {
        var text = text
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&nbsp;", " "), ("&amp;", "&")] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text
    }
}

enum ResponseSummary {
    static func summarize(_ body: Data, contentType: String?) -> String {
        var text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        let looksLikeHTML = contentType?.lowercased().contains("html") == true || text.range(of: "<html", options: .caseInsensitive) != nil
            || text.range(of: "<!doctype", options: .caseInsensitive) != nil
        if looksLikeHTML {
            var title: String?
            if let open = text.range(of: "<title>", options: .caseInsensitive),
               let close = text.range(of: "</title>", options: .caseInsensitive, range: open.upperBound..<text.endIndex) {
                title = String(text[open.upperBound..<close.lowerBound])
                text.removeSubrange(open.lowerBound..<close.upperBound)
            }
            text = [title.map(HTMLText.decodingEntities), HTMLText.plainText(of: text)].compactMap { $0 }.joined(separator: ": ")
        }
        let words = text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
        return words.count > 200 ? String(words.prefix(199)) + "…" : words
    }
}
