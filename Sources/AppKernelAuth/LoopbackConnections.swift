/// The open connections of a ``LoopbackListener``'s serving loop and the rules that bound them:
/// a plain value that takes events (a connection accepted, bytes read, an accept that failed, the
/// time) and says what to close and how long `poll` may wait. The loop stays a thin shell over
/// `poll`, and every rule is tested without sockets and without waiting.
///
/// The rules, each a ``Limits`` value:
/// - At most ``Limits/connections`` connections are open. One more arriving closes the
///   **oldest**: a local program that opens thousands of connections and sits on them uses 32
///   descriptors, not thousands, and cannot lock the browser out — a connection lives until
///   `connections` newer ones have arrived, and a browser sends its request the moment it
///   connects (refusing newcomers instead would let the first 32 idle connections keep the
///   browser out until their deadline, and a flood can renew them forever).
/// - Each connection is closed ``Limits/connectionDeadline`` after it opened, whatever it sends:
///   a drip of one byte a second is closed as surely as silence.
/// - A request head is at most ``Limits/requestBytes``; the search for its end resumes where
///   the last one stopped, so a head sent a byte at a time costs linear time.
/// - When accepting fails (out of descriptors, `EMFILE`/`ENFILE`), the listening sockets are
///   left out of `poll` for ``Limits/acceptBackoff``: the connection waits in the kernel's queue
///   and the loop sleeps instead of spinning on a socket that stays readable.
struct LoopbackConnections {
    /// The limits on a loopback redirect listener's connections. The defaults serve a browser's
    /// callback, which is one small GET sent at once, with a wide margin.
    struct Limits: Sendable, Equatable {
        /// The default of ``connections``: 32.
        static let defaultConnections = 32
        /// The default of ``requestBytes``: 16 KB (a browser's GET with cookies is ~1–2 KB).
        static let defaultRequestBytes = 16 * 1024
        /// The default of ``connectionDeadline``: 10 seconds.
        static let defaultConnectionDeadline = Duration.seconds(10)
        /// The default of ``acceptBackoff``: 100 milliseconds.
        static let defaultAcceptBackoff = Duration.milliseconds(100)

        /// The defaults.
        static let `default` = Limits()

        /// The most connections open at once (at least 1); one more closes the oldest.
        var connections: Int
        /// The most bytes of a request head; a longer one is answered 431 and closed.
        var requestBytes: Int
        /// How long a connection may stay open from the moment it is accepted, whatever it sends.
        var connectionDeadline: Duration
        /// How long the listening sockets rest after an accept fails for lack of descriptors or
        /// memory.
        var acceptBackoff: Duration

        /// Limits with the given values (each defaults to its `default…` constant).
        init(connections: Int = defaultConnections, requestBytes: Int = defaultRequestBytes,
             connectionDeadline: Duration = defaultConnectionDeadline, acceptBackoff: Duration = defaultAcceptBackoff) {
            self.connections = max(1, connections)
            self.requestBytes = max(1, requestBytes)
            self.connectionDeadline = connectionDeadline
            self.acceptBackoff = acceptBackoff
        }
    }

    typealias Instant = ContinuousClock.Instant

    private struct Connection {
        var bytes: [UInt8] = []
        /// Where the search for the head's end resumes.
        var searched = 0
        let deadline: Instant
    }

    let limits: Limits
    private var open: [Int32: Connection] = [:]
    /// The open descriptors, oldest first.
    private(set) var descriptors: [Int32] = []
    private var restingUntil: Instant?

    init(limits: Limits) {
        self.limits = limits
    }

    /// How many connections are open.
    var count: Int { descriptors.count }

    /// How many connections one listening socket may accept in one turn of the loop: half the
    /// limit shared among the listening sockets, so a connection accepted in one turn is still
    /// open, and read, in the next — new arrivals cannot push it out before its request is read.
    func acceptsPerTurn(listeners: Int) -> Int {
        max(1, limits.connections / (2 * max(1, listeners)))
    }

    /// Whether the listening sockets are polled at `now` (not resting after a failed accept).
    mutating func isAccepting(at now: Instant) -> Bool {
        guard let until = restingUntil else { return true }
        if now < until { return false }
        restingUntil = nil
        return true
    }

    /// Records `descriptor`, accepted at `now`.
    /// - Returns: The oldest connection, to close, when the limit was reached.
    mutating func accepted(_ descriptor: Int32, at now: Instant) -> Int32? {
        var evicted: Int32?
        if descriptors.count >= limits.connections {
            let oldest = descriptors.removeFirst()
            open[oldest] = nil
            evicted = oldest
        }
        open[descriptor] = Connection(deadline: now + limits.connectionDeadline)
        descriptors.append(descriptor)
        return evicted
    }

    /// Records that accepting failed at `now` for want of descriptors or memory: the listening
    /// sockets rest for ``Limits/acceptBackoff``.
    mutating func acceptFailed(at now: Instant) {
        restingUntil = now + limits.acceptBackoff
    }

    /// Adds `bytes` read from `descriptor`.
    /// - Returns: The request head, and forgets the connection (the caller answers and closes
    ///   it), once the head is complete or at ``Limits/requestBytes``; `nil` while it is not.
    mutating func received(_ bytes: [UInt8], on descriptor: Int32) -> [UInt8]? {
        guard var connection = open[descriptor] else { return nil }
        connection.bytes += bytes
        let complete = connection.bytes.count >= limits.requestBytes || Self.endOfHead(in: connection.bytes, from: &connection.searched)
        guard complete else {
            open[descriptor] = connection
            return nil
        }
        remove(descriptor)
        return connection.bytes
    }

    /// Forgets `descriptor` (its peer closed, or it was answered).
    mutating func remove(_ descriptor: Int32) {
        open[descriptor] = nil
        descriptors.removeAll { $0 == descriptor }
    }

    /// Forgets every connection whose deadline is at or before `now`.
    /// - Returns: Those connections, to close.
    mutating func expire(at now: Instant) -> [Int32] {
        let expired = descriptors.filter { open[$0].map { $0.deadline <= now } ?? true }
        expired.forEach { remove($0) }
        return expired
    }

    /// How long `poll` may wait at `now`, in milliseconds rounded up: until the next deadline or
    /// the end of the listening sockets' rest, whichever is first; -1 (no limit) when neither.
    func pollTimeout(at now: Instant) -> Int32 {
        let next = (descriptors.compactMap { open[$0]?.deadline } + [restingUntil].compactMap { $0 }).min()
        guard let next else { return -1 }
        guard now < next else { return 0 }
        let (seconds, attoseconds) = (next - now).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(1, milliseconds))
    }

    /// Whether `bytes` hold the blank line that ends an HTTP head, searching from `searched`
    /// (moved on, three bytes short of the end, so a CRLFCRLF split across reads is found).
    static func endOfHead(in bytes: [UInt8], from searched: inout Int) -> Bool {
        guard bytes.count >= 4 else { return false }
        var index = max(0, searched)
        while index <= bytes.count - 4 {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 { return true }
            index += 1
        }
        searched = bytes.count - 3
        return false
    }
}
