import AppKernelCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The org's state file on disk: sealed with the key ring's global data key, and the plain
/// `org.json` of earlier versions read once, then overwritten and unlinked.
extension EmbeddedOrg {
    /// What is in an org folder, read under its lock.
    struct StoredState {
        /// The state, or nil when the folder holds none yet.
        var snapshot: PersistedSnapshot?
        /// The global data key it is (to be) sealed with.
        var key: SecretKey
        /// Whether `snapshot` came from a plain `org.json` (it is then to be sealed).
        var fromPlain: Bool
        /// Whether a plain `org.json` is there to be shredded once the sealed file is written
        /// (an earlier version's, or one left by a migration killed before its unlink).
        var leftoverPlain: Bool
    }

    /// Reads the state in `directory`: the sealed file when there is one, else an earlier
    /// version's plain `org.json`. The global data key is created only when no sealed file
    /// exists (reading never creates a key for data that should have one) and the plain file,
    /// if any, parsed.
    /// - Throws: `KeyError`, `SealedFileError`, `DataHomeError` (a link, a file too big) or
    ///   ``OrgStateError``, each naming the file; nothing is written.
    static func readState(in directory: URL, keyRing: KeyRing) throws -> StoredState {
        let sealed = directory.appendingPathComponent(persistedFileName), plain = directory.appendingPathComponent(legacyFileName)
        let sealedExists = exists(sealed), plainExists = exists(plain)
        if sealedExists {
            guard let data = try PrivateFile.read(sealed, maximumSize: maximumPersistedSize) else {
                throw DataHomeError(path: sealed.path, call: "open", code: ENOENT)
            }
            // The header first: a file that is not sealed says so, whichever key is missing.
            _ = try SealedFile.header(of: Array(data), path: sealed.path)
            let key = try keyRing.dataKey(for: KeyRing.globalOwner)
            var bytes = try SealedFile.open(Array(data), purpose: persistedPurpose, owner: KeyRing.globalOwner, key: key, path: sealed.path)
            defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            return StoredState(snapshot: try decode(Data(bytes), path: sealed.path), key: key, fromPlain: false, leftoverPlain: plainExists)
        }
        // No sealed state yet: the global key is made for the first write (once the plain file,
        // if any, has parsed — a refused file makes nothing).
        if plainExists, let data = try PrivateFile.read(plain, maximumSize: maximumPersistedSize) {
            let snapshot = try decode(data, path: plain.path)
            return StoredState(snapshot: snapshot, key: try keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true),
                               fromPlain: true, leftoverPlain: true)
        }
        return StoredState(snapshot: nil, key: try keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true),
                           fromPlain: false, leftoverPlain: false)
    }

    /// Seals `snapshot` into `directory/org.sealed` (`0600`, replaced atomically, `fsync`ed).
    static func writeState(_ snapshot: PersistedSnapshot, in directory: URL, key: SecretKey) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var plaintext = Array(try encoder.encode(snapshot))
        defer { plaintext.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        try SealedFile.write(plaintext, to: directory.appendingPathComponent(persistedFileName), purpose: persistedPurpose,
                             owner: KeyRing.globalOwner, key: key)
    }

    /// The snapshot in `data`, read from `path`.
    private static func decode(_ data: Data, path: String) throws(OrgStateError) -> PersistedSnapshot {
        do {
            return try JSONDecoder().decode(PersistedSnapshot.self, from: data)
        } catch {
            throw OrgStateError(path: path, reason: "does not hold an embedded org's state (\(error))")
        }
    }

    /// Whether something (a file, a link, anything) is at `url`.
    private static func exists(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0
    }
}
