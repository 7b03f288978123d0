public import Foundation

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
    /// The most the answer's body may hold, and the setting that chose it; `nil` leaves it to
    /// the transport (``SocketTransport/maximumResponseBytes``).
    public var responseLimit: ResponseLimit?

    /// A bound on the size of an answer's body, as it arrives (after decompression, for a
    /// transport that decompresses). A body over it fails with ``ResponseTooLarge``.
    public struct ResponseLimit: Sendable, Hashable {
        /// The most bytes the body may hold.
        public var bytes: Int
        /// Where a person changes it (`RestClient(maximumResponseBytes:)`), for the error's message.
        public var setting: String

        /// Creates a limit.
        public init(bytes: Int, setting: String) {
            self.bytes = bytes
            self.setting = setting
        }
    }

    /// Creates a request.
    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, responseLimit: ResponseLimit? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.responseLimit = responseLimit
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
///
/// ``SocketTransport`` is the default: it bounds every answer in memory and time. Others:
/// ``URLSessionTransport`` (curl's features, such as proxies; its limits are best-effort) and
/// ``InProcessTransport`` (a closure, for tests). An implementation should honour
/// ``HTTPRequest/responseLimit``; the REST and OAuth clients check the size of what it returns
/// as well.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    /// - Throws: When no response arrives (connection refused, timeout).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// A transport that answers with a closure, in process: for unit tests and embedded servers.
public struct InProcessTransport: HTTPTransport {
    private let handler: @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// Creates a transport that answers every request with `handler`.
    public init(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.handler = handler }

    /// Answers `request` with the handler.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await handler(request) }
}
