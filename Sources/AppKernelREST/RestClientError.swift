import AppKernelCore
public import AppKernelAuth
import Foundation

/// One entry of Salesforce's error array: `[{"message", "errorCode", "fields"}]` (per-record
/// results of collections name the code `statusCode`; it is read the same).
public struct ServerError: Sendable, Hashable, Decodable {
    /// The human-readable message.
    public var message: String
    /// `DELETE_FAILED`, `INVALID_SESSION_ID`, `NOT_FOUND`, `MALFORMED_QUERY`, …
    public var errorCode: String
    /// The fields concerned.
    public var fields: [String]

    /// Creates an entry.
    public init(message: String, errorCode: String, fields: [String] = []) {
        self.message = message
        self.errorCode = errorCode
        self.fields = fields
    }

    private enum CodingKeys: String, CodingKey { case message, errorCode, statusCode, fields }

    /// Decodes an entry; `fields` may be absent, the code may be named `statusCode`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try container.decode(String.self, forKey: .message)
        errorCode = try container.decodeIfPresent(String.self, forKey: .errorCode) ?? container.decode(String.self, forKey: .statusCode)
        fields = try container.decodeIfPresent([String].self, forKey: .fields) ?? []
    }
}

/// Why a REST call failed — the Mobile SDK's `RestClientError`, plus the transport's failures.
public enum RestClientError: Error, Sendable, CustomStringConvertible {
    /// The server answered with a non-2xx status (`response` holds the status and body), or the
    /// call could not be authorised (`underlyingError` says why: a failed refresh).
    case apiFailed(response: RestResponse?, underlyingError: (any Error)?, urlResponse: HTTPResponse?)
    /// The response had no body where one was needed.
    case apiResponseIsEmpty
    /// The body could not be decoded into the requested type.
    case decodingFailed(underlyingError: any Error)
    /// The body was not JSON.
    case jsonSerialization(underlyingError: any Error)
    /// The request could not be built.
    case invalidRequest(String)
    /// No answer came (connection refused or dropped, timeout).
    case network(underlyingError: any Error)
    /// The call was cancelled.
    case cancelled
    /// An API version is not written `v<major>.<minor>` (`60.0`, `v60`, `vabc`); `reason` says
    /// what is wrong. Raised when a client is made, or before a request is sent.
    case invalidAPIVersion(String, reason: String)
    /// The answer's body was larger than the client's ``RestClient/maximumResponseBytes`` (or
    /// the limit the request named) and was refused; the error names the limit and the URL.
    case responseTooLarge(ResponseTooLarge)

    /// The seed tutorial's older name for ``apiFailed(response:underlyingError:urlResponse:)``.
    public static func apiInvocationFailed(response: RestResponse?, underlyingError: (any Error)?, urlResponse: HTTPResponse?) -> RestClientError {
        .apiFailed(response: response, underlyingError: underlyingError, urlResponse: urlResponse)
    }

    /// The HTTP status of a failed call.
    public var statusCode: Int? {
        if case .apiFailed(_, _, let urlResponse?) = self { return urlResponse.status }
        return nil
    }

    /// The server's error array, decoded (empty when the body is not one).
    public var serverErrors: [ServerError] {
        guard case .apiFailed(_, _, let urlResponse?) = self else { return [] }
        return (try? JSONDecoder().decode([ServerError].self, from: urlResponse.body)) ?? []
    }

    /// A failed call's body as text, whatever it is (`nil` when there was no answer or no body).
    public var responseBody: String? {
        guard case .apiFailed(_, _, let urlResponse?) = self, !urlResponse.body.isEmpty else { return nil }
        return urlResponse.text
    }

    /// The records an external id matched when an upsert (or a retrieve or delete by external
    /// id) answered 300: their URLs (`/services/data/v62.0/sobjects/Account/001…`).
    public var matchingRecordURLs: [String] {
        guard case .apiFailed(_, _, let urlResponse?) = self, urlResponse.status == 300 else { return [] }
        return (try? JSONDecoder().decode([String].self, from: urlResponse.body)) ?? []
    }

    /// The body in a line of at most `limit` characters: the error array's `CODE: message`
    /// entries; for a 300, the records that matched; an OAuth `error: description`; an HTML
    /// page's title and text without tags; any other text with its white space collapsed.
    /// `nil` when there is no body.
    public func bodySummary(limit: Int = 300) -> String? {
        guard case .apiFailed(_, _, let urlResponse?) = self, let body = responseBody else { return nil }
        let errors = serverErrors
        let summary: String
        if !errors.isEmpty {
            summary = errors.map { "\($0.errorCode): \($0.message)" }.joined(separator: "; ")
        } else if urlResponse.status == 300, !matchingRecordURLs.isEmpty {
            summary = "more than one record matches: " + matchingRecordURLs.joined(separator: ", ")
        } else if let object = try? JSONValue(jsonData: urlResponse.body), let code = object["error"]?.stringValue {
            summary = code + (object["error_description"]?.stringValue.map { ": " + $0 } ?? "")
        } else if urlResponse.headers["content-type"]?.contains("html") == true || body.drop(while: \.isWhitespace).first == "<" {
            summary = Self.text(ofHTML: body)
        } else {
            summary = body
        }
        return Self.truncated(Self.collapsed(summary), to: limit)
    }

    /// What to tell the user: the server's first message; else, when the body says something,
    /// `fallback` followed by the status and the body's summary (`Failed to delete item (HTTP 500:
    /// Service Unavailable …)`); else `fallback` (the seed's "Failed to delete item").
    public func userFacingMessage(fallback: String) -> String {
        if let message = serverErrors.first?.message { return message }
        if let status = statusCode, let summary = bodySummary(limit: 160), !summary.isEmpty {
            return "\(fallback) (HTTP \(status): \(summary))"
        }
        return fallback
    }

    /// What failed, with the server's code and message where there is one, else a summary of
    /// whatever body came back.
    public var description: String {
        switch self {
        case .apiFailed(_, let underlying, let urlResponse):
            if let urlResponse {
                if let first = serverErrors.first { return "the REST call failed with HTTP \(urlResponse.status) \(first.errorCode): \(first.message)" }
                return "the REST call failed with HTTP \(urlResponse.status)" + (bodySummary(limit: 500).map { ": " + $0 } ?? "")
            }
            return "the REST call failed: \(underlying.map { "\($0)" } ?? "no response")"
        case .apiResponseIsEmpty: return "the REST response has no body"
        case .decodingFailed(let error): return "the REST response could not be decoded: \(error)"
        case .jsonSerialization(let error): return "the REST response is not JSON: \(error)"
        case .invalidRequest(let reason): return "the REST request is invalid: \(reason)"
        case .network(let error): return "the REST call got no answer: \(error)"
        case .cancelled: return "the REST call was cancelled"
        case .invalidAPIVersion(let version, let reason): return "the API version \"\(version)\" is malformed: \(reason)"
        case .responseTooLarge(let error): return "the REST call was refused: \(error)"
        }
    }

    // MARK: Summaries

    /// An HTML page's title, then its text: tags, scripts and styles removed, common entities decoded.
    private static func text(ofHTML html: String) -> String {
        let stripped = HTMLText.plainText(of: html)
        let title = html.range(of: "<title>", options: .caseInsensitive).flatMap { open in
            html.range(of: "</title>", options: .caseInsensitive, range: open.upperBound..<html.endIndex).map { String(html[open.upperBound..<$0.lowerBound]) }
        }.map(collapsed) ?? ""
        let body = collapsed(stripped)
        return title.isEmpty || body.hasPrefix(title) ? body : body.isEmpty ? title : "\(title) — \(body)"
    }

    private static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// At most `limit` characters, cut at a word where one is near, with "…".
    private static func truncated(_ text: String, to limit: Int) -> String {
        guard text.count > limit, limit > 1 else { return text }
        var cut = String(text.prefix(limit - 1))
        if let space = cut.lastIndex(of: " "), cut.distance(from: space, to: cut.endIndex) < 20 { cut = String(cut[..<space]) }
        return cut + "…"
    }
}
