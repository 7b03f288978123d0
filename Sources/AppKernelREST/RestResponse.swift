public import AppKernelCore
import AppKernelAuth
public import Foundation

/// A successful response: status, headers and body, with the Mobile SDK's accessors.
public struct RestResponse: Sendable, Hashable {
    /// The HTTP status (2xx).
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    /// The body.
    public var data: Data
    /// The request it answers.
    public var requestID: UUID

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], data: Data = Data(), requestID: UUID = UUID()) {
        self.status = status
        self.headers = headers
        self.data = data
        self.requestID = requestID
    }

    /// The raw body.
    public var asData: Data { data }

    /// The body as UTF-8 text.
    public var asString: String { String(decoding: data, as: UTF8.self) }

    /// The body as JSON.
    /// - Throws: ``RestClientError/apiResponseIsEmpty`` for an empty body (a 204), or
    ///   ``RestClientError/jsonSerialization(underlyingError:)``.
    public func asJSON() throws(RestClientError) -> JSONValue {
        guard !data.isEmpty else { throw .apiResponseIsEmpty }
        do { return try JSONValue(jsonData: data) } catch { throw .jsonSerialization(underlyingError: error) }
    }

    /// The body decoded as `type`.
    /// - Throws: ``RestClientError/apiResponseIsEmpty`` or ``RestClientError/decodingFailed(underlyingError:)``.
    public func asDecodable<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(RestClientError) -> T {
        guard !data.isEmpty else { throw .apiResponseIsEmpty }
        do { return try decoder.decode(type, from: data) } catch { throw .decodingFailed(underlyingError: error) }
    }
}

extension JSONValue {
    /// The value as a `JSONSerialization` object.
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }

    /// Compact JSON data with sorted keys, slashes left as they are (as Salesforce writes URLs).
    public func jsonData() -> Data {
        (try? JSONSerialization.data(withJSONObject: foundationObject, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])) ?? Data("null".utf8)
    }
}
