import AppKernelAuth
import Foundation

/// One entry of Salesforce's error array: `[{"message", "errorCode", "fields"}]`.
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

    private enum CodingKeys: String, CodingKey { case message, errorCode, fields }

    /// Decodes an entry; `fields` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try container.decode(String.self, forKey: .message)
        errorCode = try container.decode(String.self, forKey: .errorCode)
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

    /// What to tell the user: the server's first message, else `fallback` (the seed's "Failed to
    /// delete item").
    public func userFacingMessage(fallback: String) -> String {
        serverErrors.first?.message ?? fallback
    }

    /// What failed, with the server's code and message where there is one.
    public var description: String {
        switch self {
        case .apiFailed(_, let underlying, let urlResponse):
            if let urlResponse {
                let server = serverErrors.first.map { " \($0.errorCode): \($0.message)" } ?? ""
                return "the REST call failed with HTTP \(urlResponse.status)\(server)"
            }
            return "the REST call failed: \(underlying.map { "\($0)" } ?? "no response")"
        case .apiResponseIsEmpty: return "the REST response has no body"
        case .decodingFailed(let error): return "the REST response could not be decoded: \(error)"
        case .jsonSerialization(let error): return "the REST response is not JSON: \(error)"
        case .invalidRequest(let reason): return "the REST request is invalid: \(reason)"
        case .network(let error): return "the REST call got no answer: \(error)"
        case .cancelled: return "the REST call was cancelled"
        }
    }
}
