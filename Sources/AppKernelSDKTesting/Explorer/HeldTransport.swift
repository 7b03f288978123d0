public import AppKernelAuth
import Foundation

/// An `HTTPTransport` a test controls, around a real one (an embedded org): data requests wait —
/// held, as ``HeldPasscodes`` holds prompts — until someone answers them (passes them on, fails
/// them, answers 401), and every request fails with a connection error while the network is down.
/// The lifecycle explorer's network steps (`network(down)`, `401(refresh)`, `syncPage(ok)`, …)
/// answer them, in any order with the other steps.
///
/// Token requests (`/services/oauth2/…`: a refresh after a 401) are never held: they go to the
/// inner transport at once, unless the network is down. With ``holdsRequests`` off, data requests
/// pass through too.
///
/// ```swift
/// let network = HeldTransport(EmbeddedOrg.sample())
/// let client = RestClient(credentials: credentials, transport: network.channel(for: "005A"))
/// // … the app sends a query:
/// #expect(network.held.count == 1)
/// network.pass()                 // the org answers it
/// ```
@MainActor
public final class HeldTransport: HTTPTransport {
    /// A request waiting for an answer.
    public struct HeldRequest: Sendable {
        /// The request as the client sent it.
        public let request: HTTPRequest
        /// The user whose client sent it (the channel's), `nil` for the transport's own.
        public let user: String?
        /// `GET /services/data/v62.0/query`: method and path, never the query or a token.
        public var summary: String { "\(request.method) \(request.url.path)" }
        fileprivate let id: Int
        fileprivate let answer: CheckedContinuation<HTTPResponse, any Error>
    }

    /// The transport answers go to.
    public nonisolated let inner: any HTTPTransport
    /// Whether data requests wait for ``pass()`` or ``answer(with:)``; when `false` they go to
    /// ``inner`` at once.
    public var holdsRequests: Bool
    /// Whether the network is down: every request — held ones when it goes down, new ones until
    /// it comes up — fails with ``connectionError(for:)``.
    public private(set) var isDown = false
    /// The requests waiting, oldest first.
    public private(set) var held: [HeldRequest] = []
    /// How many requests went to ``inner`` and have no answer yet.
    public private(set) var inFlight = 0
    /// How many requests got an answer or an error, held or not.
    public private(set) var answeredCount = 0
    /// Called with each answer ``inner`` gave, and the user whose request it was.
    public var onAnswer: (@MainActor (HTTPResponse, String?) -> Void)?
    /// The id the next held request gets.
    private var nextID = 0

    /// Creates a transport around `inner`.
    /// - Parameters:
    ///   - inner: Where answered requests go (an `EmbeddedOrg`).
    ///   - holdsRequests: Whether data requests wait for an answer (`true`) or pass through.
    public init(_ inner: any HTTPTransport, holdsRequests: Bool = true) {
        self.inner = inner
        self.holdsRequests = holdsRequests
    }

    /// A transport that sends through this one as `user`'s: what ``HeldRequest/user`` says.
    public func channel(for user: String) -> some HTTPTransport { Channel(network: self, user: user) }

    /// Sends `request`: held, passed on, or failed, as the transport stands now.
    public nonisolated func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await send(request, from: nil)
    }

    /// Sends `request` for `user`.
    func send(_ request: HTTPRequest, from user: String?) async throws -> HTTPResponse {
        if isDown { throw Self.connectionError(for: request) }
        guard holdsRequests, !Self.isTokenRequest(request) else { return try await forward(request, from: user) }
        // A cancelled task's request fails with CancellationError, as a real transport's does.
        let id = nextID
        nextID += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled { return continuation.resume(throwing: CancellationError()) }
                held.append(HeldRequest(request: request, user: user, id: id, answer: continuation))
            }
        } onCancel: {
            Task { @MainActor in self.cancel(id) }
        }
    }

    /// Fails the held request `id` (its task was cancelled) with `CancellationError`.
    private func cancel(_ id: Int) {
        guard let index = held.firstIndex(where: { $0.id == id }) else { return }
        answeredCount += 1
        held.remove(at: index).answer.resume(throwing: CancellationError())
    }

    // MARK: Answering

    /// Sends the oldest held request to ``inner``; its answer (or error) goes back to the client.
    /// - Returns: Whether a request was held.
    @discardableResult
    public func pass() -> Bool {
        guard !held.isEmpty else { return false }
        let waiting = held.removeFirst()
        inFlight += 1
        Task { @MainActor in
            defer { inFlight -= 1 }
            do { waiting.answer.resume(returning: try await forward(waiting.request, from: waiting.user, counted: false)) } catch {
                waiting.answer.resume(throwing: error)
            }
        }
        return true
    }

    /// Answers the oldest held request with `response`, without sending it.
    /// - Returns: Whether a request was held.
    @discardableResult
    public func answer(with response: HTTPResponse) -> Bool {
        guard !held.isEmpty else { return false }
        answeredCount += 1
        held.removeFirst().answer.resume(returning: response)
        return true
    }

    /// Fails the oldest held request with `error`.
    /// - Returns: Whether a request was held.
    @discardableResult
    public func fail(with error: any Error) -> Bool {
        guard !held.isEmpty else { return false }
        answeredCount += 1
        held.removeFirst().answer.resume(throwing: error)
        return true
    }

    /// Takes the network down: every held request fails with ``connectionError(for:)``, and so
    /// does every request until ``up()``.
    public func down() {
        isDown = true
        while let first = held.first { fail(with: Self.connectionError(for: first.request)) }
    }

    /// Fails every held request as `SocketTransport` fails one whose answer does not come in
    /// time: `OAuthError.timedOut`.
    public func timeOutAll() {
        while let first = held.first {
            fail(with: OAuthError.timedOut("\(first.summary): no answer in time (a test ended while it waited)"))
        }
    }

    /// Brings the network back up.
    public func up() { isDown = false }

    /// The error a request gets while the network is down: `SocketTransport`'s when no address
    /// of the host accepts a connection.
    public nonisolated static func connectionError(for request: HTTPRequest) -> HTTPTransportError {
        HTTPTransportError(code: .connectionFailed, request: "\(request.method) \(request.url.scheme ?? "?")://\(request.url.host ?? "")\(request.url.path)",
                           reason: "the network is down (a test took it down); it fails until the network comes back up")
    }

    /// Whether `request` goes to the OAuth endpoints (token, revoke, authorize): never held.
    public nonisolated static func isTokenRequest(_ request: HTTPRequest) -> Bool {
        request.url.path.hasPrefix("/services/oauth2/")
    }

    private func forward(_ request: HTTPRequest, from user: String?, counted: Bool = true) async throws -> HTTPResponse {
        if counted { inFlight += 1 }
        defer { if counted { inFlight -= 1 } }
        defer { answeredCount += 1 }
        let response = try await inner.send(request)
        onAnswer?(response, user)
        return response
    }

    /// One user's way into the transport.
    private struct Channel: HTTPTransport {
        let network: HeldTransport
        let user: String
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await network.send(request, from: user) }
    }
}
