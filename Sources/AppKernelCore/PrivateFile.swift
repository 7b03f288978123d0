public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one writer of files that hold secrets (credentials, the passcode record, the embedded
/// org's tokens): owner-only (`0600`) from the first byte, replaced atomically, never through a
/// link.
///
/// ``write(_:to:)`` creates a temporary file beside the target with `O_CREAT | O_EXCL |
/// O_NOFOLLOW` and mode `0600` (so no other user can open it at any moment, whatever the umask),
/// writes it, `fsync`s it, renames it over the target (a link in the target's place is
/// replaced, not followed) and `fsync`s the folder: a reader, or a process killed mid-write, sees
/// the old file or the new one, never a torn one. (`Data.write(options: .atomic)` creates the
/// file with the umask's mode, `0644`, and a `chmod` after it leaves a moment when anyone can
/// open it.) The folder is opened with `O_NOFOLLOW`; check it first with
/// ``PrivateDirectory/create(_:home:)``.
///
/// Errors are ``DataHomeError``s naming the file; a full disk says so (``DataHomeError/Problem/diskFull``)
/// and leaves the old file as it was.
public enum PrivateFile {
    /// Told the mode each temporary file had when it was created (before anything was written),
    /// for tests that check no file is ever readable by others.
    @TaskLocal package static var creationObserver: (@Sendable (URL, UInt32) -> Void)?

    /// Replaces `file` with `data`, atomically and owner-only (see ``PrivateFile``).
    /// - Throws: ``DataHomeError`` naming the file or its folder; nothing is left half-written.
    public static func write(_ data: Data, to file: URL) throws(DataHomeError) {
        let directory = file.deletingLastPathComponent()
        let folder = try openFolder(directory)
        defer { close(folder) }
        let name = file.lastPathComponent
        let temporary = ".\(name).\(UUID().uuidString.prefix(12)).tmp"
        let descriptor = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DataHomeError(path: directory.appendingPathComponent(temporary).path, call: "create", code: errno) }
        var failure: DataHomeError?
        var status = stat()
        // fstat(2) fills the local `status`, passed inout for the call only.
        if fstat(descriptor, &status) == 0 { creationObserver?(file, UInt32(status.st_mode & 0o7777)) }
        // The file is ours (O_EXCL made it): make its mode exactly 0600 whatever the umask took away.
        if fchmod(descriptor, 0o600) != 0 { failure = DataHomeError(path: file.path, call: "chmod", code: errno) }
        if failure == nil { failure = writeAll(data, to: descriptor, path: file.path) }
        if failure == nil, fsync(descriptor) != 0 { failure = DataHomeError(path: file.path, call: "fsync", code: errno) }
        if close(descriptor) != 0, failure == nil { failure = DataHomeError(path: file.path, call: "close", code: errno) }
        if failure == nil, renameat(folder, temporary, folder, name) != 0 { failure = DataHomeError(path: file.path, call: "rename", code: errno) }
        if let failure {
            unlinkat(folder, temporary, 0)
            throw failure
        }
        fsync(folder)   // the rename itself is durable once the folder is
    }

    /// The bytes of the regular file `file`, `nil` when nothing is there; never follows a link.
    /// - Throws: ``DataHomeError``: a link or anything but a regular file there, a file larger
    ///   than `maximumSize` bytes, or a failed read.
    public static func read(_ file: URL, maximumSize: Int = 64 << 20) throws(DataHomeError) -> Data? {
        // O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: a FIFO cannot hang the caller.
        let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw DataHomeError(path: file.path, problem: .symbolicLink(target: linkTarget(file.path))) }
            throw DataHomeError(path: file.path, call: "open", code: code)
        }
        defer { close(descriptor) }
        var status = stat()
        // fstat(2) fills the local `status`, passed inout for the call only.
        guard fstat(descriptor, &status) == 0 else { throw DataHomeError(path: file.path, call: "stat", code: errno) }
        guard status.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw DataHomeError(path: file.path, problem: .notARegularFile) }
        guard Int(status.st_size) <= maximumSize else { throw DataHomeError(path: file.path, problem: .tooLarge(limit: maximumSize)) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            // pread(2) writes at most `buffer.count` bytes into the array's storage, borrowed for the call.
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(data.count)) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw DataHomeError(path: file.path, call: "read", code: errno) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[..<count])
            guard data.count <= maximumSize else { throw DataHomeError(path: file.path, problem: .tooLarge(limit: maximumSize)) }
        }
    }

    /// Removes `file` if it is there (a link is removed, not its target) and `fsync`s its folder.
    /// - Throws: ``DataHomeError`` when it is there and cannot be removed.
    public static func remove(_ file: URL) throws(DataHomeError) {
        guard unlink(file.path) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw DataHomeError(path: file.path, call: code == EISDIR || code == EPERM ? "unlink (not a file)" : "unlink", code: code)
        }
        let folder = open(file.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Shreds `file`: overwrites it in place with zeros, `fsync`s it, then unlinks it and
    /// `fsync`s its folder — what a plain file of an earlier version, or a wrapped key, leaves
    /// behind holds nothing readable in its old blocks (on ext4 and xfs; copy-on-write file
    /// systems, SSDs' remapping and snapshots may keep old copies). A link in its place is
    /// removed, never written through; nothing there: nothing to do.
    /// - Throws: ``DataHomeError`` naming the file and the call that failed; something that is
    ///   not a regular file is ``DataHomeError/Problem/notARegularFile`` and stays.
    public static func shred(_ file: URL) throws(DataHomeError) {
        let descriptor = open(file.path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            if code == ENOENT { return }
            guard code == ELOOP else { throw DataHomeError(path: file.path, call: "open", code: code) }
        } else {
            defer { close(descriptor) }
            var status = stat()
            // fstat(2) fills the local `status`, for the call only.
            guard fstat(descriptor, &status) == 0 else { throw DataHomeError(path: file.path, call: "stat", code: errno) }
            guard status.st_mode & S_IFMT == S_IFREG else { throw DataHomeError(path: file.path, problem: .notARegularFile) }
            if status.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: Int(status.st_size))
                // pwrite(2) reads the zeros' storage, borrowed for the call.
                let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                guard written == zeros.count else { throw DataHomeError(path: file.path, call: "write", code: errno) }
            }
            guard fsync(descriptor) == 0 else { throw DataHomeError(path: file.path, call: "fsync", code: errno) }
        }
        try remove(file)
    }

    // MARK: Parts

    private static func openFolder(_ directory: URL) throws(DataHomeError) -> Int32 {
        let folder = open(directory.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else {
            let code = errno
            // A link opened with O_NOFOLLOW | O_DIRECTORY fails with ELOOP or ENOTDIR (Linux): tell them apart.
            if code == ELOOP || code == ENOTDIR {
                var status = stat()
                // lstat(2) fills the local `status` about the link itself, for the call only.
                let isLink = lstat(directory.path, &status) == 0 && status.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK)
                throw DataHomeError(path: directory.path, problem: isLink ? .symbolicLink(target: linkTarget(directory.path)) : .notADirectory)
            }
            throw DataHomeError(path: directory.path, call: "open", code: code)
        }
        return folder
    }

    private static func writeAll(_ data: Data, to descriptor: Int32, path: String) -> DataHomeError? {
        data.withUnsafeBytes { buffer -> DataHomeError? in
            var offset = 0
            while offset < buffer.count {
                // pwrite(2) reads `buffer.count - offset` bytes from `offset` into the Data's bytes,
                // borrowed for the closure; the range stays inside the buffer.
                let written = pwrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset, off_t(offset))
                if written < 0 {
                    if errno == EINTR { continue }
                    return DataHomeError(path: path, call: "write", code: errno)
                }
                offset += written
            }
            return nil
        }
    }

    /// Where the link at `path` points ("?" when it cannot be read).
    static func linkTarget(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        // readlink(2) writes at most `count - 1` bytes into the array's storage, borrowed for the call.
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count - 1) }
        return count >= 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
}
