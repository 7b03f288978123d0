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

    /// The first connection labelled `label` (any, when nil) once it has closed, within `limit`;
    /// nil when none closed in time.
    public func closedConnection(labelled label: String? = nil, within limit: Duration) async -> Span? {
        await poll(within: limit) { spans in
            spans.first { label == nil || $0.label == label }.flatMap { $0.closed == nil ? nil : $0 }
        }
    }

    /// Whether at least one connection was accepted and every one has closed, within `limit`.
    public func allClosed(within limit: Duration) async -> Bool {
        await poll(within: limit) { spans in !spans.isEmpty && spans.allSatisfy { $0.closed != nil } ? true : nil } ?? false
    }

    /// What `found` finds in the connections, looking every 5 ms for up to `limit`. The last look
    /// comes after the limit, so a caller resumed late still sees what happened meanwhile.
    private func poll<Found>(within limit: Duration, _ found: ([Span]) -> Found?) async -> Found? {
        let end = ContinuousClock.now + limit
        while true {
            if let result = found(connections) { return result }
            if ContinuousClock.now >= end { return nil }
            try? await Task.sleep(for: .milliseconds(5))    // polling loopback I/O, nothing else to wait on
        }
    }
}
