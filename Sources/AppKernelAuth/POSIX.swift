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

/// The thin layer over the C library: loopback sockets, `poll`, a wake-up pipe, and the
/// crash-safe private file write.
enum POSIX {
    /// The C library's message for `code`.
    static func message(_ code: Int32) -> String { String(cString: strerror(code)) }

    // MARK: Sockets

    // The listening sockets (127.0.0.1 and ::1) are in POSIX+Loopback.swift.

    /// Accepts a pending connection (`nil` when none is waiting). The new socket blocks, with a
    /// 2-second send timeout so that a peer that stops reading cannot hold a writer.
    static func accept(_ listener: Int32) -> Int32? {
        #if canImport(Darwin)
        let connection = Darwin.accept(listener, nil, nil)
        #else
        let connection = Glibc.accept(listener, nil, nil)
        #endif
        guard connection >= 0 else { return nil }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        // `&timeout` points at a local timeval for the duration of the call; its size is given.
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return connection
    }

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

    /// A pipe whose write end wakes a `poll` on its read end. Both ends are non-blocking.
    static func pipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [0, 0]
        // pipe(2) writes exactly two descriptors into the two-element array's storage.
        #if canImport(Darwin)
        let made = ends.withUnsafeMutableBufferPointer { Darwin.pipe($0.baseAddress!) }
        #else
        let made = ends.withUnsafeMutableBufferPointer { Glibc.pipe($0.baseAddress!) }
        #endif
        guard made == 0 else { return nil }
        setNonBlocking(ends[0])
        setNonBlocking(ends[1])
        return (ends[0], ends[1])
    }

    /// Writes one byte to a wake-up pipe.
    static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        // write(2) reads the one local byte `&byte` points at.
        _ = write(descriptor, &byte, 1)
    }

    /// Waits until one of `descriptors` is readable (or closed), or `timeoutMilliseconds` pass
    /// (-1: no limit). Returns, for each descriptor in order, whether it is ready.
    static func pollReadable(_ descriptors: [Int32], timeoutMilliseconds: Int32) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // poll(2) reads and updates exactly `entries.count` pollfd structures in the array's
        // storage, borrowed exclusively for the call.
        let ready = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        guard ready > 0 else { return descriptors.map { _ in false } }
        return entries.map { $0.revents != 0 }
    }

    // MARK: Private files

    /// Creates `directory` `0700` (if missing) and makes it `0700`.
    static func makePrivateDirectory(_ directory: URL) throws(CredentialStoreError) {
        if mkdir(directory.path, 0o700) != 0 && errno != EEXIST {
            throw CredentialStoreError(path: directory.path, reason: "could not be created: \(message(errno))")
        }
        if chmod(directory.path, 0o700) != 0 {
            throw CredentialStoreError(path: directory.path, reason: "could not be made private: \(message(errno))")
        }
    }

    /// Replaces `file` with `data` so that a reader, or a process killed mid-write, sees the old
    /// file or the new one, never a torn one; the file is `0600` from its first byte: a
    /// temporary file is created `0600` with `O_CREAT | O_EXCL`, written, `fsync`ed, renamed over
    /// `file`, and the directory `fsync`ed.
    static func writePrivateFileAtomically(_ data: Data, to file: URL) throws(CredentialStoreError) {
        let directory = file.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(SecureRandom.token(byteCount: 6)).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw CredentialStoreError(path: temporary.path, reason: "could not be created: \(message(errno))")
        }
        var failure: String?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                // write(2) reads `buffer.count - offset` bytes from `offset` into the Data's
                // bytes, borrowed for the closure; the range stays inside the buffer.
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "could not be written: \(message(errno))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "could not be synced: \(message(errno))" }
        close(descriptor)
        if failure == nil, rename(temporary.path, file.path) != 0 {
            failure = "could not replace \(file.lastPathComponent): \(message(errno))"
        }
        if let failure {
            unlink(temporary.path)
            throw CredentialStoreError(path: file.path, reason: failure)
        }
        let directoryDescriptor = open(directory.path, O_RDONLY)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
