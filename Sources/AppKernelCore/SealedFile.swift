public import Foundation

/// The one format of every small secret file AppKernel keeps (credentials, the passcode record,
/// the embedded org's state, key-value stores, wrapped keys): a plain header naming what the
/// file holds, whose it is and which key sealed it, then the secret, sealed with AES-256-GCM
/// with the whole header as associated data.
///
/// ```
/// offset  size  field
/// 0       4     magic "AKSF"
/// 4       1     version (1)
/// 5       16    key id (SecretKey.id of the key that sealed it)
/// 21      1     purpose length P (1…64)      then P bytes: purpose, UTF-8 ("credentials", "data-key", …)
/// 22+P    2     owner length O (1…1024, big-endian)  then O bytes: owner, UTF-8 ("global", a user id)
/// H       12    nonce (random)
/// H+12    n     ciphertext
/// H+12+n  16    tag over header ‖ ciphertext
/// ```
///
/// Because the header is authenticated, a file copied from one user to another, moved to hold
/// another kind of secret, or with any header byte edited, fails; the header is checked first,
/// so the error says which (``SealedFileError/Problem/wrongOwner(found:)``,
/// ``SealedFileError/Problem/wrongKey(found:)``, …) and names the file. An older copy of the same
/// file sealed with the same key opens: replay is not detected (the format holds no counter).
public enum SealedFile {
    /// The first four bytes of every sealed file.
    public static let magic: [UInt8] = Array("AKSF".utf8)
    /// The format version this build writes.
    public static let version: UInt8 = 1
    /// The longest purpose, in UTF-8 bytes.
    public static let maximumPurposeLength = 64
    /// The longest owner, in UTF-8 bytes.
    public static let maximumOwnerLength = 1024

    /// What a sealed file's header says.
    public struct Header: Sendable, Hashable {
        /// The format version.
        public var version: UInt8
        /// The ``SecretKey/id`` of the key that sealed the file.
        public var keyID: [UInt8]
        /// What the file holds.
        public var purpose: String
        /// Whose the file is.
        public var owner: String

        /// A header with these fields.
        public init(version: UInt8, keyID: [UInt8], purpose: String, owner: String) {
            self.version = version
            self.keyID = keyID
            self.purpose = purpose
            self.owner = owner
        }
    }

    /// The sealed bytes of `plaintext`, for `owner`, holding `purpose`, under `key`.
    /// - Throws: ``SealedFileError`` (with `path`) for a purpose or owner out of bounds, or a
    ///   failed random generator.
    public static func seal(_ plaintext: [UInt8], purpose: String, owner: String, key: SecretKey, path: String) throws(SealedFileError) -> [UInt8] {
        let header = try encodedHeader(purpose: purpose, owner: owner, keyID: key.id, path: path)
        do {
            return header + (try AES256GCM.seal(plaintext, using: key, authenticating: header).combined)
        } catch {
            throw SealedFileError(path: path, problem: .crypto(error))
        }
    }

    /// The plaintext of the sealed `bytes`, if they hold `purpose` for `owner` under `key` and
    /// their tag verifies.
    /// - Throws: ``SealedFileError`` naming `path` and what is wrong; nothing is decrypted
    ///   unless every check passed.
    public static func open(_ bytes: [UInt8], purpose: String, owner: String, key: SecretKey, path: String) throws(SealedFileError) -> [UInt8] {
        let (header, headerLength) = try parseHeader(bytes, path: path)
        guard header.purpose == purpose else { throw SealedFileError(path: path, problem: .wrongPurpose(found: header.purpose)) }
        guard header.owner == owner else { throw SealedFileError(path: path, problem: .wrongOwner(found: header.owner)) }
        guard header.keyID == key.id else { throw SealedFileError(path: path, problem: .wrongKey(found: header.keyID.hexDigits)) }
        do {
            let box = try AES256GCM.SealedBox(combined: bytes[headerLength...])
            return try AES256GCM.open(box, using: key, authenticating: Array(bytes[..<headerLength]))
        } catch {
            throw SealedFileError(path: path, problem: error.code == .authenticationFailed ? .damaged : .truncated)
        }
    }

    /// The header of the sealed `bytes`, without opening them.
    /// - Throws: ``SealedFileError``: not sealed, an unknown version, or truncated.
    public static func header(of bytes: [UInt8], path: String) throws(SealedFileError) -> Header {
        try parseHeader(bytes, path: path).header
    }

    /// Seals `plaintext` into `file` through ``PrivateFile`` (`0600` from the first byte,
    /// replaced atomically, `fsync`ed).
    /// - Throws: ``SealedFileError`` naming the file; the old file is left as it was.
    public static func write(_ plaintext: [UInt8], to file: URL, purpose: String, owner: String, key: SecretKey) throws(SealedFileError) {
        let sealed = try seal(plaintext, purpose: purpose, owner: owner, key: key, path: file.path)
        do {
            try PrivateFile.write(Data(sealed), to: file)
        } catch {
            throw SealedFileError(path: file.path, problem: .file(error))
        }
    }

    /// The plaintext sealed in `file`, `nil` when there is no file (a link or anything but a
    /// regular file is refused, as ``PrivateFile/read(_:maximumSize:)`` does).
    /// - Throws: ``SealedFileError`` naming the file and what is wrong with it.
    public static func read(_ file: URL, purpose: String, owner: String, key: SecretKey, maximumSize: Int = 16 << 20) throws(SealedFileError) -> [UInt8]? {
        let data: Data?
        do {
            data = try PrivateFile.read(file, maximumSize: maximumSize)
        } catch {
            throw SealedFileError(path: file.path, problem: .file(error))
        }
        guard let data else { return nil }
        return try open(Array(data), purpose: purpose, owner: owner, key: key, path: file.path)
    }

    // MARK: The header

    static func encodedHeader(purpose: String, owner: String, keyID: [UInt8], path: String) throws(SealedFileError) -> [UInt8] {
        let purposeBytes = Array(purpose.utf8), ownerBytes = Array(owner.utf8)
        guard (1...maximumPurposeLength).contains(purposeBytes.count) else {
            throw SealedFileError(path: path, problem: .invalidHeader("a purpose of \(purposeBytes.count) bytes (1…\(maximumPurposeLength) allowed)"))
        }
        guard (1...maximumOwnerLength).contains(ownerBytes.count) else {
            throw SealedFileError(path: path, problem: .invalidHeader("an owner of \(ownerBytes.count) bytes (1…\(maximumOwnerLength) allowed)"))
        }
        return magic + [version] + keyID + [UInt8(purposeBytes.count)] + purposeBytes
            + [UInt8(ownerBytes.count >> 8), UInt8(ownerBytes.count & 0xff)] + ownerBytes
    }

    private static func parseHeader(_ bytes: [UInt8], path: String) throws(SealedFileError) -> (header: Header, length: Int) {
        guard bytes.count >= magic.count else {
            throw SealedFileError(path: path, problem: bytes.isEmpty || magic.starts(with: bytes) ? .truncated : .notSealed)
        }
        guard bytes.starts(with: magic) else { throw SealedFileError(path: path, problem: .notSealed) }
        guard bytes.count > 4 else { throw SealedFileError(path: path, problem: .truncated) }
        guard bytes[4] == version else { throw SealedFileError(path: path, problem: .unsupportedVersion(bytes[4])) }
        var offset = 5
        guard bytes.count >= offset + SecretKey.idByteCount + 1 else { throw SealedFileError(path: path, problem: .truncated) }
        let keyID = Array(bytes[offset..<offset + SecretKey.idByteCount])
        offset += SecretKey.idByteCount
        let purposeLength = Int(bytes[offset])
        offset += 1
        guard bytes.count >= offset + purposeLength + 2 else { throw SealedFileError(path: path, problem: .truncated) }
        let purpose = String(decoding: bytes[offset..<offset + purposeLength], as: UTF8.self)
        offset += purposeLength
        let ownerLength = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
        offset += 2
        guard bytes.count >= offset + ownerLength + AES256GCM.nonceByteCount + AES256GCM.tagByteCount else {
            throw SealedFileError(path: path, problem: .truncated)
        }
        let owner = String(decoding: bytes[offset..<offset + ownerLength], as: UTF8.self)
        offset += ownerLength
        return (Header(version: version, keyID: keyID, purpose: purpose, owner: owner), offset)
    }
}
