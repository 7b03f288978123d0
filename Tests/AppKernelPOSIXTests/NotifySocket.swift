import Foundation
import AppKernelCore
import ChildProcess
#if canImport(Glibc)
import Glibc
#endif

/// A Unix datagram socket standing in for systemd's notify socket.
final class NotifySocket: Sendable {
    let path: String
    private let descriptor: Int32
    private let received = Locked<[(message: String, time: Date)]>([])

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
        let received = self.received
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { return }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                received.withLock { $0.append((message, Date())) }
            }
        }
    }

    var messages: [String] { received.withLock { $0.map(\.message) } }
    var timedMessages: [(message: String, time: Date)] { received.withLock { $0 } }

    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
        unlink(path)
    }
}
