import AppKernelAuth
public import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the passcode record in a sealed file, so the passcode, its failed-attempt count and the
/// mobile policy it enforces survive a relaunch, a kill and a crash — unreadable and unchangeable
/// without the data home's key — and fails closed when the file is damaged.
///
/// Two files live side by side (for `passcode.json`):
/// - `passcode.json`: the record (salted hash, iteration count, failed attempts, policy) sealed
///   with the data home's global data key (Core's `SealedFile`, purpose `passcode`, owner
///   `global`: AES-256-GCM, the header authenticated), replaced atomically and `fsync`ed,
///   owner-only from its first byte;
/// - `passcode.set`: a marker that a passcode is set, written before the record and removed
///   after it, so a record that disappears reads as damage, not as "no passcode".
///
/// Anything but a record that opens — or no record and no marker — is ``PasscodeDamage``: a
/// damaged or truncated file, one sealed with another data home's key (or before the global key
/// was replaced), one sealed for another purpose or owner. An older copy of the record sealed
/// with the same key opens: putting back an earlier attempt count is not detected (the format
/// holds no counter). Files are opened with `O_NOFOLLOW`: a symbolic link is never followed.
/// Files are written into a folder checked like a data home (`PrivateDirectory`: not a link,
/// the user's, not writable by others; created `0700` when missing). Every write runs under an
/// advisory lock (`passcode.lock`, a `FileLock`), and ``update(_:)`` reads, changes and writes
/// the record as one step: two instances of the app counting wrong answers at once both count.
///
/// A record of the previous version (plain JSON under an HMAC-SHA256 keyed by `passcode.key`)
/// is read once: its code is checked as before, then it is sealed in place and the old key file
/// removed.
public struct FilePasscodeStore: PasscodeStore {
    /// The purpose in the sealed record's header.
    public static let purpose = "passcode"
    /// The record's file.
    public let url: URL
    /// The data keys; the record is sealed with the global one.
    public let keyRing: KeyRing
    /// The previous version's HMAC key file (`passcode.key`): read to migrate its record, then removed.
    public var legacyKeyURL: URL { url.deletingPathExtension().appendingPathExtension("key") }
    /// The marker that a passcode is set.
    public var markerURL: URL { url.deletingPathExtension().appendingPathExtension("set") }
    /// The lock file every write holds.
    public var lockURL: URL { url.deletingPathExtension().appendingPathExtension("lock") }
    /// How long a write waits for another instance's write to finish before it fails (closed:
    /// the answer is not judged). Default 5 seconds.
    public var lockTimeout: Duration = .seconds(5)

    /// The largest record file read; a bigger one is damage.
    static let maximumFileSize = 64 << 10
    /// What the previous version's authentication code covered before the record's bytes.
    private static let macContext = Array("AppKernel passcode record v1\0".utf8)

    /// A store in `url`, sealed with `keyRing`'s global key (the data home's: e.g.
    /// ``SDKManager/keyRing``).
    public init(url: URL, keyRing: KeyRing) {
        self.url = url
        self.keyRing = keyRing
    }

    /// The stored record, or `nil` when none is set or it cannot be trusted (see ``loadVerified()``).
    public func load() -> PasscodeRecord? { try? loadVerified() }

    /// The stored record, checked: `nil` when no passcode is set (no record and no marker). A
    /// record of the previous version is sealed on the way (when the lock can be had).
    /// - Throws: ``PasscodeDamage`` for a record that exists but cannot be read, opened or
    ///   verified, or is missing while the marker is there.
    public func loadVerified() throws(PasscodeDamage) -> PasscodeRecord? {
        let (record, legacy) = try read()
        if legacy { _ = try? locked { if case (let record?, true) = try read() { try saveLocked(record) } } }
        return record
    }

    /// Writes the record — marker first, then the sealed record (owner-only, atomically,
    /// `fsync`ed) — or removes the record, then the marker; under the store's lock.
    /// - Throws: `DataHomeError` when the folder is refused or a file cannot be
    ///   written (a full disk says so), `FileLockError` when another instance held the lock too
    ///   long, `KeyError` / `SealedFileError` when the global key cannot be had or used.
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
            let updated = try change(try read().record)
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
            for file in [url, markerURL, legacyKeyURL] { try PrivateFile.remove(file) }   // a symbolic link is removed, not its target
            return
        }
        let key = try keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
        if (try? Self.readRegularFile(markerURL)) == nil { try PrivateFile.write(Data("1\n".utf8), to: markerURL) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var bytes = Array(try encoder.encode(record))
        defer { for index in bytes.indices { bytes[index] = 0 } }
        try SealedFile.write(bytes, to: url, purpose: Self.purpose, owner: KeyRing.globalOwner, key: key)
        try PrivateFile.remove(legacyKeyURL)   // the previous version's key: its record is sealed now
    }

    /// The record in the file, checked, and whether it is the previous version's (plain, HMAC'd).
    private func read() throws(PasscodeDamage) -> (record: PasscodeRecord?, legacy: Bool) {
        guard let data = try Self.readRegularFile(url) else {
            if try Self.readRegularFile(markerURL) != nil {
                throw PasscodeDamage(kind: .missing, path: url.path, detail: "the marker \(markerURL.lastPathComponent) says a passcode is set")
            }
            return (nil, false)
        }
        guard !data.isEmpty else { throw PasscodeDamage(kind: .empty, path: url.path, detail: "0 bytes") }
        let recordBytes: [UInt8], legacy: Bool
        if data.starts(with: SealedFile.magic) {
            recordBytes = try openSealed(Array(data))
            legacy = false
        } else {
            recordBytes = try openLegacy(data)
            legacy = true
        }
        guard let record = try? JSONDecoder().decode(PasscodeRecord.self, from: Data(recordBytes)), record.isPlausible else {
            throw PasscodeDamage(kind: .malformed, path: url.path, detail: "the record's fields are out of range")
        }
        return (record, legacy)
    }

    /// The sealed record's bytes: sealed for the passcode, the global owner, with the global key.
    private func openSealed(_ bytes: [UInt8]) throws(PasscodeDamage) -> [UInt8] {
        let key: SecretKey
        do { key = try keyRing.dataKey(for: KeyRing.globalOwner) } catch {
            throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: "the data home's global key cannot be had: \(error)")
        }
        do {
            return try SealedFile.open(bytes, purpose: Self.purpose, owner: KeyRing.globalOwner, key: key, path: url.path)
        } catch {
            switch error.problem {
            case .wrongPurpose, .wrongOwner, .wrongKey, .damaged:
                throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: error.description)
            case .file, .crypto:
                throw PasscodeDamage(kind: .unreadable, path: url.path, detail: error.description)
            case .notSealed, .unsupportedVersion, .truncated, .invalidHeader:
                throw PasscodeDamage(kind: .malformed, path: url.path, detail: error.description)
            }
        }
    }

    /// The previous version's record bytes, its HMAC checked with `passcode.key`.
    private func openLegacy(_ data: Data) throws(PasscodeDamage) -> [UInt8] {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data), envelope.version == 1,
              let recordBytes = Data(base64Encoded: envelope.record) else {
            throw PasscodeDamage(kind: .malformed, path: url.path, detail: "not a sealed passcode record, nor a version-1 one")
        }
        guard let key = try Self.readRegularFile(legacyKeyURL), key.count == 32 else {
            throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: "the install's key \(legacyKeyURL.lastPathComponent) is missing or not 32 bytes")
        }
        let expected = HMACSHA256.authenticationCode(for: Self.macContext + Array(recordBytes), key: Array(key))
        guard PasscodeRecord.constantTimeEqual(expected, Array(hexString: envelope.mac) ?? []) else {
            throw PasscodeDamage(kind: .notAuthentic, path: url.path, detail: "the authentication code does not match")
        }
        return Array(recordBytes)
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

    /// The previous version's file: the record's JSON bytes (base64) and the HMAC over them (hex).
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
