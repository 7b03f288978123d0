public import AppKernelCore
import AppKernelREST
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The org's records and refresh tokens as its state file keeps them (sealed).
struct PersistedSnapshot: Codable, Hashable {
    struct StoredRecord: Codable, Hashable {
        var id: String
        var type: String
        var orgID: String
        var isDeleted: Bool
        /// The fields as a JSON object's text (types survive the round trip).
        var fields: String
    }
    var nextNumber: Int
    var records: [StoredRecord]
    /// Refresh tokens still valid, with the user id each belongs to (a relaunched app keeps
    /// its users logged in). Absent in older snapshots.
    var refreshTokens: [String: String]?

    /// A three-way merge: what this org changed since `base` (`self`) laid over what is in the
    /// file now (`current`, perhaps written by another instance meanwhile) — so neither
    /// instance's change is lost. A record this org changed or created is its own version; any
    /// other is the file's. Refresh tokens this org issued are added, those it revoked removed,
    /// the rest are the file's.
    func merged(over current: PersistedSnapshot?, base: PersistedSnapshot?) -> PersistedSnapshot {
        guard let current else { return self }
        let mine = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        let before = Dictionary((base?.records ?? []).map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        let theirs = Dictionary(current.records.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        let order = current.records.map(\.id) + records.map(\.id).filter { theirs[$0] == nil }
        let merged = order.compactMap { id in mine[id] != before[id] ? mine[id] : theirs[id] }
        let baseTokens = base?.refreshTokens ?? [:], myTokens = refreshTokens ?? [:]
        var tokens = current.refreshTokens ?? [:]
        for token in baseTokens.keys where myTokens[token] == nil { tokens[token] = nil }
        for (token, user) in myTokens where baseTokens[token] == nil { tokens[token] = user }
        return PersistedSnapshot(nextNumber: max(nextNumber, current.nextNumber), records: merged, refreshTokens: tokens)
    }
}

extension EmbeddedOrg {
    /// The file the org persists to in its folder: its state sealed (Core's `SealedFile`, purpose
    /// ``persistedPurpose``, owner `global`) with the key ring's global data key.
    public static let persistedFileName = "org.sealed"
    /// The plain JSON file earlier versions wrote (tokens and records in clear): read once,
    /// rewritten sealed, then overwritten and unlinked.
    public static let legacyFileName = "org.json"
    /// The purpose written in the sealed file's header.
    public static let persistedPurpose = "org-state"
    /// The lock file beside it.
    static let persistLockName = "org.lock"
    /// The largest state file read.
    static let maximumPersistedSize = 256 << 20

    /// Whether `directory` holds a persisted org (sealed, or plain from an earlier version), so
    /// that ``restore(from:keyRing:)`` has something to read. A link there counts: the restore
    /// then refuses it.
    public static func hasPersistedState(in directory: URL) -> Bool {
        [persistedFileName, legacyFileName].contains { name in
            var status = stat()
            return lstat(directory.appendingPathComponent(name).path, &status) == 0
        }
    }

    /// Writes the org's records and its valid refresh tokens to `directory/org.sealed`, sealed
    /// with `keyRing`'s global data key, so a later run can load them: owner-only from the first
    /// byte through Core's `PrivateFile`, into a folder checked like a data home
    /// (`PrivateDirectory`: never a link, the user's, not writable by others; created `0700`).
    /// No token or record is written in clear.
    ///
    /// Two instances of an app sharing the folder lose nothing: under an advisory lock
    /// (`directory/org.lock`), the file is read and what this org changed since it last restored
    /// or persisted is merged over it (records it changed or created, tokens it issued or
    /// revoked); the rest stays as the other instance wrote it. (Two instances that each create
    /// records give them the same ids — the embedded org numbers them itself — and the later
    /// persist's version of such a record wins.) A plain `org.json` of an earlier version is
    /// merged the same way, then overwritten and unlinked once the sealed file is written.
    ///
    /// A state file that cannot be opened — damaged, truncated, sealed with another key, for
    /// another purpose or owner, or not an org state — is an error naming it, and nothing is
    /// overwritten: the data is never replaced by what this instance alone knows.
    ///
    /// - Throws: `DataHomeError` when the folder is refused; `SealedFileError` naming the file
    ///   when it cannot be opened or written (a full disk says so; the old file is left whole);
    ///   ``OrgStateError`` when it opens but holds no org state; `KeyError` when the global data
    ///   key is missing or the key ring refuses it; `FileLockError` when another instance held
    ///   the lock too long (nothing written).
    public func persist(to directory: URL, keyRing: KeyRing) throws {
        let mine = state.withLock { Self.snapshot(of: $0) }
        let base = state.withLock { $0.persisted }
        try PrivateDirectory.create(directory)
        try FileLock.withExclusiveLock(at: directory.appendingPathComponent(Self.persistLockName)) { () throws in
            let stored = try Self.readState(in: directory, keyRing: keyRing)
            let merged = mine.merged(over: stored.snapshot, base: base)
            try Self.writeState(merged, in: directory, key: stored.key)
            if stored.leftoverPlain { try PrivateFile.shred(directory.appendingPathComponent(Self.legacyFileName)) }
        }
        // The next persist merges what changes from here on.
        state.withLock { $0.persisted = mine }
    }

    /// Replaces the org's records (and adds the refresh tokens) persisted in `directory` by
    /// ``persist(to:keyRing:)``, opened with `keyRing`'s global data key. A plain `org.json` of
    /// an earlier version is read once and rewritten sealed (the plain file overwritten and
    /// unlinked).
    /// - Throws: `DataHomeError` when there is no state file, or it or its folder is refused (a
    ///   link, another user's, writable by others) — never read through a link;
    ///   `SealedFileError` naming the file when it is damaged, truncated, sealed with another
    ///   key, for another purpose or owner; ``OrgStateError`` when it holds no org state;
    ///   `KeyError` when the global data key is missing. The org and the files are then left
    ///   as they were.
    public func restore(from directory: URL, keyRing: KeyRing) throws {
        let file = directory.appendingPathComponent(Self.persistedFileName)
        guard try PrivateDirectory.check(directory), Self.hasPersistedState(in: directory) else {
            throw DataHomeError(path: file.path, call: "open", code: ENOENT)
        }
        let snapshot = try FileLock.withExclusiveLock(at: directory.appendingPathComponent(Self.persistLockName)) { () throws -> PersistedSnapshot in
            let stored = try Self.readState(in: directory, keyRing: keyRing)
            guard let snapshot = stored.snapshot else { throw DataHomeError(path: file.path, call: "open", code: ENOENT) }
            // An earlier version's plain file: sealed now, then shredded.
            if stored.fromPlain { try Self.writeState(snapshot, in: directory, key: stored.key) }
            if stored.leftoverPlain { try PrivateFile.shred(directory.appendingPathComponent(Self.legacyFileName)) }
            return snapshot
        }
        state.withLock { state in
            state.records = [:]
            state.order = []
            for stored in snapshot.records {
                let fields = (try? JSONValue(jsonData: Data(stored.fields.utf8)))?.objectValue ?? [:]
                state.records[stored.id] = Record(type: stored.type, orgID: stored.orgID, fields: fields, isDeleted: stored.isDeleted)
                state.order.append(stored.id)
            }
            state.nextNumber = snapshot.nextNumber
            for (token, userID) in snapshot.refreshTokens ?? [:] {
                if let user = users.first(where: { $0.userID == userID }) { state.refreshTokens[token] = user }
            }
            state.persisted = Self.snapshot(of: state)
        }
    }

    /// The org's records and valid refresh tokens, as the state file keeps them.
    static func snapshot(of state: State) -> PersistedSnapshot {
        PersistedSnapshot(nextNumber: state.nextNumber, records: state.order.compactMap { id in
            state.records[id].map { record in
                PersistedSnapshot.StoredRecord(id: id, type: record.type, orgID: record.orgID, isDeleted: record.isDeleted,
                                               fields: String(decoding: JSONValue.object(record.fields).jsonData(), as: UTF8.self))
            }
        }, refreshTokens: state.refreshTokens.mapValues(\.userID))
    }
}
