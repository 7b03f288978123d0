public import Foundation
import AppKernelCore

/// The default transport: HTTP/1.1 over the system's sockets, TLS through the system's OpenSSL,
/// every answer bounded in memory and in time.
///
/// ```swift
/// let transport = SocketTransport()                   // 30 s a request, 64 MiB an answer
/// let client = RestClient(credentials: credentials, transport: transport)
/// ```
///
/// - **Memory.** The body is read from the socket in pieces of 64 KiB and counted before each
///   is kept: a `Content-Length` over the limit is refused before a byte of the body is read,
///   and any other body (chunked, or ended by the connection) the moment it passes the limit —
///   the connection is closed there, so the server's sending stops too. The limit is the
///   request's ``HTTPRequest/responseLimit``, else ``maximumResponseBytes``; the error is
///   ``ResponseTooLarge``. The header section is bounded by ``maximumHeaderBytes``.
/// - **Time.** ``deadline`` covers the whole request — resolving, connecting, the TLS
///   handshake, sending, and the last byte of the answer — so a server that trickles its body
///   fails with ``OAuthError/timedOut(_:)``. Cancelling the calling task ends the request at
///   once with ``OAuthError/cancelled``. The I/O runs on a thread of its own, never on Swift's
///   cooperative pool.
/// - **Content codings.** It asks for `Accept-Encoding: identity`, and refuses a body in any
///   other coding with ``HTTPTransportError/Code/unsupportedContentEncoding``: a server must not
///   send a coding the client did not accept, and decoding one would need zlib.
/// - **TLS.** TLS 1.2 or later; the server's certificate must chain to the system's trust store
///   (or to a certificate given to ``init(timeout:maximumResponseBytes:maximumIdleConnectionsPerHost:maximumIdleTime:trustedCertificates:)``)
///   and carry the URL's host name (SNI is sent) or IP address, else
///   ``HTTPTransportError/Code/certificateRejected`` and nothing is sent.
/// - **Connections.** Idle connections are kept for reuse, at most
///   ``maximumIdleConnectionsPerHost`` for each scheme, host and port, and closed with the
///   transport. Hosts resolve to IPv6 and IPv4 addresses alike.
/// - **Redirects** are returned as they are, never followed (``HTTPTransport``). There is no
///   proxy support and no cookie store: use ``URLSessionTransport`` where a proxy is needed.
public final class SocketTransport: HTTPTransport {
    /// The default of ``maximumResponseBytes``: 64 MiB.
    public static let defaultMaximumResponseBytes = 64 << 20
    /// The most an answer's status line and header fields (or a chunked body's trailers) may
    /// hold: 64 KiB. A larger header section fails with ``HTTPTransportError/Code/headerTooLarge``.
    public static let maximumHeaderBytes = 64 << 10

    /// The most a request may take, from resolving the host to the last byte of the answer.
    public let deadline: TimeInterval
    /// The most an answer's body may hold, for a request that names no
    /// ``HTTPRequest/responseLimit`` of its own.
    public let maximumResponseBytes: Int
    /// The most idle connections kept for one scheme, host and port.
    public let maximumIdleConnectionsPerHost: Int
    private let pool: ConnectionPool
    private let trustedCertificates: [Data]
    #if canImport(COpenSSL)
    private let tlsContext = Locked<TLSContext?>(nil)
    #endif

    /// Creates a transport that trusts the system's certificate authorities.
    /// - Parameters:
    ///   - timeout: How long a whole request may take.
    ///   - maximumResponseBytes: The most an answer's body may hold when the request names no limit.
    ///   - maximumIdleConnectionsPerHost: How many idle connections to keep for each host (0: none).
    ///   - maximumIdleTime: How long an idle connection is kept for reuse (servers close theirs
    ///     after a few seconds; one the server closed is never used).
    public init(timeout: TimeInterval = 30, maximumResponseBytes: Int = SocketTransport.defaultMaximumResponseBytes,
                maximumIdleConnectionsPerHost: Int = 4, maximumIdleTime: Duration = .seconds(15)) {
        deadline = timeout
        self.maximumResponseBytes = maximumResponseBytes
        self.maximumIdleConnectionsPerHost = max(0, maximumIdleConnectionsPerHost)
        pool = ConnectionPool(capacity: self.maximumIdleConnectionsPerHost, maximumIdle: maximumIdleTime)
        trustedCertificates = []
    }

    /// Creates a transport that trusts `trustedCertificates` (PEM) besides the system's
    /// certificate authorities: a private authority, or a test server's self-signed certificate.
    /// - Throws: ``HTTPTransportError`` (`invalidRequest`) when a blob holds no PEM certificate.
    public init(timeout: TimeInterval = 30, maximumResponseBytes: Int = SocketTransport.defaultMaximumResponseBytes,
                maximumIdleConnectionsPerHost: Int = 4, maximumIdleTime: Duration = .seconds(15),
                trustedCertificates: [Data]) throws(HTTPTransportError) {
        deadline = timeout
        self.maximumResponseBytes = maximumResponseBytes
        self.maximumIdleConnectionsPerHost = max(0, maximumIdleConnectionsPerHost)
        pool = ConnectionPool(capacity: self.maximumIdleConnectionsPerHost, maximumIdle: maximumIdleTime)
        self.trustedCertificates = trustedCertificates
        #if canImport(COpenSSL)
        do throws(TransferFailure) {
            let context = try TLSContext(trusting: trustedCertificates)
            tlsContext.withLock { $0 = context }
        } catch {
            throw Self.publicError(error, name: "SocketTransport(trustedCertificates:)", deadline: timeout) as? HTTPTransportError
                ?? HTTPTransportError(code: .invalidRequest, request: "SocketTransport(trustedCertificates:)", reason: "\(error)")
        }
        #endif
    }

    deinit { pool.closeAll() }

    /// How many idle connections the transport keeps now.
    public var idleConnectionCount: Int { pool.count }

    /// Sends `request` and returns its answer, whatever its status; a 3xx comes back as it is.
    /// - Throws: ``ResponseTooLarge`` for a body over the limit, ``OAuthError/timedOut(_:)``
    ///   past the deadline, ``OAuthError/cancelled`` when the task is cancelled, or
    ///   ``HTTPTransportError`` naming what else failed.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let limit = request.responseLimit ?? .init(bytes: maximumResponseBytes, setting: "SocketTransport(maximumResponseBytes:)")
        let seconds = deadline.isFinite && deadline > 0 ? min(deadline, 1e9) : 1e9
        let control = TransferControl(deadline: .now + .milliseconds(Int64(seconds * 1000)))
        let call = PendingCall()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.start(continuation) else { return }
                let thread = Thread { [self] in
                    let outcome: Result<HTTPResponse, any Error>
                    do throws(TransferFailure) {
                        outcome = .success(try perform(request, limit: limit, control: control))
                    } catch {
                        outcome = .failure(Self.publicError(error, name: "\(request.method) \(request.url.path)", deadline: deadline, request: request))
                    }
                    call.finish(outcome)
                }
                thread.name = "SocketTransport"
                thread.start()
            }
        } onCancel: {
            control.cancel()
            call.finish(.failure(OAuthError.cancelled))
        }
    }

    /// The request, on this thread: a pooled connection when one is idle (sent again on a new
    /// one when an idempotent request finds it closed), else a new one.
    private func perform(_ request: HTTPRequest, limit: HTTPRequest.ResponseLimit, control: TransferControl) throws(TransferFailure) -> HTTPResponse {
        let destination = try request.destination()
        let bytes = try request.wire(to: destination)
        while true {
            if control.isCancelled { throw .cancelled }
            let pooled = pool.take(destination.key)
            let connection: SocketConnection
            if let pooled {
                guard pooled.attach(control) else { pool.put(pooled); throw .cancelled }
                connection = pooled
            } else {
                connection = try open(destination, control: control)
            }
            do throws(TransferFailure) {
                try connection.write(bytes)
                let (response, reusable) = try connection.readResponse(method: request.method, url: request.url, limit: limit,
                                                                       headLimit: Self.maximumHeaderBytes)
                connection.detach()
                if reusable { pool.put(connection) } else { connection.close() }
                return response
            } catch {
                let stale = pooled != nil && !connection.receivedAny
                connection.detachAndClose()
                if stale, request.isIdempotent, case .failed(.connectionClosed, _) = error { continue }
                throw error
            }
        }
    }

    private func open(_ destination: HTTPRequest.Destination, control: TransferControl) throws(TransferFailure) -> SocketConnection {
        let connection = try SocketConnection.open(key: destination.key, host: destination.host, port: destination.port, control: control)
        guard destination.isTLS else { return connection }
        #if canImport(COpenSSL)
        do throws(TransferFailure) {
            try connection.startTLS(context: try context(), host: destination.host)
            return connection
        } catch {
            connection.detachAndClose()
            throw error
        }
        #else
        connection.detachAndClose()
        throw .failed(.tlsFailed, "this build of AppKernel has no TLS (it needs OpenSSL): use URLSessionTransport for https")
        #endif
    }

    #if canImport(COpenSSL)
    /// The TLS context, made on first use (loading the system's trust store takes a few milliseconds).
    private func context() throws(TransferFailure) -> TLSContext {
        try tlsContext.withLock { (context) throws(TransferFailure) -> TLSContext in
            if let context { return context }
            let made = try TLSContext(trusting: trustedCertificates)
            context = made
            return made
        }
    }
    #endif

    /// The error a caller sees for `failure`.
    private static func publicError(_ failure: TransferFailure, name: String, deadline: TimeInterval, request: HTTPRequest? = nil) -> any Error {
        switch failure {
        case .timedOut:
            let seconds = deadline.rounded() == deadline && deadline < 1e9 ? "\(Int(deadline))" : "\(deadline)"
            return OAuthError.timedOut("\(name): no complete answer within \(seconds) s")
        case .cancelled:
            return OAuthError.cancelled
        case .tooLarge(let error):
            return error
        case .failed(let code, let reason):
            return HTTPTransportError(code: code, request: request.map(HTTPTransportError.name(of:)) ?? name, reason: reason)
        }
    }
}

/// One call in flight: resumed exactly once — by its answer or by a cancellation, whichever
/// comes first.
private final class PendingCall: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var outcome: Result<HTTPResponse, any Error>?
    }

    private let state = Locked(State())

    /// Registers the continuation; `false` (and resumed) when the call ended before it started.
    func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let early: Result<HTTPResponse, any Error>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// Ends the call with `outcome` unless it already ended.
    func finish(_ outcome: Result<HTTPResponse, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }
}
