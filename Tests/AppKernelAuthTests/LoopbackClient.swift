import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare HTTP/1.1 GET over a socket to `127.0.0.1` or `::1` — what a browser (or a forger)
/// sends to the loopback listener. URLSession on Linux refuses `http://[::1]:…` URLs (-1000),
/// so the IPv6 requests of these tests go through this instead.
enum LoopbackClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `GET target` with `Host: host` (by default the address and port, as a browser
    /// writes it) and returns the status and the whole answer. Runs on a thread of its own; the
    /// socket gives up after 10 s of silence.
    static func get(_ address: String, port: UInt16, _ target: String, host: String? = nil) async throws -> (status: Int, text: String) {
        let hostHeader = host ?? (address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)")
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, Failure>, Never>) in
            Thread {
                continuation.resume(returning: exchange(address, port: port, "GET \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n\r\n"))
            }.start()
        }
        let text = try result.get()
        let statusLine = text.prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "not an HTTP answer: \(text)") }
        return (status, text)
    }

    private static func exchange(_ address: String, port: UInt16, _ request: String) -> Result<String, Failure> {
        let ipv6 = address.contains(":")
        #if canImport(Glibc)
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return .failure(Failure(description: "socket: \(String(cString: strerror(errno)))")) }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)   // a starved machine answers late; never is what it catches
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var storage = sockaddr_storage()
        let length: socklen_t
        if ipv6 {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, address, &socketAddress.sin6_addr)
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: socketAddress) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, address, &socketAddress.sin_addr)
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: socketAddress) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let connected = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) } }
        guard connected == 0 else { return .failure(Failure(description: "connect \(address) port \(port): \(String(cString: strerror(errno)))")) }
        let bytes = Array(request.utf8)
        let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { return .failure(Failure(description: "send: \(String(cString: strerror(errno)))")) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { answer += buffer[0..<count] } else if count == 0 { break } else {
                return .failure(Failure(description: "recv: \(String(cString: strerror(errno)))"))
            }
        }
        return .success(String(decoding: answer, as: UTF8.self))
    }
}
