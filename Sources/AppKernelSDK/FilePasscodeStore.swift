import AppKernelAuth
import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the passcode record in a file, so the passcode and its failed-attempt count survive a
/// relaunch, a kill and a crash — and fails closed when the file is damaged.
///
/// Three files live side by side (for `passcode.json`):
/// - `passcode.json`: the record (salted hash, iteration count, failed attempts) and an
///   HMAC-SHA256 over it, replaced atomically and `fsync`ed (`PrivateFile`), owner-only from its
///   first byte;
/// - `passcode.key`: 32 bytes from the system's random source, made on the first save and kept
///   (the per-install key of that HMAC), owner-only;
/// - `passcode.set`: a marker that a passcode is set, written before the record and removed
///   after it, so a record that disappears reads as damage, not as "no passcode".
///
/// Anything but a readable, authentic record — or no record and no marker — is
/// ``PasscodeDamage``. Files are opened with `O_NOFOLLOW`: a symbolic link is never followed.
/// Files are written by Core's `PrivateFile` (owner-only from the first byte) into a folder
/// checked like a data home (`PrivateDirectory`: not a link, the user's, not writable by
/// others; created `0700` when missing). Every write runs under an advisory lock
/// (`passcode.lock`, a `FileLock`), and ``update(_:)`` reads, changes and writes the record as
/// one step: two instances of the app counting wrong answers at once both count.
public struct FilePasscodeStore: PasscodeStore {
    /// The record's file.
    public let url: URL
    /// The install's HMAC key.
    public var keyURL: URL { url.deletingPathExtension().appendingPathExtension("key") }
    /// The marker that a passcode is set.
    public var markerURL: URL { url.deletingPathExtension().appendingPathExtension("set") }
    /// The lock file every write holds.
    public var lockURL: URL { url.deletingPathExtension().appendingPathExtension("lock") }
    /// How long a write waits for another instance's write to finish before it fails (closed:
    /// the answer is not judged). Default 5 seconds.
    public var lockTimeout: Duration = .seconds(5)

    /// The largest record file read; a bigger one is damage.
    static let maximumFileSize = 64 << 10
    /// What the authentication code covers before the record's bytes (domain separation).
    private static let macContext = Array("AppKernel passcode record v1\0".utf8)

    /// A store in `url` (its folder must exist).
    public init(url: URL) { self.url = url }

    /// The stored record, or `nil` when none is set or it cannot be trusted (see ``loadVerified()``).
    public func load() -> PasscodeRecord? { try? loadVerified() }

    /// The stored record, checked: `nil` when no passcode is set (no record and no marker).
    /// - Throws: ``PasscodeDamage`` for a record that exists but cannot be read or verified, or
    ///   is missing while the marker is there.
    public func loadVerified() throws(PasscodeDamage) -> PasscodeRecord? {
        guard let data = try Self.readRegularFile(url) else {
            if try Self.readRegularFile(markerURL) != nil {
                throw PasscodeDamage(kind: .missing, path: url.path, detail: "the marker \(markerURL.lastPathComponent) says a passcode is set")
            }
            return nil
        }
        guard !data.isEmpty else { throw PasscodeDamage(kind: .empty, path: url.path, detail: "0 bytes") }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data), envelope.version == 1,
              let recordBytes = Data(base64Encoded: envelope.record) else {
            throw PasscodeDamage(kind: .malformed, path: url.path, detail: "not a version-1 passcode record")
        }
        guard let key = try Self.readRegularFile(keyURL), key.count == 32 else {
            throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: "the install's key \(keyURL.lastPathComponent) is missing or not 32 bytes")
        }
        let expected = HMACSHA256.authenticationCode(for: Self.macContext + Array(recordBytes), key: Array(key))
        guard PasscodeRecord.constantTimeEqual(expected, Array(hexString: envelope.mac) ?? []) else {
            throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: "the authentication code does not match")
        }
        guard let record = try? JSONDecoder().decode(PasscodeRecord.self, from: recordBytes), record.isPlausible else {
            throw PasscodeDamage(kind: .malformed, path: url.path, detail: "the record's fields are out of range")
        }
        return record
    }

    /// Writes the record — marker first, then the record with its authentication code (owner-only,
    /// atomically, `fsync`ed) — or removes the record, then the marker; under the store's lock.
    /// - Throws: `DataHomeError` when the folder is refused or a file cannot be
    ///   written (a full disk says so), `FileLockError` when another instance held the lock too long.
    public func save(_ record: PasscodeRecord?) throws {
        try locked { try saveLocked(record) }
    }

    /// Reads the record (checked, as ``loadVerified()``), changes it with `change` and stores the
    /// result, holding the store's lock throughout: another instance's write cannot fall in
    /// between, so no update is lost (two wrong answers in two instances count two).
    /// - Returns: What was stored.
    /// - Throws: ``PasscodeDamage`` when the record cannot be trusted (nothing is written), what
    ///   `change` throws, or why the write failed.
    public func update(_ change: (PasscodeRecord?) throws -> PasscodeRecord?) throws -> PasscodeRecord? {
        try locked {
            let updated = try change(try loadVerified())
            try saveLocked(updated)
            return updated
        }
    }

    private func locked<T>(_ body: () throws -> T) throws -> T {
        try PrivateDirectory.create(url.deletingLastPathComponent())
        return try FileLock.withExclusiveLock(at: lockURL, timeout: lockTimeout, body)
    }

    private func saveLocked(_ record: PasscodeRecord?) throws {
        guard let record else {
            for file in [url, markerURL] { try PrivateFile.remove(file) }   // a symbolic link is removed, not its target
            return
        }
        let key = try installKey()
        if (try? Self.readRegularFile(markerURL)) == nil { try PrivateFile.write(Data("1\n".utf8), to: markerURL) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let recordBytes = try encoder.encode(record)
        let mac = HMACSHA256.authenticationCode(for: Self.macContext + Array(recordBytes), key: key)
        try PrivateFile.write(encoder.encode(Envelope(version: 1, record: recordBytes.base64EncodedString(), mac: mac.hexString)), to: url)
    }

    /// The install's key, made from the system's random source the first time (under the lock:
    /// two instances never make two keys).
    private func installKey() throws -> [UInt8] {
        if let key = try? Self.readRegularFile(keyURL), key.count == 32 { return Array(key) }
        let key = SecureRandom.bytes(32)
        try PrivateFile.write(Data(key), to: keyURL)
        return key
    }

    /// The bytes of `file`, `nil` when nothing is there; never follows a symbolic link.
    /// - Throws: ``PasscodeDamage`` when something other than a regular file is there, or it
    ///   cannot be read, or it is too big.
    static func readRegularFile(_ file: URL) throws(PasscodeDamage) -> Data? {
        var status = stat()
        // lstat(2) fills the local `status` (passed inout for the call only); it never follows a link.
        guard lstat(file.path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw PasscodeDamage(kind: .unreadable, path: file.path, detail: String(cString: strerror(code)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw PasscodeDamage(kind: .notARegularFile, path: file.path, detail: "a symbolic link, folder or device, not a regular file")
        }
        // O_NOFOLLOW: a link swapped in after the check is refused, not followed; O_NONBLOCK: a
        // FIFO swapped in cannot hang the launch.
        let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw PasscodeDamage(kind: code == ELOOP ? .notARegularFile : .unreadable, path: file.path, detail: String(cString: strerror(code)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            let data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
            guard data.count <= maximumFileSize else {
                throw PasscodeDamage(kind: .malformed, path: file.path, detail: "larger than \(maximumFileSize) bytes")
            }
            return data
        } catch let damage as PasscodeDamage {
            throw damage
        } catch {
            throw PasscodeDamage(kind: .unreadable, path: file.path, detail: "\(error)")
        }
    }

    /// The file's shape: the record's JSON bytes (base64) and the HMAC over them (hex).
    private struct Envelope: Codable {
        var version: Int
        var record: String
        var mac: String
    }
}

extension Array<UInt8> {
    /// Bytes from lower- or upper-case hexadecimal; `nil` for anything else.
    init?(hexString: String) {
        let digits = Array(hexString.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension PasscodeStore {
    /// ``loadVerified()``, `change`, then ``save(_:)``: one step for a store only one process uses.
    public func update(_ change: (PasscodeRecord?) throws -> PasscodeRecord?) throws -> PasscodeRecord? {
        let updated = try change(try loadVerified())
        try save(updated)
        return updated
    }
}
