import Foundation
import AppKernelCore

/// The loopback redirect listener of RFC 8252 §7.3: an HTTP server on this computer's loopback
/// that waits for exactly one callback — the browser's redirect to
/// `http://<host>:<port><path>?code=…&state=…` — answers it with a short HTML page, and closes.
///
/// It listens on `127.0.0.1`, and on `::1` too when the redirect host is `localhost`: a browser
/// resolves `localhost` to either address (many try `::1` first), so a listener on one alone
/// leaves the other free for any local program to take, and with it the authorization code.
/// Both listen on the same port (an ephemeral one is taken on `127.0.0.1` and then asked for
/// on `::1`); if either address's port is taken the listener refuses with
/// ``OAuthError/portInUse(_:address:)`` naming it, and neither stays open. Only a machine with
/// no IPv6 loopback at all (`EADDRNOTAVAIL`, `EAFNOSUPPORT`: IPv6 turned off) is served on
/// `127.0.0.1` alone — there no program can listen on `::1` either.
///
/// A request for another path, with a missing or wrong `state` (an `error=` answer included),
/// with a duplicated parameter or for another host name (DNS rebinding) is refused with an error
/// page and the wait goes on: a stray tab or a forged answer that arrives first cannot end the
/// login. Connections are served side by side (a browser's idle pre-connection does not hold the
/// real one up), within ``LoopbackConnections/Limits``: at most 32 open (one more closes the
/// oldest, so a local program's flood of idle connections holds 32 descriptors and cannot keep
/// the browser out), a request head of at most 16 KB, and 10 s from accept to close whatever
/// the peer sends (a byte-a-second drip included). When `accept` fails for want of descriptors
/// the listening sockets rest 100 ms: the loop waits in `poll` and never spins. Nothing in a
/// request is echoed into a page unescaped.
final class LoopbackListener: Sendable {
    /// The port it listens on (the ephemeral one when asked for port 0), the same on every address.
    let port: UInt16
    /// The redirect URI's path the callback must have.
    let path: String
    /// The addresses it listens on, in order.
    let addresses: [POSIX.LoopbackAddress]

    private enum Phase {
        case bound
        case serving(CheckedContinuation<Result<URL, OAuthError>, Never>)
        case finished
    }

    /// How a socket is made: ``POSIX/listenOnLoopback(_:port:)``, or a test's stand-in that fails.
    typealias Bind = (POSIX.LoopbackAddress, UInt16) throws(POSIX.ListenFailure) -> (descriptor: Int32, port: UInt16)
    /// How a connection is accepted: ``POSIX/acceptConnection(_:)``, or a test's stand-in that
    /// fails as a process out of descriptors would.
    typealias Accept = @Sendable (Int32) -> POSIX.AcceptResult
    /// The limits on the connections it serves.
    typealias Limits = LoopbackConnections.Limits

    /// One turn of the serving loop, as it is about to wait in `poll`: what a test counts to
    /// show the loop sleeps (no busy spin) and holds no more connections than its limit.
    struct Turn: Sendable, Equatable {
        /// The connections open.
        var open: Int
        /// Whether the listening sockets are polled (not resting after a failed accept).
        var listening: Bool
    }

    /// The limits on the connections it serves.
    let limits: Limits
    private let accept: Accept
    private let onTurn: (@Sendable (Turn) -> Void)?

    private let listeners: [Int32]
    private let wakePipe: (read: Int32, write: Int32)
    private let phase: Locked<Phase>
    /// Set when the wait ends for a reason other than a callback (cancelled, stopped).
    private let stopReason = Locked<OAuthError?>(nil)

    /// How many ephemeral ports are tried before giving up, when one free on `127.0.0.1` is
    /// taken on `::1`.
    private static let ephemeralAttempts = 8

    /// Listens on the loopback addresses for `host` at `port` (0: any port free on all of them).
    /// - Parameters:
    ///   - host: The redirect URI's host: `localhost` listens on `127.0.0.1` and `::1`, anything
    ///     else (`127.0.0.1`) on `127.0.0.1` alone.
    ///   - limits: The limits on its connections (open at once, request size, deadline).
    ///   - bind: Makes one listening socket; tests pass one that fails as a machine without IPv6
    ///     would.
    ///   - accept: Accepts one connection; tests pass one that fails as a process out of
    ///     descriptors would.
    ///   - onTurn: Called at every turn of the serving loop, on its thread; for tests.
    /// - Throws: ``OAuthError/portInUse(_:address:)`` when another program listens at one of the
    ///   addresses (none is left open), ``OAuthError/listenerFailed(_:)`` otherwise.
    init(port: UInt16, path: String, host: String = "127.0.0.1", limits: Limits = .default,
         bind: Bind = { (address, port) throws(POSIX.ListenFailure) in try POSIX.listenOnLoopback(address, port: port) },
         accept: @escaping Accept = { POSIX.acceptConnection($0) }, onTurn: (@Sendable (Turn) -> Void)? = nil) throws(OAuthError) {
        let wanted: [POSIX.LoopbackAddress] = host.lowercased() == "localhost" ? [.ipv4, .ipv6] : [.ipv4]
        let bound = try Self.bindAll(wanted, port: port, bind: bind)
        guard let pipe = POSIX.pipe() else {
            bound.sockets.forEach { POSIX.close($0.descriptor) }
            throw .listenerFailed("pipe: \(POSIX.message(errno))")
        }
        listeners = bound.sockets.map(\.descriptor)
        addresses = bound.sockets.map(\.address)
        wakePipe = pipe
        self.port = bound.port
        self.path = path.isEmpty ? "/" : path
        self.limits = limits
        self.accept = accept
        self.onTurn = onTurn
        phase = Locked(.bound)
    }

    /// Binds every address on one port, or none: a failure closes what was bound. With port 0,
    /// the first address's ephemeral port is asked of the others; if one of them has it taken,
    /// another ephemeral port is tried.
    private static func bindAll(_ wanted: [POSIX.LoopbackAddress], port: UInt16, bind: Bind) throws(OAuthError)
    -> (sockets: [(address: POSIX.LoopbackAddress, descriptor: Int32)], port: UInt16) {
        for _ in 0..<ephemeralAttempts {
            var sockets: [(address: POSIX.LoopbackAddress, descriptor: Int32)] = []
            var chosen = port
            func closeAll() { sockets.forEach { POSIX.close($0.descriptor) } }
            var retry = false
            for address in wanted {
                do {
                    let socket = try bind(address, chosen)
                    sockets.append((address, socket.descriptor))
                    chosen = socket.port
                } catch {
                    switch error {
                    case .unavailable where address == .ipv6:
                        // No IPv6 loopback on this machine: nobody can listen on ::1, nor a
                        // browser connect there; 127.0.0.1 alone serves `localhost`.
                        continue
                    case .portInUse where port == 0 && !sockets.isEmpty:
                        retry = true
                    case .portInUse:
                        closeAll()
                        throw .portInUse(Int(chosen), address: address.rawValue)
                    case .unavailable(let reason), .failed(let reason):
                        closeAll()
                        throw .listenerFailed(reason)
                    }
                }
                if retry { break }
            }
            if retry {
                closeAll()
                continue
            }
            return (sockets, chosen)
        }
        throw .listenerFailed("no ephemeral port was free on both 127.0.0.1 and ::1 in \(ephemeralAttempts) tries; "
                              + "give the login a fixed port (the redirect URI's)")
    }

    deinit {
        // Only reached without a serving thread (it holds `self`): close what it would have.
        if case .bound = phase.withLock({ $0 }) { closeDescriptors() }
    }

    /// Waits for the callback carrying `state`, and returns its URL as `http://<host>:<port>…`.
    /// Ends with ``OAuthError/cancelled`` when the task is cancelled or ``stop(_:)`` is called.
    func waitForCallback(state: String, host: String) async throws(OAuthError) -> URL {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<URL, OAuthError>, Never>) in
                let start: Bool = phase.withLock { phase in
                    guard case .bound = phase else { return false }
                    phase = .serving(continuation)
                    return true
                }
                guard start else {
                    continuation.resume(returning: .failure(stopReason.withLock { $0 } ?? .cancelled))
                    return
                }
                let thread = Thread { [self] in self.serve(state: state, host: host) }
                thread.name = "AppKernelAuth loopback redirect listener"
                thread.start()
            }
        } onCancel: {
            stop(.cancelled)
        }
        return try result.get()
    }

    /// Ends the wait (if any) with `reason` and closes the listener.
    func stop(_ reason: OAuthError) {
        stopReason.withLock { if $0 == nil { $0 = reason } }
        let closeNow: Bool = phase.withLock { phase in
            switch phase {
            case .bound:
                phase = .finished
                return true
            case .serving:
                // Under the lock: the serving thread closes the pipe only after it took the
                // phase to `.finished`, so this descriptor is still the pipe's.
                POSIX.wake(wakePipe.write)
                return false
            case .finished:
                return false
            }
        }
        if closeNow { closeDescriptors() }
    }

    private func closeDescriptors() {
        listeners.forEach(POSIX.close)
        POSIX.close(wakePipe.read)
        POSIX.close(wakePipe.write)
    }

    // MARK: The serving loop (its own thread: it blocks in poll)

    /// Serves connections until the callback arrives or the wait is stopped. Each turn: close
    /// what passed its deadline, wait in `poll` (until a socket is ready, the next deadline, or
    /// the end of a rest after a failed accept — never a busy wait), read the ready connections
    /// first (one accepted last turn is read before newcomers can push it out), then accept a
    /// bounded number of newcomers. The rules are ``LoopbackConnections``'.
    private func serve(state: String, host: String) {
        var connections = LoopbackConnections(limits: limits)
        let acceptsPerTurn = connections.acceptsPerTurn(listeners: listeners.count)
        var outcome: Result<URL, OAuthError>?
        turns: while outcome == nil {
            let now = ContinuousClock.now
            connections.expire(at: now).forEach(POSIX.close)
            let listening = connections.isAccepting(at: now)
            let polled = listening ? listeners : []
            let open = connections.descriptors
            onTurn?(Turn(open: open.count, listening: listening))
            let ready: [Bool]
            switch POSIX.waitReadable([wakePipe.read] + polled + open, timeoutMilliseconds: connections.pollTimeout(at: now)) {
            case .ready(let flags): ready = flags
            case .interrupted: continue
            case .failed(let code):
                outcome = .failure(.listenerFailed("poll: \(POSIX.message(code))"))
                break turns
            }
            if ready[0] { break }
            for (index, descriptor) in open.enumerated() where ready[1 + polled.count + index] {
                switch POSIX.read(descriptor) {
                case .wouldBlock:
                    continue
                case .closed:
                    connections.remove(descriptor)
                    POSIX.close(descriptor)
                case .bytes(let bytes):
                    guard let head = connections.received(bytes, on: descriptor) else { continue }
                    let (response, callback) = answer(head, state: state, host: host)
                    POSIX.writeAll(descriptor, response)
                    POSIX.close(descriptor)
                    if let callback {
                        outcome = .success(callback)
                        break turns
                    }
                }
            }
            for (index, listener) in polled.enumerated() where ready[1 + index] {
                accepting: for _ in 0..<acceptsPerTurn {
                    switch accept(listener) {
                    case .connection(let descriptor):
                        if let oldest = connections.accepted(descriptor, at: ContinuousClock.now) { POSIX.close(oldest) }
                    case .none:
                        break accepting
                    case .failed:
                        // Out of descriptors or memory: the connection stays queued and the
                        // listening socket readable; rest rather than retry at once.
                        connections.acceptFailed(at: ContinuousClock.now)
                        break accepting
                    }
                }
            }
        }
        connections.descriptors.forEach(POSIX.close)
        let continuation: CheckedContinuation<Result<URL, OAuthError>, Never>? = phase.withLock { phase in
            guard case .serving(let continuation) = phase else { return nil }
            phase = .finished
            return continuation
        }
        closeDescriptors()
        continuation?.resume(returning: outcome ?? .failure(stopReason.withLock { $0 } ?? .cancelled))
    }

    /// The answer to one request, and the callback URL when it is the awaited callback.
    private func answer(_ bytes: [UInt8], state expected: String, host: String) -> (response: [UInt8], callback: URL?) {
        guard bytes.count < limits.requestBytes else {
            return (Self.page(431, "Request too large", "This request is too large to be a login redirect."), nil)
        }
        let head = String(decoding: bytes, as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return (Self.page(400, "Bad request", "This is not an HTTP request this listener understands."), nil)
        }
        guard requestLine[0] == "GET" else {
            return (Self.page(405, "Method not allowed", "The login redirect is a GET request."), nil)
        }
        var hostHeader: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "host" {
                hostHeader = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            }
        }
        let allowedHosts = ["127.0.0.1", "localhost", "[::1]", host.lowercased()].map { "\($0):\(port)" }
        guard let hostHeader, allowedHosts.contains(hostHeader) else {
            return (Self.page(400, "Wrong host", "This listener only answers requests for this computer's loopback address."), nil)
        }
        let target = String(requestLine[1])
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard pathPart == path else {
            return (Self.page(404, "Not found", "This address is not the login's redirect address."), nil)
        }
        let query = target.contains("?") ? String(target.split(separator: "?", maxSplits: 1)[1].split(separator: "#")[0]) : ""
        guard let pairs = FormEncoding.decode(query) else {
            return (Self.page(400, "Bad request", "The login response is malformed."), nil)
        }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters[name] == nil else {
                return (Self.page(400, "Bad request", "The login response repeats a parameter; it was not trusted."), nil)
            }
            parameters[name] = value
        }
        guard let state = parameters["state"], Self.constantTimeEqual(state, expected) else {
            return (Self.page(400, "Not this login",
                              "This login response does not belong to the login in progress (its state is missing or wrong). It was ignored; the login is still waiting."), nil)
        }
        guard let callback = URL(string: "http://\(host):\(port)\(target)") else {
            return (Self.page(400, "Bad request", "The login response is malformed."), nil)
        }
        if let error = parameters["error"] {
            let reason = parameters["error_description"].map { "\(error): \($0)" } ?? error
            return (Self.page(200, "Login failed", "The login did not succeed (\(reason)). You can close this window and return to the app."), callback)
        }
        return (Self.page(200, "Logged in", "You are logged in. You can close this window and return to the app."), callback)
    }

    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let (left, right) = (Array(lhs.utf8), Array(rhs.utf8))
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    private static func page(_ status: Int, _ title: String, _ message: String) -> [UInt8] {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let reasons = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 431: "Request Header Fields Too Large"]
        let body = """
            <!doctype html><html><head><meta charset="utf-8"><title>\(escape(title))</title></head>\
            <body><h1>\(escape(title))</h1><p>\(escape(message))</p></body></html>

            """
        let head = "HTTP/1.1 \(status) \(reasons[status] ?? "Error")\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }
}
