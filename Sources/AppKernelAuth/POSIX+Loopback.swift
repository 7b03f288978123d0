import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The loopback listening sockets of the redirect listener. Like POSIX.swift, every unsafe
// pointer here carries a comment saying why it is sound.

extension POSIX {
    /// A loopback address the redirect listener can listen on.
    enum LoopbackAddress: String, Sendable, Hashable, CaseIterable {
        /// `127.0.0.1`.
        case ipv4 = "127.0.0.1"
        /// `::1`.
        case ipv6 = "::1"
    }

    /// Why a listening socket could not be made.
    enum ListenFailure: Error, Equatable {
        /// `EADDRINUSE`: another socket listens on the address and port.
        case portInUse
        /// `EADDRNOTAVAIL`, `EAFNOSUPPORT`: this machine has no such loopback address (IPv6
        /// turned off); the message says which call failed.
        case unavailable(String)
        /// Anything else: the call that failed and the C library's message.
        case failed(String)
    }

    /// How many connections the kernel queues for a listening socket before `accept` takes
    /// them: deep enough that a local flood of connects does not make the browser's own connect
    /// wait for a SYN retransmission (1 s, then 3 s…); the queued connections are the kernel's,
    /// not this process's descriptors.
    static let backlog: Int32 = 128

    /// A TCP socket listening on `address`:`port` (0: an ephemeral port), non-blocking, with
    /// `SO_REUSEADDR` (which on Linux still refuses a port another socket listens on); an IPv6
    /// socket is `IPV6_V6ONLY`, so it never shares a port with an IPv4 one.
    /// - Returns: The descriptor and the port it got.
    static func listenOnLoopback(_ address: LoopbackAddress, port: UInt16) throws(ListenFailure) -> (descriptor: Int32, port: UInt16) {
        let family = address == .ipv4 ? AF_INET : AF_INET6
        #if canImport(Darwin)
        let descriptor = socket(family, SOCK_STREAM, 0)
        #else
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else {
            let code = errno
            throw code == EAFNOSUPPORT || code == EPROTONOSUPPORT ? .unavailable("socket(\(address.rawValue)): \(message(code))")
                : .failed("socket(\(address.rawValue)): \(message(code))")
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var yes: Int32 = 1
        // `&yes` passes a pointer to a local Int32 that outlives the call; the size given is its size.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        switch address {
        case .ipv4:
            var ipv4 = sockaddr_in()
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port.bigEndian
            ipv4.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian   // 127.0.0.1
            // A sockaddr_in is read through a sockaddr pointer, as bind(2) is specified: the
            // pointer covers exactly the local `ipv4` and lives only for the call.
            bound = withUnsafePointer(to: &ipv4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            // `&yes` as above: a local Int32 for the call.
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            var ipv6 = sockaddr_in6()
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port.bigEndian
            // inet_pton(3) writes the 16 bytes of ::1 into the local `sin6_addr` it points at.
            _ = inet_pton(AF_INET6, "::1", &ipv6.sin6_addr)
            // A sockaddr_in6 is read through a sockaddr pointer, as bind(2) is specified: the
            // pointer covers exactly the local `ipv6` and lives only for the call.
            bound = withUnsafePointer(to: &ipv6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            let reason = "bind \(address.rawValue) port \(port): \(message(code))"
            if code == EADDRINUSE { throw .portInUse }
            throw code == EADDRNOTAVAIL || code == EAFNOSUPPORT ? .unavailable(reason) : .failed(reason)
        }
        guard listen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            throw code == EADDRINUSE ? .portInUse : .failed("listen \(address.rawValue) port \(port): \(message(code))")
        }
        // sockaddr_storage is large enough for either family; getsockname(2) writes at most
        // `length` bytes into the local `storage` through a sockaddr pointer, both living for
        // the call; the port is then read through the family's own layout over the same local.
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(descriptor)
            throw .failed("getsockname \(address.rawValue): \(message(code))")
        }
        let boundPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            switch address {
            case .ipv4: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            case .ipv6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        }
        setNonBlocking(descriptor)
        return (descriptor, boundPort)
    }
}

// The serving loop's accept and poll, which say why they failed: the loop must tell "nothing
// now" from "cannot now" (out of descriptors) to back off instead of spinning.
extension POSIX {
    /// What accepting a connection gave.
    enum AcceptResult: Equatable, Sendable {
        /// A new connection: blocking, close-on-exec, with a 2-second send timeout so that a
        /// peer that stops reading cannot hold a writer.
        case connection(Int32)
        /// Nothing to take now: none waiting (`EAGAIN`), interrupted (`EINTR`), or the one
        /// waiting was reset before it was taken (`ECONNABORTED`, `EPROTO`).
        case none
        /// Accepting failed and would fail again at once — out of descriptors (`EMFILE`,
        /// `ENFILE`), of memory (`ENOBUFS`, `ENOMEM`), or anything else; the connection stays
        /// queued. The `errno`.
        case failed(Int32)
    }

    /// Accepts one pending connection of the non-blocking listening socket `listener`.
    static func acceptConnection(_ listener: Int32) -> AcceptResult {
        #if canImport(Glibc)
        let connection = Glibc.accept(listener, nil, nil)
        #elseif canImport(Musl)
        let connection = Musl.accept(listener, nil, nil)
        #else
        let connection = Darwin.accept(listener, nil, nil)
        #endif
        guard connection >= 0 else {
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO: return .none
            default: return .failed(code)
            }
        }
        // Not inherited by a program this process starts later (the browser opener, say); set
        // right after accept, as Glibc's module does not offer accept4(SOCK_CLOEXEC).
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        // `&timeout` points at a local timeval for the duration of the call; its size is given.
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return .connection(connection)
    }

    /// What waiting in `poll` gave.
    enum PollResult: Equatable, Sendable {
        /// For each descriptor in order, whether it is ready (readable, at end of file, in error
        /// or hung up); all `false` when the time ran out.
        case ready([Bool])
        /// A signal interrupted the wait (`EINTR`): wait again.
        case interrupted
        /// `poll` failed (`ENOMEM`, `EINVAL`): the `errno`.
        case failed(Int32)
    }

    /// Waits until one of `descriptors` is readable, at end of file or in error, or
    /// `timeoutMilliseconds` pass (-1: no limit).
    static func waitReadable(_ descriptors: [Int32], timeoutMilliseconds: Int32) -> PollResult {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // poll(2) reads and updates exactly `entries.count` pollfd structures in the array's
        // storage, borrowed exclusively for the call.
        let ready = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        if ready < 0 {
            let code = errno
            return code == EINTR ? .interrupted : .failed(code)
        }
        return .ready(entries.map { $0.revents != 0 })
    }
}
