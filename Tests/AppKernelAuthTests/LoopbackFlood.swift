import Foundation
import AppKernelCore
@testable import AppKernelAuth
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local program that attacks the loopback redirect listener with connections rather than
/// requests: it opens many and sits on them, or drips a request a byte at a time. Each socket
/// is a plain blocking TCP connection to `127.0.0.1`.
final class LoopbackFlood {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptors: [Int32]

    private init(descriptors: [Int32]) {
        self.descriptors = descriptors
    }

    /// Opens `count` connections to `127.0.0.1:port` and keeps them open, sending nothing. The
    /// connects run on a thread of their own: one blocks while the listener's queue is full,
    /// and must not hold up the concurrency pool the listener's own task needs.
    static func open(count: Int, port: UInt16) async throws -> LoopbackFlood {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[Int32], any Error>, Never>) in
            Thread {
                var opened: [Int32] = []
                for _ in 0..<count {
                    do { opened.append(try connect(port: port)) } catch {
                        opened.forEach { _ = close($0) }
                        return continuation.resume(returning: .failure(error))
                    }
                }
                continuation.resume(returning: .success(opened))
            }.start()
        }
        return LoopbackFlood(descriptors: try result.get())
    }

    deinit { descriptors.forEach { _ = close($0) } }

    /// How many of the connections the listener has closed (a read sees end of file or a reset).
    var closedCount: Int {
        var buffer: UInt8 = 0
        return descriptors.filter { descriptor in
            let count = recv(descriptor, &buffer, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
            return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        }.count
    }

    static func connect(port: UInt16) throws(Failure) -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                #if canImport(Glibc)
                Glibc.connect(descriptor, pointer, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(descriptor, pointer, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            _ = close(descriptor)
            throw Failure(description: "connect 127.0.0.1 port \(port): \(message)")
        }
        return descriptor
    }

    /// Whether the listener closes `descriptor` (a read sees end of file or a reset) within
    /// `milliseconds`; waits on a thread of its own, never on the concurrency pool the
    /// listener's own task needs.
    static func closedByPeer(_ descriptor: Int32, within milliseconds: Int32) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, milliseconds) == 1 else { return continuation.resume(returning: false) }
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                continuation.resume(returning: count <= 0)
            }.start()
        }
    }

    /// Connects to `127.0.0.1:port` and sends the start of a request one byte every `interval`,
    /// never finishing it, until the listener closes the connection or `giveUp` passes.
    /// - Returns: How long the connection stayed open, or `nil` if it was still open at `giveUp`.
    static func drip(port: UInt16, every interval: Duration, giveUp: Duration) async throws -> Duration? {
        let descriptor = try connect(port: port)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Duration?, Never>) in
            Thread {
                defer { _ = close(descriptor) }
                let start = ContinuousClock.now
                let bytes = Array("GET /cb?code=c&state=s HTTP/1.1\r\nX-Drip: ".utf8)
                var index = 0
                let milliseconds = Int32(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
                while ContinuousClock.now - start < giveUp {
                    var byte = index < bytes.count ? bytes[index] : UInt8(ascii: "x")
                    index += 1
                    if send(descriptor, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { return continuation.resume(returning: ContinuousClock.now - start) }
                    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&entry, 1, milliseconds) > 0 {
                        var buffer = [UInt8](repeating: 0, count: 512)
                        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                        if count <= 0 { return continuation.resume(returning: ContinuousClock.now - start) }
                    }
                }
                continuation.resume(returning: nil)
            }.start()
        }
        return result
    }
}

/// What a listener's serving loop did, turn by turn, as its `onTurn` hook reports it.
final class TurnLog: Sendable {
    private let state = Locked((turns: 0, mostOpen: 0))

    func record(_ turn: LoopbackListener.Turn) {
        state.withLock { state in
            state.turns += 1
            state.mostOpen = max(state.mostOpen, turn.open)
        }
    }

    /// How many times the loop went to wait in `poll`.
    var turns: Int { state.withLock { $0.turns } }
    /// The most connections it held open at once.
    var mostOpen: Int { state.withLock { $0.mostOpen } }
}
