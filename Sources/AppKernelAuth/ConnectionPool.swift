import AppKernelCore

/// ``SocketTransport``'s idle connections, by `scheme://host:port`: at most `capacity` for each,
/// none older than `maximumIdle`. A connection is handed out to one request at a time; closing
/// the pool closes every idle connection.
final class ConnectionPool: Sendable {
    private let idle = Locked<[String: [SocketConnection]]>([:])
    /// The most idle connections kept for one `scheme://host:port`.
    let capacity: Int
    /// How long an idle connection is kept (servers close theirs after a few seconds).
    let maximumIdle: Duration

    init(capacity: Int, maximumIdle: Duration = .seconds(15)) {
        self.capacity = capacity
        self.maximumIdle = maximumIdle
    }

    /// An idle connection to `key` that still looks open, if there is one (the newest first);
    /// those that are too old or closed by the server are closed on the way.
    func take(_ key: String) -> SocketConnection? {
        let now = ContinuousClock.now
        return idle.withLock { idle in
            while let connection = idle[key]?.popLast() {
                if now - connection.idleSince < maximumIdle, connection.looksReusable { return connection }
                connection.close()
            }
            return nil
        }
    }

    /// Keeps `connection` for a later request, or closes it when its host has `capacity` already.
    func put(_ connection: SocketConnection) {
        connection.idleSince = ContinuousClock.now
        let kept = idle.withLock { idle in
            guard idle[connection.key, default: []].count < capacity else { return false }
            idle[connection.key, default: []].append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// How many idle connections it holds.
    var count: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Closes every idle connection.
    func closeAll() {
        let all = idle.withLock { idle in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for connection in all { connection.close() }
    }
}
