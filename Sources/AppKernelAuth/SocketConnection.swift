import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(COpenSSL)
import COpenSSL
#endif

/// One TCP connection of ``SocketTransport`` (TLS on it for `https`): non-blocking I/O that waits
/// with `poll` no longer than the current request's deadline and wakes when it is cancelled,
/// reading in bounded pieces into ``buffer``.
///
/// `@unchecked Sendable`: one request uses a connection at a time — the thread that opened it,
/// or the one that took it from the pool, whose lock hands it over.
final class SocketConnection: @unchecked Sendable {
    /// `scheme://host:port`: which requests may reuse it.
    let key: String
    private(set) var descriptor: Int32
    #if canImport(COpenSSL)
    private var tls: TLSSession?
    #endif
    /// Bytes received and not consumed yet: `buffer[start...]`.
    var buffer: [UInt8] = []
    /// Where the unconsumed bytes of ``buffer`` begin.
    var start = 0
    /// Whether anything arrived during the current request (a stale pooled connection fails
    /// before anything does, and the request may be sent again on a new one).
    var receivedAny = false
    /// When it went back to the pool.
    var idleSince = ContinuousClock.now
    private var control: TransferControl?
    private var scratch = [UInt8](repeating: 0, count: SocketConnection.pieceSize)

    /// The most one read takes from the socket.
    static let pieceSize = 64 * 1024

    private init(key: String, descriptor: Int32) {
        self.key = key
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Connects to `host:port`, trying each address `getaddrinfo` gives (IPv6 and IPv4) in
    /// turn, each within the request's deadline.
    static func open(key: String, host: String, port: Int, control: TransferControl) throws(TransferFailure) -> SocketConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            let reason = resolved == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(resolved))
            throw .failed(.nameResolution, "the host name \(host) did not resolve (\(reason)); check the URL and the network")
        }
        defer { freeaddrinfo(first) }
        var failures: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            if control.isCancelled { throw .cancelled }
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard fd >= 0 else { failures.append(String(cString: strerror(errno))); continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            let connection = SocketConnection(key: key, descriptor: fd)
            guard connection.attach(control) else { throw .cancelled }
            do throws(TransferFailure) {
                try connection.finishConnect(address.pointee.ai_addr, address.pointee.ai_addrlen)
                return connection
            } catch .failed(_, let reason) {
                connection.detachAndClose()
                failures.append(reason)
            } catch {
                connection.detachAndClose()
                throw error
            }
        }
        throw .failed(.connectionFailed, "could not connect to \(host) port \(port): \(failures.joined(separator: "; ")); is the server running?")
    }

    private func finishConnect(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) throws(TransferFailure) {
        if connect(descriptor, address, length) == 0 { return }
        guard errno == EINPROGRESS || errno == EINTR else { throw .failed(.connectionFailed, String(cString: strerror(errno))) }
        try wait(for: Int16(POLLOUT))
        var problem: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &problem, &size)
        if problem != 0 { throw .failed(.connectionFailed, String(cString: strerror(problem))) }
    }

    /// Makes the connection the current I/O of `control` (cancelling it shuts the socket down);
    /// `false` when the request was cancelled already.
    func attach(_ control: TransferControl) -> Bool {
        self.control = control
        receivedAny = false
        return control.attach(descriptor)
    }

    /// Ends the current request's hold on the connection.
    func detach() {
        control?.detach()
        control = nil
    }

    /// Detaches, then closes.
    func detachAndClose() {
        detach()
        close()
    }

    /// Closes the socket and frees its TLS state.
    func close() {
        #if canImport(COpenSSL)
        tls = nil
        #endif
        if descriptor >= 0 { _ = closeDescriptor(descriptor) }
        descriptor = -1
    }

    /// Whether an idle connection can carry another request: nothing arrived while it waited
    /// (no data, no end of stream).
    var looksReusable: Bool {
        guard descriptor >= 0, start == buffer.count else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    // MARK: TLS

    #if canImport(COpenSSL)
    /// Speaks TLS from now on: the handshake, with the peer's certificate checked for `host`.
    func startTLS(context: TLSContext, host: String) throws(TransferFailure) {
        let session = try TLSSession(context: context, host: host)
        tls = session
        while true {
            ERR_clear_error()
            let result = SSL_connect(session.ssl)
            try flushTLS(session)
            if result == 1 { return }
            let problem = SSL_get_error(session.ssl, result)
            if problem == SSL_ERROR_WANT_READ {
                guard try feedTLS(session) else {
                    throw .failed(.tlsFailed, "\(host) closed the connection during the TLS handshake (does the server speak TLS on this port?)")
                }
            } else if problem != SSL_ERROR_WANT_WRITE {
                throw session.handshakeFailure(host: host)
            }
        }
    }

    /// Sends what OpenSSL wrote to the output BIO.
    private func flushTLS(_ session: TLSSession) throws(TransferFailure) {
        while appkernel_BIO_pending(session.output) > 0 {
            let count = scratch.withUnsafeMutableBytes { BIO_read(session.output, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return }
            try sendRaw(scratch, count: Int(count))
        }
    }

    /// Reads one piece from the socket into OpenSSL's input; `false` at the end of the stream.
    private func feedTLS(_ session: TLSSession) throws(TransferFailure) -> Bool {
        let count = try receiveRaw()
        guard count > 0 else { return false }
        _ = scratch.withUnsafeBytes { BIO_write(session.input, $0.baseAddress, Int32(count)) }
        return true
    }
    #endif

    // MARK: I/O

    /// Sends all of `bytes`.
    func write(_ bytes: [UInt8]) throws(TransferFailure) {
        #if canImport(COpenSSL)
        if let tls {
            var offset = 0
            while offset < bytes.count {
                ERR_clear_error()
                let written = bytes.withUnsafeBytes { SSL_write(tls.ssl, $0.baseAddress! + offset, Int32(min(bytes.count - offset, 1 << 20))) }
                try flushTLS(tls)
                if written > 0 { offset += Int(written); continue }
                let problem = SSL_get_error(tls.ssl, written)
                guard problem == SSL_ERROR_WANT_READ, try feedTLS(tls) else {
                    throw .failed(.connectionClosed, "the TLS connection failed while sending: \(TLSContext.errorQueue())")
                }
            }
            return
        }
        #endif
        try sendRaw(bytes, count: bytes.count)
    }

    /// Reads one piece (at most ``pieceSize`` bytes) onto the end of ``buffer``.
    /// - Returns: How many bytes arrived; 0 at the end of the stream.
    @discardableResult
    func receive() throws(TransferFailure) -> Int {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= Self.pieceSize {
            buffer.removeFirst(start)
            start = 0
        }
        let count: Int
        #if canImport(COpenSSL)
        if let tls {
            count = try receiveTLS(tls)
        } else {
            count = try receiveRaw()
        }
        #else
        count = try receiveRaw()
        #endif
        if count > 0 {
            buffer.append(contentsOf: scratch[0..<count])
            receivedAny = true
        }
        return count
    }

    #if canImport(COpenSSL)
    private func receiveTLS(_ session: TLSSession) throws(TransferFailure) -> Int {
        var plain = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            ERR_clear_error()
            let count = plain.withUnsafeMutableBytes { SSL_read(session.ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                scratch.replaceSubrange(0..<Int(count), with: plain[0..<Int(count)])
                return Int(count)
            }
            let problem = SSL_get_error(session.ssl, count)
            switch problem {
            case SSL_ERROR_WANT_READ:
                try flushTLS(session)
                guard try feedTLS(session) else { return 0 }
            case SSL_ERROR_WANT_WRITE:
                try flushTLS(session)
            case SSL_ERROR_ZERO_RETURN:
                return 0
            default:
                throw .failed(.tlsFailed, "the TLS connection failed while receiving: \(TLSContext.errorQueue())")
            }
        }
    }
    #endif

    /// Sends the first `count` of `bytes` on the socket (never raising `SIGPIPE`).
    private func sendRaw(_ bytes: [UInt8], count: Int) throws(TransferFailure) {
        var offset = 0
        while offset < count {
            let descriptor = descriptor
            let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
            if written > 0 { offset += written; continue }
            let problem = errno
            if control?.isCancelled == true { throw .cancelled }
            if problem == EAGAIN || problem == EWOULDBLOCK || problem == EINTR {
                try wait(for: Int16(POLLOUT))
            } else {
                throw .failed(.connectionClosed, "the connection failed while sending: \(String(cString: strerror(problem)))")
            }
        }
    }

    /// Reads at most ``pieceSize`` bytes from the socket into `scratch`; 0 at the end of the stream.
    private func receiveRaw() throws(TransferFailure) -> Int {
        while true {
            let descriptor = descriptor
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            let problem = errno
            if control?.isCancelled == true { throw .cancelled }
            if count >= 0 { return count }
            if problem == EAGAIN || problem == EWOULDBLOCK || problem == EINTR {
                try wait(for: Int16(POLLIN))
            } else {
                throw .failed(.connectionClosed, "the connection failed while receiving: \(String(cString: strerror(problem)))")
            }
        }
    }

    /// Waits until the socket is ready for `events`, the deadline passes or the request is
    /// cancelled (its socket shut down, which wakes the wait).
    private func wait(for events: Int16) throws(TransferFailure) {
        guard let control else { throw .cancelled }
        while true {
            if control.isCancelled { throw .cancelled }
            let left = control.millisecondsLeft
            if left == 0 { throw .timedOut }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, left)
            if control.isCancelled { throw .cancelled }
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .failed(.connectionClosed, "poll failed: \(String(cString: strerror(errno)))") }
        }
    }
}

/// `close(2)`, which the connection's own `close()` hides.
private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
