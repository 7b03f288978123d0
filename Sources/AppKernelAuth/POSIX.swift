import AppKernelCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Every use of an unsafe pointer in AppKernelAuth is in this file and POSIX+Loopback.swift, each
// with a comment saying why it is sound. The rest of the module calls the small, safe wrappers below.

/// The thin layer over the C library: loopback sockets, `poll`, a wake-up pipe (and the private
/// file write, which is Core's `PrivateFile`).
enum POSIX {
    /// The C library's message for `code`.
    static func message(_ code: Int32) -> String { String(cString: strerror(code)) }

    // MARK: Sockets

    // The listening sockets (127.0.0.1 and ::1) are in POSIX+Loopback.swift.

    /// Makes `descriptor` non-blocking.
    static func setNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// What a read gave.
    enum ReadResult {
        /// Some bytes.
        case bytes([UInt8])
        /// Nothing now (`EAGAIN`).
        case wouldBlock
        /// The peer closed, or the read failed.
        case closed
    }

    /// Reads what is available, up to `maximum` bytes.
    static func read(_ descriptor: Int32, maximum: Int = 4096) -> ReadResult {
        var buffer = [UInt8](repeating: 0, count: maximum)
        // read(2) writes at most `maximum` bytes into the array's own storage, which the closure
        // borrows exclusively for the call.
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, maximum, 0) }
        if count > 0 { return .bytes(Array(buffer[0..<count])) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .closed
    }

    /// Writes all of `bytes` (a blocking socket's send timeout bounds it).
    /// - Returns: Whether everything was written.
    @discardableResult
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            // send(2) reads `count - offset` bytes starting `offset` bytes into the array's
            // storage, borrowed for the call; the range never leaves the array. MSG_NOSIGNAL: a
            // closed peer gives EPIPE, not a SIGPIPE that would end the process.
            let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Closes `descriptor`.
    static func close(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = Darwin.close(descriptor)
        #else
        _ = Glibc.close(descriptor)
        #endif
    }

    /// A pipe whose write end wakes a `poll` on its read end. Both ends are non-blocking and
    /// close-on-exec (a browser started meanwhile must not hold them).
    static func pipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [0, 0]
        // pipe(2) writes exactly two descriptors into the two-element array's storage.
        #if canImport(Darwin)
        let made = ends.withUnsafeMutableBufferPointer { Darwin.pipe($0.baseAddress!) }
        #else
        let made = ends.withUnsafeMutableBufferPointer { Glibc.pipe($0.baseAddress!) }
        #endif
        guard made == 0 else { return nil }
        for end in ends {
            setNonBlocking(end)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        return (ends[0], ends[1])
    }

    /// Writes one byte to a wake-up pipe.
    static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        // write(2) reads the one local byte `&byte` points at.
        _ = write(descriptor, &byte, 1)
    }

    // MARK: Private files

    /// Replaces `file` with `data` through Core's `PrivateFile` writer (`0600` from the first
    /// byte, atomic, `fsync`ed), its error as the credential store's.
    static func writePrivateFileAtomically(_ data: Data, to file: URL) throws(CredentialStoreError) {
        do { try PrivateFile.write(data, to: file) } catch { throw CredentialStoreError(error) }
    }
}
