import AppKernelCore

/// When each connection a test server accepted opened and closed, stamped on the server's own
/// threads.
///
/// A test that asks "did the client's deadline (or cancellation) end the transfer?" reads these
/// stamps instead of timing its own `await`: the test's task resumes on Swift's cooperative pool,
/// which a loaded machine delays for as long as the pool is busy with other tests (a caller of a
/// 1 s deadline once resumed after 39 s under ThreadSanitizer, beside 1,100 tests), while the
/// connection's end is stamped by a thread blocked on the socket, which wakes when the client
/// closes it.
public final class ConnectionLog: Sendable {
    /// One connection the server accepted.
    public struct Span: Sendable {
        /// What the connection was for: the request's path once the server read it, else "".
        public var label: String
        /// When the server accepted it.
        public var opened: ContinuousClock.Instant
        /// When the server saw it end (the client left, or the server stopped).
        public var closed: ContinuousClock.Instant?
        /// How long it stayed open, or nil while it still is.
        public var duration: Duration? { closed.map { $0 - opened } }
    }

    private let spans = Locked<[Span]>([])

    /// Makes an empty log.
    public init() {}

    /// Every connection so far, in the order they were accepted.
    public var connections: [Span] { spans.withLock { $0 } }

    /// Records a connection accepted now; returns its number for ``label(_:as:)`` and ``close(_:)``.
    func open() -> Int {
        let now = ContinuousClock.now
        return spans.withLock { spans in
            spans.append(Span(label: "", opened: now, closed: nil))
            return spans.count - 1
        }
    }

    /// Names connection `number` after its request.
    func label(_ number: Int, as label: String) {
        spans.withLock { $0[number].label = label }
    }

    /// Records that connection `number` ended now.
    func close(_ number: Int) {
        let now = ContinuousClock.now
        spans.withLock { $0[number].closed = now }
    }

    /// The first connection labelled `label` (any, when nil) once it has closed, polling every
    /// 5 ms for up to `limit`; nil when none closed in time. The last look comes after the limit,
    /// so a caller resumed late still sees a connection that closed meanwhile.
    public func closedConnection(labelled label: String? = nil, within limit: Duration) async -> Span? {
        let end = ContinuousClock.now + limit
        while true {
            if let span = connections.first(where: { label == nil || $0.label == label }), span.closed != nil { return span }
            if ContinuousClock.now >= end { return nil }
            try? await Task.sleep(for: .milliseconds(5))    // polling loopback I/O, nothing else to wait on
        }
    }
}
