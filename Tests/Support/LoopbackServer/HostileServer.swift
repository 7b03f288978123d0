public import Foundation
import AppKernelCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP server that answers every request the way an attacker would: a huge body, a
/// body that never ends, a trickle, a gzip bomb, an endless header, or silence. Bodies are
/// generated as they are written, so the server itself holds a few kilobytes whatever it sends.
///
/// It stops sending the moment the client hangs up (a failed `send`), and ``stop()`` shuts every
/// open connection down, so a test that ends never leaves a transfer running beside the next
/// tests (1 GB over loopback would starve them).
///
/// `@unchecked Sendable`: `listener`, `port`, `family` and `answer` are set once in `init`;
/// everything else is atomic or behind a `Locked`.
public final class HostileServer: @unchecked Sendable {
    /// What the server answers.
    public enum Answer: Sendable {
        /// `bytes` zeros, announced with `Content-Length`.
        case body(bytes: Int)
        /// `bytes` zeros in chunks, without a length announced beforehand.
        case unannounced(bytes: Int)
        /// Chunks of zeros that never end.
        case endlessChunked
        /// An announced megabyte written one byte per `interval`, forever slower than any deadline.
        case trickle(every: Duration)
        /// `Content-Encoding: gzip` whose body expands to `expandedBytes` zeros (a few kilobytes
        /// of deflate per megabyte), sent in chunks.
        case gzipBomb(expandedBytes: Int)
        /// A status line, then header fields that never end.
        case endlessHeader
        /// Reads the request and never answers.
        case silent
        /// `body` with `Content-Length`, keeping the connection open for the next request.
        case keepAlive(body: String)
    }

    /// Which loopback address it listens on.
    public enum Family: Sendable {
        /// 127.0.0.1
        case ipv4
        /// ::1
        case ipv6
    }

    /// The port it listens on.
    public let port: UInt16
    /// Which loopback address it listens on.
    public let family: Family
    /// `http://127.0.0.1:<port>` or `http://[::1]:<port>`.
    public var url: URL { URL(string: family == .ipv4 ? "http://127.0.0.1:\(port)" : "http://[::1]:\(port)")! }
    /// How many bytes of body it has written, over all connections.
    public var bodyBytesSent: Int { sent.load(ordering: .relaxed) }
    /// How many connections it accepted.
    public var connectionsAccepted: Int { served.load(ordering: .sequentiallyConsistent) }
    /// How many requests it read.
    public var requestsRead: Int { requests.load(ordering: .sequentiallyConsistent) }
    /// When each connection opened and closed, stamped on the server's threads.
    public let log = ConnectionLog()
    private let listener: Int32
    private let answer: Answer
    private let stopped = Atomic<Bool>(false)
    private let sent = Atomic<Int>(0)
    private let served = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)
    private let connections = Locked<Set<Int32>>([])

    private init(listener: Int32, port: UInt16, family: Family, answer: Answer) {
        self.listener = listener
        self.port = port
        self.family = family
        self.answer = answer
    }

    /// Starts a server on the loopback address of `family` (an ephemeral port) that gives every
    /// request `answer`.
    public static func start(_ answer: Answer, on family: Family = .ipv4) async throws -> HostileServer {
        #if canImport(Glibc)
        let descriptor = socket(family == .ipv4 ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(family == .ipv4 ? AF_INET : AF_INET6, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestHTTPServer.StartError(description: "socket: \(errno)") }
        let port: UInt16
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            port = try bindAndListen(descriptor, &address)
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            port = try bindAndListen(descriptor, &address)
        }
        let server = HostileServer(listener: descriptor, port: port, family: family, answer: answer)
        let thread = Thread { server.acceptLoop() }
        thread.name = "HostileServer accept"
        thread.start()
        return server
    }

    private static func bindAndListen<Address>(_ descriptor: Int32, _ address: inout Address) throws -> UInt16 {
        let size = socklen_t(MemoryLayout<Address>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let code = errno
            close(descriptor)
            throw TestHTTPServer.StartError(description: "bind/listen: \(String(cString: strerror(code)))")
        }
        var length = size
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        // sin_port and sin6_port sit at the same offset, right after the family.
        return withUnsafeBytes(of: &address) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }

    /// Stops accepting connections and shuts down every open one, ending its transfer.
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        connections.withLock { open in for connection in open { shutdown(connection, Int32(SHUT_RDWR)) } }
    }

    deinit { stop() }

    /// Adds `bytes` to ``bodyBytesSent``.
    func count(sent bytes: Int) { sent.add(bytes, ordering: .relaxed) }

    /// Whether every client that connected has hung up (the server saw its socket close) within
    /// `limit`: a refused or timed-out download must end the transfer, not just stop listening.
    public func clientsLeft(within limit: Duration) async -> Bool {
        await log.allClosed(within: limit)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let number = log.open()
            served.add(1, ordering: .sequentiallyConsistent)
            connections.withLock { _ = $0.insert(connection) }
            if stopped.load(ordering: .sequentiallyConsistent) { shutdown(connection, Int32(SHUT_RDWR)) }
            let thread = Thread { self.serve(connection, number: number) }
            thread.start()
        }
    }

    /// Reads one request: its head and its `Content-Length` of body (a body left unread would
    /// make closing the socket reset the connection, losing what the client had not read yet);
    /// `false` when the client left first.
    private func readHead(_ connection: Int32) -> Bool {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !(head.count >= 4 && head.suffix(4).elementsEqual([13, 10, 13, 10])) {
            guard recv(connection, &byte, 1, 0) == 1, head.count < 65536 else { return false }
            head.append(byte)
        }
        let fields = String(decoding: head, as: UTF8.self).lowercased().split(separator: "\r\n")
        var left = fields.first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while left > 0 {
            let count = recv(connection, &buffer, min(left, buffer.count), 0)
            guard count > 0 else { return false }
            left -= count
        }
        requests.add(1, ordering: .sequentiallyConsistent)
        return true
    }

    private func serve(_ connection: Int32, number: Int) {
        defer {
            log.close(number)
            connections.withLock { _ = $0.remove(connection) }
            close(connection)
        }
        guard readHead(connection) else { return }
        let writer = HostileWriter(connection: connection, server: self)
        let zeros = [UInt8](repeating: 0, count: 64 * 1024)
        switch answer {
        case .body(let bytes):
            guard writer.head(["Content-Length: \(bytes)", "Content-Type: application/json"]) else { return }
            var left = bytes
            while left > 0 {
                let count = min(left, zeros.count)
                guard writer.body(zeros[0..<count]) else { return }
                left -= count
            }
        case .unannounced(let bytes):
            guard writer.head(["Transfer-Encoding: chunked", "Content-Type: application/json"]) else { return }
            var left = bytes
            while left > 0 {
                let count = min(left, zeros.count)
                guard writer.chunk(zeros[0..<count]) else { return }
                left -= count
            }
            _ = writer.raw(Array("0\r\n\r\n".utf8))
        case .endlessChunked:
            guard writer.head(["Transfer-Encoding: chunked", "Content-Type: application/json"]) else { return }
            while writer.chunk(zeros[...]) {}
        case .trickle(let interval):
            guard writer.head(["Content-Length: 1000000", "Content-Type: application/json"]) else { return }
            let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            while writer.body([UInt8(ascii: " ")][...]) { Thread.sleep(forTimeInterval: seconds) }
        case .gzipBomb(let expandedBytes):
            guard writer.head(["Transfer-Encoding: chunked", "Content-Encoding: gzip", "Content-Type: application/json"]) else { return }
            _ = GzipZeros.write(expandedBytes: expandedBytes) { writer.chunk($0[...]) } && writer.raw(Array("0\r\n\r\n".utf8))
        case .endlessHeader:
            guard writer.raw(Array("HTTP/1.1 200 OK\r\n".utf8)) else { return }
            let field = Array("X-Padding: \(String(repeating: "a", count: 1000))\r\n".utf8)
            while writer.raw(field) {}
        case .silent:
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}         // until the client hangs up
        case .keepAlive(let body):
            repeat {
                guard writer.raw(Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: application/json\r\n\r\n\(body)".utf8))
                else { return }
            } while readHead(connection)
        }
    }
}

/// Writes to one connection of a ``HostileServer``; every method says whether the client is
/// still there.
struct HostileWriter {
    let connection: Int32
    let server: HostileServer

    func raw(_ bytes: [UInt8]) -> Bool { raw(bytes[...]) }

    func raw(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard written > 0 else { return false }     // the client left: no SIGPIPE, just stop
                offset += written
            }
            return true
        }
    }

    func head(_ fields: [String]) -> Bool {
        raw(Array((["HTTP/1.1 200 OK", "Connection: close"] + fields).joined(separator: "\r\n").utf8) + [13, 10, 13, 10])
    }

    func body(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard raw(bytes) else { return false }
        server.count(sent: bytes.count)
        return true
    }

    func chunk(_ bytes: ArraySlice<UInt8>) -> Bool {
        raw(Array("\(String(bytes.count, radix: 16))\r\n".utf8)) && body(bytes) && raw([13, 10])
    }
}
