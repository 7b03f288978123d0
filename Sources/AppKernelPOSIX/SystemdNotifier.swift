import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Speaks systemd's notify protocol (`sd_notify`) without libsystemd: one datagram per message
/// to the Unix socket named by `NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace).
///
/// ```swift
/// if let systemd = SystemdNotifier(environment: ProcessInfo.processInfo.environment) {
///     systemd.notify("STATUS=launching")
///     systemd.notify("READY=1")
/// }
/// ```
public struct SystemdNotifier: Sendable {
    /// The socket's address.
    public let socketPath: String
    /// How often systemd expects `WATCHDOG=1` (`WATCHDOG_USEC`), if it does.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET` and `WATCHDOG_USEC` (honouring `WATCHDOG_PID`); `nil` without a socket.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
        if let text = environment["WATCHDOG_USEC"], let micros = Int64(text), micros > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            watchdogInterval = .microseconds(micros)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends one message (`READY=1`, `STATUS=…`, `WATCHDOG=1`, …).
    /// - Returns: Whether the datagram was sent.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }   // the abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, 0, socketAddress, length)
            }
        }
        return sent == bytes.count
    }
}
