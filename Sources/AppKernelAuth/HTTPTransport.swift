import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP request, as the auth and REST clients send it.
public struct HTTPRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// Where to send it.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// A form-encoded POST (`application/x-www-form-urlencoded`), every value strictly encoded.
    public static func form(_ url: URL, _ parameters: [(String, String)]) -> HTTPRequest {
        HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                    body: Data(FormEncoding.encode(parameters).utf8))
    }
}

/// An HTTP response. Redirects are returned as they are, never followed by the transport.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response; header names are lower-cased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The `Location` header of a redirect, resolved against `base`.
    public func location(relativeTo base: URL) -> URL? {
        headers["location"].flatMap { URL(string: $0, relativeTo: base)?.absoluteURL }
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Sends HTTP requests. Implementations never follow redirects: the caller sees every 3xx, which
/// is how a login captures the redirect to the app's callback URL.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    /// - Throws: When no response arrives (connection refused, timeout).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// A transport over `URLSession` (FoundationNetworking on Linux).
///
/// Redirects are stopped by a session delegate — on Linux a task's own delegate is ignored, and a
/// redirect to a custom scheme (`myapp://callback#…`) would otherwise fail with error -1000.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport with its own session.
    /// - Parameter timeout: How long a request may take.
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration, delegate: RedirectBlocker(), delegateQueue: nil)
    }

    /// Creates a transport with a given session configuration (extra `protocolClasses`, for
    /// instance); redirects are still never followed.
    public init(configuration: URLSessionConfiguration) {
        session = URLSession(configuration: configuration, delegate: RedirectBlocker(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`; a 3xx comes back as it is.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw OAuthError.transport("the answer to \(request.method) \(request.url.path) was not HTTP")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}

/// Refuses every redirect so that the caller sees it.
/// `@unchecked Sendable`: it has no state at all.
private final class RedirectBlocker: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

/// A transport that answers with a closure, in process: for unit tests and embedded servers.
public struct InProcessTransport: HTTPTransport {
    private let handler: @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// Creates a transport that answers every request with `handler`.
    public init(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.handler = handler }

    /// Answers `request` with the handler.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await handler(request) }
}
