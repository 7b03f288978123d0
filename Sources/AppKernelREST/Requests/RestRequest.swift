public import AppKernelAuth
public import Foundation

/// One REST call, independent of who sends it: method, path under the instance URL, query,
/// headers, JSON body. Every request has a stable ``id`` (the record list keys in-flight deletes
/// by it).
public struct RestRequest: Sendable, Hashable, Identifiable {
    /// The HTTP methods the Salesforce REST API uses.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// `GET`.
        case get = "GET"
        /// `POST`.
        case post = "POST"
        /// `PATCH`.
        case patch = "PATCH"
        /// `PUT`.
        case put = "PUT"
        /// `DELETE`.
        case delete = "DELETE"
        /// `HEAD`.
        case head = "HEAD"
    }

    /// A stable identifier.
    public let id: UUID
    /// The method.
    public var method: Method
    /// The path under the instance URL, starting with `/` (`/services/data/v62.0/query`).
    public var path: String
    /// Query parameters, in order (percent-encoded strictly when sent).
    public var queryParameters: [QueryParameter]
    /// Extra header fields (authorization and content type are added when sent).
    public var headers: [String: String]
    /// The JSON body.
    public var body: Data?
    /// The API version a builder was given when it is malformed: ``RestClient/send(request:)``
    /// refuses the request with ``RestClientError/invalidAPIVersion(_:reason:)`` before sending.
    var malformedAPIVersion: String?

    /// A query parameter.
    public struct QueryParameter: Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// Creates a parameter.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a request.
    public init(method: Method, path: String, queryParameters: [QueryParameter] = [], headers: [String: String] = [:], body: Data? = nil) {
        self.id = UUID()
        self.method = method
        self.path = path
        self.queryParameters = queryParameters
        self.headers = headers
        self.body = body
    }

    /// The HTTP request for an instance and a token.
    public func httpRequest(instanceURL: URL, accessToken: String) -> HTTPRequest {
        var base = instanceURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + path
        if !queryParameters.isEmpty { text += "?" + FormEncoding.encode(queryParameters.map { ($0.name, $0.value) }) }
        var fields = headers
        fields["Authorization"] = "Bearer \(accessToken)"
        fields["Accept"] = "application/json"
        if body != nil { fields["Content-Type"] = "application/json" }
        return HTTPRequest(method: method.rawValue, url: URL(string: text) ?? instanceURL, headers: fields, body: body)
    }
}
