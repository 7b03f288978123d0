import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Another local program that listens on a loopback address and port before the login does —
/// the attacker of RFC 8252 §8.3's loopback redirect: a plain listening TCP socket on
/// `127.0.0.1` or `::1` (IPv6-only), which accepts connections and never answers.
final class LoopbackSquatter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let address: String
    let port: UInt16
    private let descriptor: Int32

    /// Listens on `address` (`127.0.0.1` or `::1`) at `port` (0: an ephemeral one).
    init(_ address: String, port: UInt16 = 0) throws {
        let ipv6 = address == "::1"
        #if canImport(Glibc)
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        var storage = sockaddr_storage()
        let length: socklen_t
        if ipv6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, "::1", &socketAddress.sin6_addr)
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: socketAddress) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: socketAddress) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "bind/listen \(address) port \(port): \(message)")
        }
        var named = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &named) } }
        // The port is at the same offset in sockaddr_in and sockaddr_in6 (right after the family).
        let boundPort = withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
        self.address = address
        self.port = boundPort
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}
