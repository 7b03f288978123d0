/// A sealed file that could not be opened or written: which file, and what is wrong with it.
/// Nothing that failed is decrypted into memory, and nothing is overwritten.
public struct SealedFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Sendable, Hashable {
        /// The file does not start with the sealed format's magic bytes: it is not a sealed file
        /// (a plain file from an earlier version, or something else).
        case notSealed
        /// The file is sealed in a format version this build does not know.
        case unsupportedVersion(UInt8)
        /// The file ends before its header, nonce or tag does.
        case truncated
        /// The file holds another kind of secret (`found`) than the one asked for.
        case wrongPurpose(found: String)
        /// The file belongs to another owner (`found`): it was copied or moved from another user.
        case wrongOwner(found: String)
        /// The file was sealed with another key (its id `found`, hex) than the one given: a file
        /// from another install, an owner key that was destroyed or replaced, or a wrong master key.
        case wrongKey(found: String)
        /// The header parses and names the right key, but the tag does not verify: the file was
        /// damaged or edited.
        case damaged
        /// The header's fields cannot be written (purpose or owner too long, or not UTF-8).
        case invalidHeader(String)
        /// Reading or writing the file failed.
        case file(DataHomeError)
        /// The cryptography failed (the random generator, or the library).
        case crypto(CryptoError)
    }

    /// The file concerned.
    public var path: String
    /// What is wrong with it.
    public var problem: Problem

    /// Creates an error.
    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// What is wrong, where, and what to do.
    public var description: String {
        switch problem {
        case .notSealed:
            "\(path) is not a sealed file (no AppKernel sealed-file header); it was not read — move it away if it is not yours"
        case .unsupportedVersion(let version):
            "\(path) is sealed in format version \(version), which this build does not know; it was left as it is — open it with a newer build"
        case .truncated:
            "\(path) is truncated (it ends inside its header, nonce or tag); nothing was decrypted — restore it from a backup or remove it"
        case .wrongPurpose(let found):
            "\(path) holds a sealed \(found), not the secret asked for; nothing was decrypted — the file was moved or replaced"
        case .wrongOwner(let found):
            "\(path) is sealed for the owner \(found), not for this one; nothing was decrypted — it was copied from another user's files"
        case .wrongKey(let found):
            "\(path) was sealed with key \(found), not with this owner's key; nothing was decrypted — the key was destroyed or "
                + "replaced, or the file comes from another install"
        case .damaged:
            "\(path) fails its authentication tag: it was damaged or edited; nothing was decrypted — restore it or remove it"
        case .invalidHeader(let reason):
            "\(path): \(reason)"
        case .file(let error):
            "\(error)"
        case .crypto(let error):
            "\(path): \(error)"
        }
    }
}
