public import Foundation
import AppKernelCore
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A transport over `URLSession` (FoundationNetworking on Linux): for an app that needs curl's
/// features — a proxy (`connectionProxyDictionary`, `https_proxy`), HTTP/2, cookies, extra
/// `protocolClasses`. ``SocketTransport`` is the default and the one to prefer.
///
/// Redirects are stopped by the session's delegate — on Linux a task's own delegate is ignored,
/// and a redirect to a custom scheme (`myapp://callback#…`) would otherwise fail with error -1000.
///
/// Every request has a whole-request deadline, enforced here: URLSession's own
/// `timeoutIntervalForRequest` is an *idle* timeout, which a server trickling one byte a second
/// never trips. When the deadline passes the request is cancelled — a body still arriving too —
/// and ``OAuthError/timedOut(_:)`` names it; cancelling the calling task cancels the request too
/// (``OAuthError/cancelled``).
///
/// Answers are bounded **only on a best-effort basis**: a `Content-Length` over the request's
/// ``HTTPRequest/responseLimit`` (else ``maximumResponseBytes``) is refused, bytes are counted
/// as the delegate receives them (decompressed) and the task is cancelled when they pass the
/// limit, failing with ``ResponseTooLarge``, and nothing past the limit is kept. But
/// FoundationNetworking cannot bound memory: its curl-based URLSession reads the socket without
/// backpressure, queues data for the delegate asynchronously and keeps reading for a while after
/// a cancel — hundreds of megabytes of a hostile answer on a fast link. Where memory must stay
/// bounded, use ``SocketTransport``.
///
/// The transport owns one session for its life and invalidates it when it is released, once its
/// tasks have ended (every call's task has ended or been cancelled by then).
///
/// It steers around a FoundationNetworking fault that stops the whole process ("Trying to
/// access a behaviour for a task that in not in the registry", swift-corelibs-foundation issues
/// 3292 and 3296): cancelling a task that is completing at that moment. So the session keeps no
/// URL cache (a cancel racing the cache lookup is the likeliest case — and an auth transport's
/// answers are not to be cached anyway), a task URLSession has reported complete is never
/// cancelled, cancels are made on the session's delegate queue — where completions are reported —
/// and releasing the transport cancels nothing (`invalidateAndCancel` cancels every task still in
/// the session's registry, completing ones included).
public final class URLSessionTransport: HTTPTransport {
    /// The default of ``maximumResponseBytes``: 64 MiB.
    public static let defaultMaximumResponseBytes = 64 << 20

    private let session: URLSession
    private let delegate: SessionDelegate
    /// The most a request may take, from sending it to the last byte of the answer.
    public let deadline: TimeInterval
    /// The most an answer's body may hold, after decompression, for a request that names no
    /// ``HTTPRequest/responseLimit`` of its own.
    public let maximumResponseBytes: Int

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - timeout: How long a whole request may take (and the most it may sit idle).
    ///   - maximumResponseBytes: The most an answer's body may hold when the request names no limit.
    public convenience init(timeout: TimeInterval = 30, maximumResponseBytes: Int = URLSessionTransport.defaultMaximumResponseBytes) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpShouldSetCookies = false
        self.init(configuration: configuration, maximumResponseBytes: maximumResponseBytes)
    }

    /// Creates a transport with a given session configuration (extra `protocolClasses`, for
    /// instance); redirects are still never followed and its `urlCache` is not used (the
    /// transport works on a copy without one). Its `timeoutIntervalForResource` is the
    /// whole-request deadline.
    public init(configuration: URLSessionConfiguration, maximumResponseBytes: Int = URLSessionTransport.defaultMaximumResponseBytes) {
        // swift-corelibs-foundation's configuration copies itself (NSCopying) as a configuration.
        let configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        deadline = configuration.timeoutIntervalForResource
        self.maximumResponseBytes = maximumResponseBytes
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    // Invalidating releases the session's delegate (a session keeps its delegate until then).
    // Every call's task has ended or been cancelled by now, so finishing them waits for nothing a
    // server controls; `invalidateAndCancel` would cancel tasks that are completing (see above).
    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`; a 3xx comes back as it is.
    /// - Throws: ``ResponseTooLarge`` for a body over the limit, ``OAuthError/timedOut(_:)``
    ///   past the deadline, ``OAuthError/cancelled`` when the task is cancelled, or URLSession's
    ///   error when no answer came.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let limit = request.responseLimit ?? .init(bytes: maximumResponseBytes, setting: "URLSessionTransport(maximumResponseBytes:)")
        let name = "\(request.method) \(request.url.path)"
        let deadline = deadline
        let seconds = deadline.rounded() == deadline && deadline < 1e9 ? "\(Int(deadline))" : "\(deadline)"
        let timedOut = OAuthError.timedOut("\(name): no complete answer within \(seconds) s")
        let pending = PendingRequest(limit: limit, method: request.method, url: request.url, timedOut: timedOut,
                                     cancelling: session.delegateQueue)
        let delegate = delegate
        defer { delegate.forget(pending) }
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let started = pending.start(continuation) {
                    let task = session.dataTask(with: urlRequest)
                    delegate.track(task, pending)
                    task.resume()
                    return task
                }
                guard started else { return }
                if deadline.isFinite, deadline > 0 {
                    // Weakly: a timer still waiting when the call ended must not keep the answer alive.
                    DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak pending] in pending?.finish(.failure(timedOut)) }
                }
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

/// One request in flight: its body so far (bytes, not a `Data` grown by appending, which leaked
/// its storage under the 6.3 toolchain), counted against its limit, and its end — resumed
/// exactly once, by its answer, its limit, its deadline or a cancellation, whichever comes
/// first; its URLSession task is cancelled when the answer did not win, unless URLSession has
/// reported it complete.
private final class PendingRequest: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        /// Whether the request ended.
        var ended = false
        /// How it ended, kept only when it ended before its continuation was registered.
        var early: Result<(Data, URLResponse), any Error>?
        var response: URLResponse?
        var body: [UInt8] = []
        /// Whether URLSession reported the task complete: it must not be cancelled then.
        var completed = false
    }

    private let state = Locked(State())
    private let limit: HTTPRequest.ResponseLimit
    private let method: String
    private let url: URL
    private let timedOut: OAuthError
    /// The session's delegate queue: cancels are made there, in order with its completions.
    private let cancelling: OperationQueue

    init(limit: HTTPRequest.ResponseLimit, method: String, url: URL, timedOut: OAuthError, cancelling: OperationQueue) {
        self.limit = limit
        self.method = method
        self.url = url
        self.timedOut = timedOut
        self.cancelling = cancelling
    }

    /// Registers the continuation and the task `makeTask` makes and resumes; `false` (the
    /// continuation already resumed, no task made) when the request was cancelled before it
    /// started. The task is made and resumed under the lock `finish` takes, so a cancel never
    /// finds it unstarted — a task made and never resumed or ended would stay in its session's
    /// registry, and keep the session, for good.
    func start(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>, task makeTask: () -> URLSessionDataTask) -> Bool {
        let early: Result<(Data, URLResponse), any Error>? = state.withLock { state in
            if state.ended { return state.early ?? .failure(OAuthError.cancelled) }
            state.continuation = continuation
            state.task = makeTask()
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// The answer's head arrived: `false` (and the request ended) when its `Content-Length`
    /// announces more than the limit.
    func received(_ response: URLResponse) -> Bool {
        let announced = response.expectedContentLength
        if announced > Int64(limit.bytes) {
            finish(.failure(tooLarge(.announced(announced))))
            return false
        }
        state.withLock { $0.response = response }
        return true
    }

    /// Bytes of the body arrived (decompressed): kept, or the request ended when they pass the limit.
    func received(_ data: Data) {
        let over: Int? = state.withLock { state in
            guard !state.ended else { return nil }
            let count = state.body.count + data.count
            guard count <= limit.bytes else { return count }
            state.body.append(contentsOf: data)
            return nil
        }
        if let over { finish(.failure(tooLarge(.received(over)))) }
    }

    /// URLSession finished the task (on its delegate queue): the answer, or why there is none.
    func completed(_ error: (any Error)?) {
        let (response, bytes) = state.withLock { state in
            state.completed = true
            return (state.response, state.body)
        }
        let body = Data(bytes)
        if let error {
            // URLSession's own resource timeout may fire first: the same deadline.
            finish(.failure((error as? URLError)?.code == .timedOut ? timedOut : error))
        } else if let response {
            finish(.success((body, response)))
        } else {
            finish(.failure(OAuthError.transport("\(method) \(url.path): no answer")))
        }
    }

    /// Ends the request with `outcome` unless it already ended.
    func finish(_ outcome: Result<(Data, URLResponse), any Error>) {
        let (continuation, task): (CheckedContinuation<(Data, URLResponse), any Error>?, URLSessionDataTask?) = state.withLock { state in
            guard !state.ended else { return (nil, nil) }
            state.ended = true
            if state.continuation == nil { state.early = outcome }
            state.body = []
            defer { state.continuation = nil; state.task = nil }
            return (state.continuation, state.task)
        }
        continuation?.resume(with: outcome)
        if case .failure = outcome, let task {
            cancelling.addOperation { [state] in
                if !state.withLock({ $0.completed }) { task.cancel() }
            }
        }
    }

    private func tooLarge(_ evidence: ResponseTooLarge.Evidence) -> ResponseTooLarge {
        ResponseTooLarge(method: method, url: url, limit: limit.bytes, setting: limit.setting, evidence: evidence)
    }
}

/// The session's delegate: refuses every redirect so that the caller sees it, and hands each
/// task's answer to its ``PendingRequest`` (on Linux only the session's delegate is called).
/// `@unchecked Sendable`: its one stored property is a `Locked`.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let requests = Locked<[Int: PendingRequest]>([:])

    func track(_ task: URLSessionTask, _ request: PendingRequest) {
        requests.withLock { $0[task.taskIdentifier] = request }
    }

    /// Drops the delegate's hold on `request` once its call returned, whether or not URLSession
    /// reported the task complete (after a cancel it may never do so): no cycle outlives a call.
    func forget(_ request: PendingRequest) {
        requests.withLock { requests in
            for (key, value) in requests where value === request { requests.removeValue(forKey: key) }
        }
    }

    private func request(for task: URLSessionTask) -> PendingRequest? {
        requests.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        completionHandler(request(for: dataTask)?.received(response) == false ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        request(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let pending = requests.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        pending?.completed(error)
    }
}
