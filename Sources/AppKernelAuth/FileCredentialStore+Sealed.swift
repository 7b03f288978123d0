import AppKernelCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How the store's files are sealed, opened, migrated from plain JSON and shredded.
extension FileCredentialStore {
    /// What opening one of the store's files found.
    enum Opened<Value> {
        /// The file opened (or its plain predecessor was read and sealed).
        case value(Value)
        /// Neither the sealed file nor a plain one is there.
        case absent
        /// The sealed file is whole and its owner's key is gone: ciphertext nobody can open.
        case leftover
    }

    /// A file that could not be read: which one, and why.
    struct ReadFailure: Error {
        var file: URL
        var error: any Error
        /// Whether the file itself is at fault (moved aside), not a key or a write (left as it is).
        var fileAtFault = true
    }

    /// Opens the sealed `file`, or reads its plain predecessor `plain` from an earlier version,
    /// seals it into `file` and shreds it (sealed copy first: killed midway, nothing is lost).
    ///
    /// The header is checked before any key is fetched: a file of another purpose or owner is a
    /// ``SealedFileError`` whatever the keys. A whole account file whose user's key is missing
    /// is ``Opened/leftover`` — but only when the store's key check shows the ring is the one
    /// the store was written with (``isThisStoresKeyRing``): with another ring nothing is removed.
    /// - Throws: ``ReadFailure`` naming the file that failed.
    func openFile<Value: Decodable>(_ type: Value.Type, _ file: URL, plain: URL, purpose: String, of identity: UserAccountIdentity?,
                                validate: (Value, URL) throws(CredentialStoreError) -> Void = { _, _ in }) throws(ReadFailure) -> Opened<Value> {
        let owner = identity.map(KeyRing.owner(of:)) ?? KeyRing.globalOwner
        do {
            if let data = try PrivateFile.read(file, maximumSize: Self.maximumFileSize) {
                let bytes = Array(data)
                let header = try SealedFile.header(of: bytes, path: file.path)
                guard header.purpose == purpose else { throw SealedFileError(path: file.path, problem: .wrongPurpose(found: header.purpose)) }
                guard header.owner == owner else { throw SealedFileError(path: file.path, problem: .wrongOwner(found: header.owner)) }
                let key: SecretKey
                do {
                    key = try keyRing.dataKey(for: owner)
                } catch {
                    if case .missingDataKey = error.problem, identity != nil, isThisStoresKeyRing { return .leftover }
                    throw CredentialStoreError(error, path: file.path)
                }
                let value = try JSONDecoder().decode(Value.self, from: Data(try SealedFile.open(bytes, purpose: purpose, owner: owner, key: key, path: file.path)))
                try validate(value, file)
                // A plain copy left by a migration cut short (the sealed copy is written first).
                do { try shred(plain) } catch { throw ReadFailure(file: plain, error: error, fileAtFault: false) }
                return .value(value)
            }
        } catch let error as ReadFailure {
            throw error
        } catch let error as CredentialStoreError where error.key != nil {
            throw ReadFailure(file: file, error: error, fileAtFault: false)
        } catch {
            throw ReadFailure(file: file, error: error)
        }
        let data: Data, value: Value
        do {
            guard let read = try PrivateFile.read(plain, maximumSize: Self.maximumFileSize) else { return .absent }
            data = read
            value = try JSONDecoder().decode(Value.self, from: data)
            try validate(value, plain)
        } catch {
            throw ReadFailure(file: plain, error: error)
        }
        do {
            try seal(Array(data), to: file, purpose: purpose, owner: owner, key: try dataKey(of: identity, creating: true, for: file))
            try shred(plain)
        } catch {
            throw ReadFailure(file: plain, error: error, fileAtFault: false)
        }
        return .value(value)
    }

    /// Seals `plaintext` into `file` (atomically, `0600`, `fsync`ed).
    func seal(_ plaintext: [UInt8], to file: URL, purpose: String, owner: String, key: SecretKey) throws(CredentialStoreError) {
        do {
            try SealedFile.write(plaintext, to: file, purpose: purpose, owner: owner, key: key)
        } catch {
            if case .file(let dataHome) = error.problem { throw CredentialStoreError(dataHome) }
            throw CredentialStoreError(error)
        }
    }

    /// `identity`'s data key (the global key for nil). When `creating`, a missing key is made —
    /// the global key first, and the store's key check sealed with it when there is none yet:
    /// so the key check exists, and opens with this ring, wherever a sealed file of this store does.
    func dataKey(of identity: UserAccountIdentity?, creating: Bool, for file: URL) throws(CredentialStoreError) -> SecretKey {
        if creating {
            let global: SecretKey
            do { global = try keyRing.dataKey(of: nil, creatingIfMissing: true) } catch { throw CredentialStoreError(error, path: file.path) }
            let check = root.appendingPathComponent(Self.keyCheckFileName)
            if (try? FileManager.default.attributesOfItem(atPath: check.path)) == nil {
                try seal(Array(Self.keyCheckPurpose.utf8), to: check, purpose: Self.keyCheckPurpose, owner: KeyRing.globalOwner, key: global)
            }
            if identity == nil { return global }
        }
        do { return try keyRing.dataKey(of: identity, creatingIfMissing: creating) } catch { throw CredentialStoreError(error, path: file.path) }
    }

    /// Whether the key ring is the one this store's files were sealed with: the store's key
    /// check opens with its global key. Only then is an account whose user's key is missing
    /// taken for a shredded user's leftover: a ring from another folder (or a global key made
    /// since in the wrong one) never gets anything removed.
    var isThisStoresKeyRing: Bool {
        guard let global = try? keyRing.dataKey(of: nil) else { return false }
        let check = root.appendingPathComponent(Self.keyCheckFileName)
        return (try? SealedFile.read(check, purpose: Self.keyCheckPurpose, owner: KeyRing.globalOwner, key: global, maximumSize: 4096)) != nil
    }

    /// Destroys `identity`'s data key (crypto-shredding; nothing there: nothing to do).
    func destroyKey(of identity: UserAccountIdentity, for directory: URL) throws(CredentialStoreError) {
        do { try keyRing.destroy(owner: KeyRing.owner(of: identity)) } catch { throw CredentialStoreError(error, path: directory.path) }
    }

    /// Removes a shredded user's account folder; a failure is reported, not thrown.
    func removeLeftover(_ directory: URL) -> CredentialStoreProblem? {
        do {
            try removeAccountDirectory(directory)
            return nil
        } catch {
            return CredentialStoreProblem(path: directory.path, reason: "the leftover of a shredded user could not be removed: \(error.reason)", movedTo: nil)
        }
    }

    /// Shreds the plain file `file` (``PrivateFile/shred(_:)``); nothing there: nothing to do.
    func shred(_ file: URL) throws(CredentialStoreError) {
        try checked { () throws(DataHomeError) in try PrivateFile.shred(file) }
    }

    /// The problem for a file that failed to open: moved aside when the file is at fault, left
    /// where it is when only its key is missing.
    func problem(_ error: any Error) -> CredentialStoreProblem {
        guard let failure = error as? ReadFailure else { return CredentialStoreProblem(path: root.path, reason: Self.reason(error), movedTo: nil) }
        guard failure.fileAtFault else {
            let error = failure.error as? CredentialStoreError
            var reason = Self.reason(failure.error)
            if let key = error?.key, case .missingDataKey = key.problem {
                reason += " — the file was left as it is (is \(keyRing.directory.path) this store's key ring? the store's key check does not open with it)"
            }
            return CredentialStoreProblem(path: failure.file.path, reason: reason, movedTo: nil, sealedFile: error?.sealedFile, key: error?.key)
        }
        var problem = setAside(failure.file, reason: Self.reason(failure.error))
        problem.sealedFile = failure.error as? SealedFileError ?? (failure.error as? CredentialStoreError)?.sealedFile
        return problem
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as SealedFileError: reason(error)
        case let error as CredentialStoreError: error.sealedFile.map(reason) ?? error.key.map(reason) ?? error.reason
        case let error as DataHomeError: error.description
        case DecodingError.dataCorrupted(let context): "not valid JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "the field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "unreadable: \(error.localizedDescription)"
        }
    }

    /// What is wrong with a sealed file, without its path (the problem names it).
    static func reason(_ error: SealedFileError) -> String {
        switch error.problem {
        case .notSealed: "not a sealed file; nothing was decrypted"
        case .unsupportedVersion(let version): "sealed in format version \(version), which this build does not know; nothing was decrypted"
        case .truncated: "truncated (it ends inside its header, nonce or tag); nothing was decrypted"
        case .wrongPurpose(let found): "it holds a sealed \(found), not this file's secret; nothing was decrypted"
        case .wrongOwner(let found): "it is sealed for another owner (\(found)): copied from another user's folder; nothing was decrypted"
        case .wrongKey(let found):
            "it is sealed with another key (\(found)): a copy from before the user's key was replaced (a logout), or another install's; nothing was decrypted"
        case .damaged: "it fails its authentication tag: damaged or edited; nothing was decrypted"
        case .invalidHeader(let reason): reason
        case .file(let error): error.description
        case .crypto(let error): "\(error)"
        }
    }

    /// What is wrong with a file's data key.
    static func reason(_ error: KeyError) -> String {
        switch error.problem {
        case .missingDataKey(let owner, let path): "its data key (\(owner), \(path)) is missing; nothing was decrypted"
        default: "its data key could not be had: \(error.description)"
        }
    }
}
