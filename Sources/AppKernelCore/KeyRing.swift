public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The data keys of a data home: one random 256-bit key per owner (`global`, each user),
/// each wrapped (AES-256-GCM, the ``SealedFile`` format, purpose `data-key`) by the master key
/// of a ``KeyProvider`` and kept as `<owner>.key` in the key ring's folder (e.g. `keys/` in the
/// data home).
///
/// ```
/// master key (KeyProvider: systemd credential, key file apart from the data home, in memory)
///   └─ wraps keys/global.key, keys/<user>.key        (one random data key per owner)
///        └─ seal that owner's files (SealedFile) and stores
/// ```
///
/// - A missing or wrong master key is a ``KeyError`` naming the provider, checked against
///   every wrapped key when the ring opens; nothing is created, opened or overwritten. Only the
///   key-file provider creates a master key, and only when the ring holds no key yet.
/// - ``rekey()`` re-wraps every data key under the current master key without touching the
///   data: open the ring with the new provider and the old one as `previous`. Each key file is
///   replaced atomically, so a rekey killed midway is finished by the next.
/// - ``destroy(owner:)`` crypto-shreds an owner: the wrapped key is overwritten in place,
///   `fsync`ed and unlinked before anything else, so whatever of the owner's files is left is
///   ciphertext without a key.
public final class KeyRing: Sendable {
    /// The purpose written in every wrapped key's header.
    public static let purpose = "data-key"
    /// The owner of the data home's shared data.
    public static let globalOwner = "global"

    /// The folder of the wrapped keys.
    public let directory: URL
    /// Where the master key comes from.
    public let provider: KeyProvider
    private let master: SecretKey
    private let previous: SecretKey?

    /// Opens the key ring in `directory` (created `0700` inside `home` if missing).
    ///
    /// - Parameters:
    ///   - directory: The folder of the wrapped keys, e.g. `<data home>/keys`.
    ///   - provider: The master key's provider.
    ///   - previous: During a key rotation, the provider of the master key the keys were wrapped
    ///     with before; ``rekey()`` moves them to `provider`'s key.
    ///   - home: The data home `directory` belongs to (checked by ``PrivateDirectory``); a key
    ///     file inside it is refused.
    ///   - dataExists: Whether the data home already holds sealed data: then an empty key folder
    ///     is not a first launch, and a missing master key is an error, not a key to create.
    /// - Throws: ``KeyError`` naming the provider: the master key is missing or wrong (a wrapped
    ///   key under another master key), a key file is unsafe, or a folder is refused.
    public init(directory: URL, provider: KeyProvider, previous: KeyProvider? = nil, home: URL? = nil, dataExists: Bool = false) throws(KeyError) {
        self.directory = directory
        self.provider = provider
        if let home, let keyFile = provider.keyFileURL {
            let homePath = home.standardizedFileURL.path
            if keyFile.path.hasPrefix(homePath + "/") { throw KeyError(provider: provider.description, problem: .keyInsideDataHome(home: homePath)) }
        }
        do {
            try PrivateDirectory.create(directory, home: home)
        } catch {
            throw KeyError(provider: provider.description, problem: .file(error))
        }
        let wrapped = try Self.wrappedKeys(in: directory, provider: provider)
        // The key-file provider may create a master key only on a first launch (no data key, no
        // data), or as the new key of a rotation (the keys exist under the previous key).
        master = try provider.masterKey(creatingIfMissing: (wrapped.isEmpty && !dataExists) || previous != nil)
        self.previous = try previous?.masterKey(creatingIfMissing: false)
        let known = [master.id] + (self.previous.map { [$0.id] } ?? [])
        for file in wrapped {
            let header = try Self.header(of: file, provider: provider)
            guard known.contains(header.keyID) else {
                throw KeyError(provider: provider.description, problem: .wrongMasterKey(path: file.path, found: header.keyID.hexDigits))
            }
        }
    }

    /// The owners that have a data key.
    public func owners() throws(KeyError) -> [String] {
        try Self.wrappedKeys(in: directory, provider: provider).map { $0.deletingPathExtension().lastPathComponent }.sorted()
    }

    /// `owner`'s data key.
    ///
    /// - Parameters:
    ///   - owner: `global` or a user's id (a plain file name: `a-z A-Z 0-9 . _ -`).
    ///   - creatingIfMissing: Whether to create (and wrap, and `fsync`) a new random key when the
    ///     owner has none: at a login or the first launch, not when reading data that should
    ///     exist (its key may have been destroyed: then it stays unreadable).
    /// - Throws: ``KeyError``: no key (``KeyError/Problem/missingDataKey(owner:path:)``), a
    ///   damaged or misplaced wrapped key, or a file error.
    public func dataKey(for owner: String, creatingIfMissing: Bool = false) throws(KeyError) -> SecretKey {
        let file = try keyFile(of: owner)
        if let key = try existingKey(in: file, owner: owner) { return key }
        guard creatingIfMissing else { throw KeyError(provider: provider.description, problem: .missingDataKey(owner: owner, path: file.path)) }
        // Two processes may create the same owner's key at once (an SDK store and the credential
        // store of another instance): under the folder's lock, the second finds the first's key
        // instead of replacing it, which would orphan what the first sealed with it.
        let result: Result<SecretKey, KeyError>
        do {
            result = try FileLock.withExclusiveLock(at: directory.appendingPathComponent(Self.creationLockName)) {
                Result(catching: { () throws(KeyError) -> SecretKey in
                    if let key = try existingKey(in: file, owner: owner) { return key }
                    let key: SecretKey
                    do throws(CryptoError) { key = try SecretKey.random() } catch { throw KeyError(provider: provider.description, problem: .crypto(error)) }
                    try wrap(key, owner: owner, into: file)
                    return key
                })
            }
        } catch let error as FileLockError {
            throw KeyError(provider: provider.description, problem: .locked(path: error.path, reason: "\(error.reason)"))
        } catch {
            throw KeyError(provider: provider.description, problem: .locked(path: file.path, reason: "\(error)"))
        }
        return try result.get()
    }

    /// The lock file a data key is created under (`keys.lock`, not a `.key` file).
    static let creationLockName = "keys.lock"

    /// The key wrapped in `file`, or nil when there is none.
    private func existingKey(in file: URL, owner: String) throws(KeyError) -> SecretKey? {
        let opened: [UInt8]?
        do {
            opened = try Self.unwrap(file, owner: owner, keys: [master] + (previous.map { [$0] } ?? []))
        } catch {
            throw KeyError(provider: provider.description, problem: .sealed(error))
        }
        guard var bytes = opened else { return nil }
        defer { bytes.withUnsafeMutableBytes { LibCrypto.cleanse($0) } }
        do { return try SecretKey(bytes: bytes) } catch { throw KeyError(provider: provider.description, problem: .crypto(error)) }
    }

    /// Re-wraps every data key that is not under the current master key (it is under the
    /// `previous` one) with the current one; the data sealed with the data keys is not touched.
    /// - Returns: The owners whose keys were re-wrapped.
    /// - Throws: ``KeyError``; the keys done so far stay done, the others stay under the
    ///   previous key, and both open — run it again.
    @discardableResult
    public func rekey() throws(KeyError) -> [String] {
        var moved: [String] = []
        for owner in try owners() {
            let file = try keyFile(of: owner)
            guard try Self.header(of: file, provider: provider).keyID != master.id else { continue }
            let key = try dataKey(for: owner)
            try wrap(key, owner: owner, into: file)
            moved.append(owner)
        }
        return moved
    }

    /// Crypto-shreds `owner`: overwrites its wrapped key in place with zeros, `fsync`s it,
    /// unlinks it and `fsync`s the folder. From then on the owner's sealed files and stores are
    /// ciphertext nobody can open. Call it before removing the owner's files. Nothing there:
    /// nothing to do.
    ///
    /// On ext4 and xfs the overwrite reaches the old blocks; on copy-on-write file systems
    /// (btrfs, ZFS), SSDs' remapping and in snapshots or backups it may not — there only
    /// rotating the master key (``rekey()``) and destroying the old one completes the erase.
    /// - Throws: ``KeyError`` when the file cannot be overwritten or removed.
    public func destroy(owner: String) throws(KeyError) {
        let file = try keyFile(of: owner)
        do {
            try PrivateFile.shred(file)
        } catch {
            throw KeyError(provider: provider.description, problem: .file(error))
        }
    }

    // MARK: Parts

    private func keyFile(of owner: String) throws(KeyError) -> URL {
        let allowed = owner.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x2e || byte == 0x5f || byte == 0x2d
        }
        guard allowed, (1...128).contains(owner.utf8.count), !owner.hasPrefix(".") else {
            throw KeyError(provider: provider.description, problem: .invalidOwner(owner))
        }
        return directory.appendingPathComponent(owner + ".key")
    }

    private func wrap(_ key: SecretKey, owner: String, into file: URL) throws(KeyError) {
        do throws(SealedFileError) {
            var bytes = key.withUnsafeBytes { Array($0) }
            defer { bytes.withUnsafeMutableBytes { LibCrypto.cleanse($0) } }
            try SealedFile.write(bytes, to: file, purpose: Self.purpose, owner: owner, key: master)
        } catch {
            throw KeyError(provider: provider.description, problem: .sealed(error))
        }
    }

    /// The wrapped key in `file` opened with whichever of `keys` sealed it; `nil` if no file.
    private static func unwrap(_ file: URL, owner: String, keys: [SecretKey]) throws(SealedFileError) -> [UInt8]? {
        let data: Data?
        do { data = try PrivateFile.read(file, maximumSize: 4096) } catch { throw SealedFileError(path: file.path, problem: .file(error)) }
        guard let data else { return nil }
        let bytes = Array(data)
        let header = try SealedFile.header(of: bytes, path: file.path)
        let key = keys.first { $0.id == header.keyID } ?? keys[0]
        return try SealedFile.open(bytes, purpose: purpose, owner: owner, key: key, path: file.path)
    }

    private static func header(of file: URL, provider: KeyProvider) throws(KeyError) -> SealedFile.Header {
        do {
            guard let data = try PrivateFile.read(file, maximumSize: 4096) else {
                throw SealedFileError(path: file.path, problem: .truncated)
            }
            return try SealedFile.header(of: Array(data), path: file.path)
        } catch let error as SealedFileError {
            throw KeyError(provider: provider.description, problem: .sealed(error))
        } catch let error as DataHomeError {
            throw KeyError(provider: provider.description, problem: .file(error))
        } catch {
            throw KeyError(provider: provider.description, problem: .file(DataHomeError(path: file.path, call: "read", code: EIO)))
        }
    }

    private static func wrappedKeys(in directory: URL, provider: KeyProvider) throws(KeyError) -> [URL] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".key") && !$0.hasPrefix(".") }
                .map { directory.appendingPathComponent($0) }
        } catch {
            throw KeyError(provider: provider.description, problem: .file(DataHomeError(path: directory.path, call: "list", code: EIO)))
        }
    }
}
