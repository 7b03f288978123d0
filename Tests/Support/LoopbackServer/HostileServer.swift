public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP server that answers every request the way an attacker would: a huge body, a
/// body that never ends, a trickle, or a gzip bomb. Bodies are generated as they are written, so
/// the server itself holds a few kilobytes whatever it sends; it stops writing when the client
/// hangs up.
///
/// `@unchecked Sendable`: `listener`, `port` and `answer` are set once in `init`; `stopped` is atomic.
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
    }

    /// The port it listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// How many bytes of body it has written, over all connections.
    public var bodyBytesSent: Int { sent.load(ordering: .relaxed) }
    private let listener: Int32
    private let answer: Answer
    private let stopped = Atomic<Bool>(false)
    private let sent = Atomic<Int>(0)
    private let served = Atomic<Int>(0)
    private let open = Atomic<Int>(0)

    private init(listener: Int32, port: UInt16, answer: Answer) {
        self.listener = listener
        self.port = port
        self.answer = answer
    }

    /// Starts a server on 127.0.0.1 (an ephemeral port) that gives every request `answer`.
    public static func start(_ answer: Answer) async throws -> HostileServer {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestHTTPServer.StartError(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let code = errno
            close(descriptor)
            throw TestHTTPServer.StartError(description: "bind/listen: \(String(cString: strerror(code)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let server = HostileServer(listener: descriptor, port: UInt16(bigEndian: address.sin_port), answer: answer)
        let thread = Thread { server.acceptLoop() }
        thread.name = "HostileServer accept"
        thread.start()
        return server
    }

    /// Stops accepting connections; a connection being served ends when its client leaves.
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    /// Whether every client that connected has hung up (the server saw its socket close) within
    /// `limit`: a refused or timed-out download must end the transfer, not just stop listening.
    public func clientsLeft(within limit: Duration) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if served.load(ordering: .sequentiallyConsistent) > 0, open.load(ordering: .sequentiallyConsistent) == 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))    // polling loopback I/O, nothing else to wait on
        }
        return false
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { self.serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        served.add(1, ordering: .sequentiallyConsistent)
        open.add(1, ordering: .sequentiallyConsistent)
        defer {
            close(connection)
            open.subtract(1, ordering: .sequentiallyConsistent)
        }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !(head.count >= 4 && head.suffix(4).elementsEqual([13, 10, 13, 10])) {
            guard recv(connection, &byte, 1, 0) == 1 else { return }
            head.append(byte)
        }
        let writer = Writer(connection: connection, server: self)
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
        }
    }

    /// Writes to one connection; every method says whether the client is still there.
    private struct Writer {
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
            server.sent.add(bytes.count, ordering: .relaxed)
            return true
        }

        func chunk(_ bytes: ArraySlice<UInt8>) -> Bool {
            raw(Array("\(String(bytes.count, radix: 16))\r\n".utf8)) && body(bytes) && raw([13, 10])
        }
    }
}

/// A gzip member (RFC 1952) whose deflate stream (RFC 1951, one block of fixed Huffman codes)
/// is a literal zero followed by back-references of 258 bytes at distance 1: 13 bits per 258
/// zeros. Its CRC-32 is computed by raising the one-zero-byte step of the CRC register to a
/// power, so a gigabyte costs no gigabyte of work.
enum GzipZeros {
    /// Writes the member in pieces of about 64 KiB; stops early when `output` returns `false`.
    static func write(expandedBytes: Int, to output: ([UInt8]) -> Bool) -> Bool {
        let repeats = max(0, (expandedBytes - 1) / 258)
        let total = 1 + repeats * 258
        var bytes: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        var bits: UInt64 = 0
        var count = 0
        func put(_ value: UInt64, _ width: Int) {
            bits |= value << UInt64(count)
            count += width
            while count >= 8 { bytes.append(UInt8(truncatingIfNeeded: bits)); bits >>= 8; count -= 8 }
        }
        put(0b011, 3)        // BFINAL = 1, BTYPE = 01 (fixed Huffman), least significant bit first
        put(0x0C, 8)         // literal 0: code 0x30, written most significant bit first
        for _ in 0..<repeats {
            put(0xA3, 13)    // length 258: code 285 = 0xC5, reversed; then distance code 0 in five zero bits
            if bytes.count >= 64 * 1024 {
                guard output(bytes) else { return false }
                bytes.removeAll(keepingCapacity: true)
            }
        }
        put(0, 7)            // end of block: code 256
        if count > 0 { put(0, 8 - count) }
        let crc = crc32(zeros: total)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: UInt32(truncatingIfNeeded: total) >> UInt32(shift))) }
        return output(bytes)
    }

    /// The CRC-32 of `length` zero bytes.
    static func crc32(zeros length: Int) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        // The register's step for one zero byte is linear over GF(2): a 32×32 matrix, by columns.
        func apply(_ matrix: [UInt32], _ vector: UInt32) -> UInt32 {
            var result: UInt32 = 0
            for bit in 0..<32 where vector & (1 << UInt32(bit)) != 0 { result ^= matrix[bit] }
            return result
        }
        var step = (0..<32).map { bit -> UInt32 in let value = UInt32(1) << UInt32(bit); return table[Int(value & 0xFF)] ^ (value >> 8) }
        var power = (0..<32).map { UInt32(1) << UInt32($0) }
        var left = length
        while left > 0 {
            if left & 1 == 1 { power = power.map { apply(step, $0) } }
            step = step.map { apply(step, $0) }
            left >>= 1
        }
        return apply(power, 0xFFFF_FFFF) ^ 0xFFFF_FFFF
    }
}
