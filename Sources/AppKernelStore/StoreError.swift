#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a store operation failed, and where: the database file, the soup, the path, the query.
/// Whatever failed left the store as it was: every operation is a transaction (or a savepoint
/// inside ``SmartStore/inTransaction(_:)``), rolled back on error.
///
/// Its ``description`` reads `file: soup 'x': path 'y': reason [query: …]`, leaving out what does
/// not apply:
///
/// ```
/// /data/stores/defaultStore/store.sqlite: soup 'accounts': unknown soup in Smart SQL [query: SELECT {accounts:Name} FROM {accounts}]
/// ```
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The store's directory or file cannot be created or opened (permissions, a missing disk).
        case cannotOpen
        /// The file is not a SQLite database (a text file at the store's path), or its pages are
        /// damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`) — for a sealed store, a page that fails its
        /// authentication tag (flipped bits, pages swapped or cut short: `SQLITE_IOERR_DATA`).
        case corruptDatabase
        /// The file is a SQLite database with tables but without SmartStore's metadata tables
        /// (`soup_attrs`, `soup_index_map`): another program's. It is left untouched.
        case foreignDatabase
        /// The store is sealed (encrypted) and the key given does not open it — or no key was
        /// given, or the key is not 32 bytes. Nothing was read or written: open it with the key
        /// it was created with (``SmartStore/EncryptionKey``).
        case wrongKey
        /// The store's owner has no data key any more: it was destroyed (crypto-shredded) at a
        /// logout or a passcode lockout, so the store is leftover ciphertext nobody can open.
        /// Nothing was opened or created: remove the file (the next launch does).
        case keyDestroyed
        /// The store was closed (by ``SmartStore/close()`` or ``StoreManager/removeStores(for:)``).
        case storeClosed
        /// A store, soup or owner name that cannot be used (empty, or with a `/`).
        case invalidName
        /// A soup spec that cannot be registered: no index, an index path twice.
        case invalidSoupSpec
        /// A soup spec that contradicts the one registered under the same name
        /// (use ``SmartStore/alterSoup(_:indexes:reIndexData:)`` to change indexes).
        case soupSpecMismatch
        /// No soup of that name.
        case unknownSoup
        /// A path that cannot be used: malformed (empty segment, a quote, a brace), or a
        /// `{soup:path:more}` reference.
        case invalidPath
        /// A path that needs an index of a kind the soup lacks: a full-text match on a path
        /// without a `full_text` index, an external-id upsert on an un-indexed path.
        case unindexedPath
        /// An entry that cannot be stored: not a JSON object, a non-finite number, a
        /// `_soupEntryId` that is not an integer, objects and arrays nested deeper than 512 levels.
        case invalidEntry
        /// A stored entry whose JSON cannot be read back (a damaged row): ``StoreError/entryID``
        /// names it. The query that met it fails whole rather than return a page without it;
        /// the others stay readable by id or by queries that do not reach it, and removing or
        /// re-upserting the entry by its id heals the soup.
        case unreadableEntry
        /// An upsert by `_soupEntryId` naming an entry the soup does not have.
        case unknownEntry
        /// An upsert by external id whose value several entries share.
        case duplicateExternalId
        /// An upsert by external id of an entry without a value at that path.
        case missingExternalId
        /// A query spec that cannot run: a page size below 1, a negative page index, Smart SQL
        /// that is not one SELECT, `whereArgs` on a non-smart spec.
        case invalidQuery
        /// Smart SQL that SQLite refuses (a syntax error, an unknown column or function):
        /// SQLite's message, with the query.
        case smartSqlError
        /// A store method called on the store inside ``SmartStore/inTransaction(_:)`` on the same
        /// thread (it would deadlock): use the transaction's methods there.
        case nestedTransaction
        /// The async query's task was cancelled: the query was interrupted.
        case cancelled
        /// A query ran more SQLite steps than ``SmartStore/Configuration/queryStepBudget``
        /// allows (an endless `WITH RECURSIVE`, a runaway join): it was stopped.
        case queryBudgetExceeded
        /// The disk (or the database's `max_page_count`) is full (`SQLITE_FULL`, `ENOSPC`):
        /// nothing was written.
        case diskFull
        /// Any other SQLite failure (a full disk, an I/O error), with its result code.
        case sqliteError
    }

    /// What kind of problem it is.
    public var code: Code
    /// The reason, in words: what is wrong and what is expected instead.
    public var reason: String
    /// The database file's path, when the store is known.
    public var file: String?
    /// The soup at fault, when one is.
    public var soup: String?
    /// The path at fault (an index path, a query path), when one is.
    public var path: String?
    /// The query at fault (Smart SQL as written), when one is.
    public var query: String?
    /// SQLite's extended result code, when SQLite reported the failure.
    public var sqliteCode: Int32?
    /// The `_soupEntryId` of the entry at fault, when one is (``Code/unreadableEntry``).
    public var entryID: Int?

    /// Creates an error.
    public init(code: Code, reason: String, file: String? = nil, soup: String? = nil, path: String? = nil, query: String? = nil,
                sqliteCode: Int32? = nil, entryID: Int? = nil) {
        self.code = code
        self.reason = reason
        self.file = file
        self.soup = soup
        self.path = path
        self.query = query
        self.sqliteCode = sqliteCode
        self.entryID = entryID
    }

    /// `file: soup 'x': entry n: path 'y': reason [query: …]`, with what is unknown left out.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let soup { parts.append("soup '\(soup)'") }
        if let entryID { parts.append("entry \(entryID)") }
        if let path { parts.append("path '\(path)'") }
        parts.append(reason)
        return parts.joined(separator: ": ") + (query.map { " [query: \($0)]" } ?? "") + (sqliteCode.map { " (SQLite \($0))" } ?? "")
    }
}

extension StoreError {
    /// Maps a SQLite failure: a sealed store that the key does not open to ``Code/wrongKey``,
    /// damaged or foreign files (and sealed pages failing their tag) to ``Code/corruptDatabase``, an interrupt to
    /// ``Code/cancelled``, a full disk (`SQLITE_FULL`, or an I/O error whose `errno` is `ENOSPC`)
    /// to ``Code/diskFull`` with what to do, the rest to ``Code/sqliteError``.
    init(_ failure: SQLiteFailure, file: String?, soup: String? = nil, query: String? = nil) {
        let code: Code = switch failure.primary {
        case 26 /* SQLITE_NOTADB */ where failure.wrongKey: .wrongKey
        case 26 /* SQLITE_NOTADB */, 11 /* SQLITE_CORRUPT */: .corruptDatabase
        // A sealed page that fails its authentication tag: damaged or tampered with.
        case 10 /* SQLITE_IOERR */ where failure.code == 8202 /* SQLITE_IOERR_DATA */: .corruptDatabase
        case 9 /* SQLITE_INTERRUPT */: .cancelled
        case 14 /* SQLITE_CANTOPEN */: .cannotOpen
        case 21 /* SQLITE_MISUSE */ where failure.message == "the store is closed": .storeClosed
        case 13 /* SQLITE_FULL */: .diskFull
        case 10 /* SQLITE_IOERR */ where failure.systemErrno == ENOSPC: .diskFull
        default: .sqliteError
        }
        let reason = code == .diskFull
            ? "disk full (\(failure.message)): nothing was written; free space on the disk that holds the store (or remove entries), then retry"
            : failure.message
        self.init(code: code, reason: reason, file: file, soup: soup, query: query, sqliteCode: failure.code)
    }
}
