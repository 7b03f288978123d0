public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock on a lock file (`flock(2)`), held until ``unlock()`` or until the lock is
/// released by the kernel when the process ends — a killed process never leaves it held.
///
/// Two uses share it: a read-modify-write of a file that another instance of the app may
/// change at the same moment (``withExclusiveLock(at:timeout:_:)``, so no update is lost), and
/// the single-instance lock an app holds for its whole life (``acquire(at:)``, which writes the
/// holder's process id into the file so a second instance can name it).
///
/// The lock file is opened with `O_NOFOLLOW` and created `0600`: a symlink planted in its place
/// is refused, never followed.
public final class FileLock: Sendable {
    /// The lock file.
    public let url: URL
    // The open descriptor, or -1 once unlocked.
    private let state: Locked<Int32>

    private init(url: URL, descriptor: Int32) {
        self.url = url
        state = Locked(descriptor)
    }

    deinit { unlock() }

    /// Takes the exclusive lock on `url` without waiting and writes this process's id into the
    /// file, for an app's single-instance lock.
    ///
    /// - Throws: ``FileLockError`` with ``FileLockError/Reason/held(byProcess:)`` when another
    ///   process holds it (naming that process when its id can be read), or why the lock file
    ///   could not be opened.
    public static func acquire(at url: URL) throws(FileLockError) -> FileLock {
        let descriptor = try openLockFile(url)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = code == EWOULDBLOCK ? readProcessID(descriptor) : nil
            close(descriptor)
            if code == EWOULDBLOCK { throw FileLockError(path: url.path, reason: .held(byProcess: holder)) }
            throw FileLockError(path: url.path, reason: .failed(String(cString: strerror(code))))
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        // pwrite(2) reads `text.count` bytes of the array's storage, borrowed for the call.
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return FileLock(url: url, descriptor: descriptor)
    }

    /// Runs `body` while holding the exclusive lock on `url`, for a read-modify-write that must
    /// not interleave with another process's: waits for a holder to finish, at most `timeout`.
    ///
    /// - Throws: ``FileLockError`` with ``FileLockError/Reason/contended(after:)`` when the lock
    ///   stayed taken for all of `timeout` (nothing was done), or what `body` throws.
    public static func withExclusiveLock<T>(at url: URL, timeout: Duration = .seconds(5),
                                            _ body: () throws -> T) throws -> T {
        let descriptor = try openLockFile(url)
        defer { close(descriptor) }   // closing the descriptor releases the lock
        let start = ContinuousClock.now
        var pause: useconds_t = 200
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                throw FileLockError(path: url.path, reason: .failed(String(cString: strerror(code))))
            }
            if ContinuousClock.now - start >= timeout { throw FileLockError(path: url.path, reason: .contended(after: timeout)) }
            usleep(pause)                 // another process holds it for a short write
            pause = min(pause * 2, 20_000)
        }
        return try body()
    }

    /// Releases the lock (idempotent).
    public func unlock() {
        state.withLock { descriptor in
            guard descriptor >= 0 else { return }
            close(descriptor)
            descriptor = -1
        }
    }

    /// Whether this lock is still held.
    public var isHeld: Bool { state.withLock { $0 >= 0 } }

    private static func openLockFile(_ url: URL) throws(FileLockError) -> Int32 {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == ELOOP ? "it is a symbolic link (refused, never followed)" : String(cString: strerror(code))
            throw FileLockError(path: url.path, reason: .failed(reason))
        }
        return descriptor
    }

    private static func readProcessID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        // pread(2) writes at most `buffer.count` bytes into the array's storage.
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// A ``FileLock`` that could not be taken: which lock file, and why.
public struct FileLockError: Error, Equatable, CustomStringConvertible {
    /// Why the lock was not taken.
    public enum Reason: Sendable, Equatable {
        /// Another process holds it — the one with this id, when the lock file names it.
        case held(byProcess: Int32?)
        /// Another process held it for the whole timeout.
        case contended(after: Duration)
        /// The lock file could not be opened or locked (the system's reason).
        case failed(String)
    }

    /// The lock file.
    public var path: String
    /// Why.
    public var reason: Reason

    /// Creates an error.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// What happened, where, and what to do.
    public var description: String {
        switch reason {
        case .held(let process?):
            return "\(path) is locked by another running instance (pid \(process)); quit it first"
        case .held(nil):
            return "\(path) is locked by another running instance; quit it first"
        case .contended(let timeout):
            return "\(path) stayed locked by another instance for \(timeout); nothing was changed — try again when it is idle"
        case .failed(let why):
            return "the lock file \(path) could not be used: \(why)"
        }
    }
}
