public import Foundation
import Synchronization
#if canImport(FoundationNetworking)
public import FoundationNetworking
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
///
/// Every request has a whole-request deadline, enforced here: URLSession's own
/// `timeoutIntervalForRequest` is an *idle* timeout, which a server trickling one byte a second
/// never trips. When the deadline passes the request is cancelled and ``OAuthError/timedOut(_:)``
/// names it; cancelling the calling task cancels the request too (``OAuthError/cancelled``).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    /// The most a request may take, from sending it to the last byte of the answer.
    public let deadline: TimeInterval

    /// Creates a transport with its own session.
    /// - Parameter timeout: How long a whole request may take (and the most it may sit idle).
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpShouldSetCookies = false
        deadline = timeout
        session = URLSession(configuration: configuration, delegate: RedirectBlocker(), delegateQueue: nil)
    }

    /// Creates a transport with a given session configuration (extra `protocolClasses`, for
    /// instance); redirects are still never followed. Its `timeoutIntervalForResource` is the
    /// whole-request deadline.
    public init(configuration: URLSessionConfiguration) {
        deadline = configuration.timeoutIntervalForResource
        session = URLSession(configuration: configuration, delegate: RedirectBlocker(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`; a 3xx comes back as it is.
    /// - Throws: ``OAuthError/timedOut(_:)`` past the deadline, ``OAuthError/cancelled`` when
    ///   the task is cancelled, or URLSession's error when no answer came.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let pending = PendingRequest()
        let name = "\(request.method) \(request.url.path)"
        let deadline = deadline
        let seconds = deadline.rounded() == deadline && deadline < 1e9 ? "\(Int(deadline))" : "\(deadline)"
        let timedOut = OAuthError.timedOut("\(name): no complete answer within \(seconds) s")
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        // URLSession's own resource timeout may fire first: the same deadline.
                        pending.finish(.failure((error as? URLError)?.code == .timedOut ? timedOut : error))
                    } else if let response {
                        pending.finish(.success((data ?? Data(), response)))
                    } else {
                        pending.finish(.failure(OAuthError.transport("\(name): no answer")))
                    }
                }
                guard pending.start(task, continuation) else { return }
                if deadline.isFinite, deadline > 0 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { pending.finish(.failure(timedOut)) }
                }
                task.resume()
            }
        } onCancel: {
            pending.finish(.failure(OAuthError.cancelled))
        }
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

/// One request in flight: resumed exactly once — by its answer, its deadline or a cancellation,
/// whichever comes first — and its URLSession task cancelled when the answer did not win.
private final class PendingRequest: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var outcome: Result<(Data, URLResponse), any Error>?
    }

    private let state = Mutex(State())

    /// Registers the task and continuation; `false` (the continuation already resumed) when the
    /// request was cancelled before it started.
    func start(_ task: URLSessionDataTask, _ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let early: Result<(Data, URLResponse), any Error>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.task = task
            state.continuation = continuation
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// Ends the request with `outcome` unless it already ended.
    func finish(_ outcome: Result<(Data, URLResponse), any Error>) {
        let (continuation, task): (CheckedContinuation<(Data, URLResponse), any Error>?, URLSessionDataTask?) = state.withLock { state in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            defer { state.continuation = nil; state.task = nil }
            return (state.continuation, state.task)
        }
        continuation?.resume(with: outcome)
        if case .failure = outcome { task?.cancel() }
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
