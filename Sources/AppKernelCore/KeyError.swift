/// A master key or an owner's data key that could not be had: which provider or file, what is
/// wrong, and the fix. Nothing is created in its place: a missing or wrong key never becomes a
/// new key that would orphan the data sealed with the old one.
public struct KeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Sendable, Hashable {
        /// `$CREDENTIALS_DIRECTORY` is not set: the process was not started by a systemd unit
        /// with `LoadCredential=` / `LoadCredentialEncrypted=`.
        case credentialsDirectoryUnset
        /// The master key is not there (`path`), and data sealed with it exists, or the provider
        /// never creates one.
        case missingMasterKey(path: String)
        /// The master key file holds `count` bytes, not 32.
        case wrongSize(path: String, count: Int)
        /// The key file is not safe to trust: a link, not a regular file, another user's, or
        /// readable or writable by others (`reason`).
        case unsafeKeyFile(path: String, reason: String)
        /// The owners' keys in `path` were wrapped with another master key (id `found`): the
        /// provider gives the wrong key.
        case wrongMasterKey(path: String, found: String)
        /// The owner has no data key (`path`): never created, or destroyed.
        case missingDataKey(owner: String, path: String)
        /// An owner name that cannot be a file name (`a-z A-Z 0-9 . _ -`, 1…128, not starting with a dot).
        case invalidOwner(String)
        /// The key file's folder is inside the data home (`home`): a copy of the data home would
        /// carry the key with it.
        case keyInsideDataHome(home: String)
        /// A file could not be read or written.
        case file(DataHomeError)
        /// A wrapped key could not be opened or sealed.
        case sealed(SealedFileError)
        /// The cryptography failed (the random generator, or the library).
        case crypto(CryptoError)
        /// The key folder's lock (`path`) could not be taken to create a data key (`reason`:
        /// another process held it too long, or the lock failed): nothing was created.
        case locked(path: String, reason: String)
    }

    /// The provider concerned, as ``KeyProvider/description`` names it.
    public var provider: String
    /// What is wrong.
    public var problem: Problem

    /// Creates an error.
    public init(provider: String, problem: Problem) {
        self.provider = provider
        self.problem = problem
    }

    /// What is wrong, where, and what to do.
    public var description: String {
        switch problem {
        case .credentialsDirectoryUnset:
            "\(provider): $CREDENTIALS_DIRECTORY is not set — start the app from a systemd unit with "
                + "LoadCredentialEncrypted=<name>:<path> (see systemd.exec(5)), or choose another key provider"
        case .missingMasterKey(let path):
            "\(provider): the master key \(path) is missing while data sealed with it exists; nothing was created or opened — "
                + "restore the key (a new key could not open the data)"
        case .wrongSize(let path, let count):
            "\(provider): \(path) holds \(count) bytes, not a 32-byte key — restore it (e.g. `openssl rand 32 > key`, then seal it)"
        case .unsafeKeyFile(let path, let reason):
            "\(provider): \(path) \(reason); it was not used — fix it (`chmod 600 \(path)`, owned by this user) or restore it"
        case .wrongMasterKey(let path, let found):
            "\(provider): the keys in \(path) were wrapped with another master key (id \(found)); nothing was opened or "
                + "overwritten — give the app the key it used before (or pass it as the previous key to rekey)"
        case .missingDataKey(let owner, let path):
            "\(provider): the data key of \(owner) (\(path)) is missing or was destroyed; its sealed files cannot be opened"
        case .invalidOwner(let owner):
            "\(provider): \"\(owner)\" cannot name a key owner (use a-z, A-Z, 0-9, '.', '_', '-'; 1…128 characters; no leading dot)"
        case .keyInsideDataHome(let home):
            "\(provider): the key file is inside the data home \(home), so a copy of the data home would carry its key — "
                + "keep it apart (the default is $XDG_CONFIG_HOME/<app>)"
        case .file(let error):
            "\(provider): \(error)"
        case .sealed(let error):
            "\(provider): \(error)"
        case .crypto(let error):
            "\(provider): \(error)"
        case .locked(let path, let reason):
            "\(provider): no data key was created: the lock \(path) \(reason); try again once the other instance is done"
        }
    }
}
