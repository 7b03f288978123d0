import AppKernelCore
import AppKernelREST
import Synchronization
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The org's records and refresh tokens as `org.json` keeps them.
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
    /// The file the org persists to in its folder.
    static let persistedFileName = "org.json"
    /// The lock file beside it.
    static let persistLockName = "org.lock"
    /// The largest `org.json` read.
    static let maximumPersistedSize = 256 << 20

    /// Writes the org's records and its valid refresh tokens to `directory/org.json`, so a later
    /// run can load them: owner-only from the first byte (it holds tokens) through Core's
    /// `PrivateFile`, into a folder checked like a data home (`PrivateDirectory`: never a link,
    /// the user's, not writable by others; created `0700`).
    ///
    /// Two instances of an app sharing the folder lose nothing: under an advisory lock
    /// (`directory/org.lock`), the file is read and what this org changed since it last restored
    /// or persisted is merged over it (records it changed or created, tokens it issued or
    /// revoked); the rest stays as the other instance wrote it. (Two instances that each create
    /// records give them the same ids — the embedded org numbers them itself — and the later
    /// persist's version of such a record wins.) An `org.json` that cannot be read is moved aside
    /// (`org.json.damaged`) and replaced.
    ///
    /// - Throws: `DataHomeError` when the folder is refused or the file cannot be written (a full
    ///   disk says so; the old file is left whole), `FileLockError` when another instance held
    ///   the lock too long (nothing written).
    public func persist(to directory: URL) throws {
        let mine = state.withLock { Self.snapshot(of: $0) }
        let base = state.withLock { $0.persisted }
        try PrivateDirectory.create(directory)
        let file = directory.appendingPathComponent(Self.persistedFileName)
        try FileLock.withExclusiveLock(at: directory.appendingPathComponent(Self.persistLockName)) { () throws in
            var current: PersistedSnapshot?
            if let data = try PrivateFile.read(file, maximumSize: Self.maximumPersistedSize) {
                current = try? JSONDecoder().decode(PersistedSnapshot.self, from: data)
                if current == nil { _ = rename(file.path, file.path + ".damaged") }
            }
            let merged = mine.merged(over: current, base: base)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try PrivateFile.write(encoder.encode(merged), to: file)
        }
        // The next persist merges what changes from here on.
        state.withLock { $0.persisted = mine }
    }

    /// Replaces the org's records (and adds the refresh tokens) persisted in `directory/org.json`.
    /// - Throws: When the file is missing or not a snapshot; `DataHomeError` when it or its folder
    ///   is refused (a link, another user's, writable by others) — never read through a link.
    public func restore(from directory: URL) throws {
        let file = directory.appendingPathComponent(Self.persistedFileName)
        guard try PrivateDirectory.check(directory), let data = try PrivateFile.read(file, maximumSize: Self.maximumPersistedSize) else {
            throw DataHomeError(path: file.path, call: "open", code: ENOENT)
        }
        let snapshot = try JSONDecoder().decode(PersistedSnapshot.self, from: data)
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

    /// The org's records and valid refresh tokens, as `org.json` keeps them.
    static func snapshot(of state: State) -> PersistedSnapshot {
        PersistedSnapshot(nextNumber: state.nextNumber, records: state.order.compactMap { id in
            state.records[id].map { record in
                PersistedSnapshot.StoredRecord(id: id, type: record.type, orgID: record.orgID, isDeleted: record.isDeleted,
                                               fields: String(decoding: JSONValue.object(record.fields).jsonData(), as: UTF8.self))
            }
        }, refreshTokens: state.refreshTokens.mapValues(\.userID))
    }
}
