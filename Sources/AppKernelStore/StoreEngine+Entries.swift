import AppKernelCore
import Foundation

/// Entries: upserting, retrieving and removing them.
extension StoreEngine {
    /// How an upsert finds the entry an entry replaces.
    enum Match {
        /// By `_soupEntryId` (an entry without one is new).
        case entryID
        /// By the value at an indexed path.
        case externalID(String)
        /// Never: every entry is new.
        case none
    }

    /// Inserts or updates `entries`, all or none; returns them as stored, with `_soupEntryId`
    /// and `_soupLastModifiedDate`.
    func upsert(_ entries: [[String: JSONValue]], into name: String, match: Match) throws(StoreError) -> StoredEntries {
        let info = try soup(name)
        // Before anything is written (and before any recursive walk of an entry): an entry
        // deeper than the reader reads back would poison every query of the soup.
        let limit = JSONValue.maximumNestingDepth
        for (offset, entry) in entries.enumerated() {
            guard StoreJSON.depth(of: .object(entry), limit: limit) <= limit else {
                throw StoreError(code: .invalidEntry, reason: "entry \(offset) nests objects and arrays more than \(limit) levels deep"
                                 + " (the entry itself is one level); the limit is \(limit), the JSON reader's, and cannot be changed", file: file, soup: name)
            }
        }
        var lookup: (SoupIndex, String)?
        if case .externalID(let path) = match {
            guard EntryPath.isValid(path) else { throw StoreError(code: .invalidPath, reason: "not a valid external id path", file: file, soup: name, path: path) }
            guard let index = info.index(for: path) else {
                throw StoreError(code: .unindexedPath, reason: "an external id path must be indexed", file: file, soup: name, path: path)
            }
            lookup = (index, "SELECT id FROM \(info.tableName) WHERE \(index.columnName) = ? LIMIT 2")
        }
        return try atomic { () throws(StoreError) -> StoredEntries in
            let now = Self.nowMilliseconds()
            let columns = info.indexes.filter(\.hasColumn).map(\.segments)
            let fullText = info.indexes.filter { $0.type == .fullText }.map(\.segments)
            let sql = Self.writeSQL(info, columns: info.indexes.filter(\.hasColumn), fullText: info.indexes.filter { $0.type == .fullText })
            // Prepared (or taken from the cache) once for the whole batch.
            let statements = try wrapped(soup: name) { () throws(SQLiteFailure) in
                (insert: try connection.prepare(sql.insert), update: try connection.prepare(sql.update),
                 ftsInsert: try sql.fts.map { fts throws(SQLiteFailure) in try connection.prepare(fts.insert) },
                 ftsUpdate: try sql.fts.map { fts throws(SQLiteFailure) in try connection.prepare(fts.update) })
            }
            var next: Int64?
            var ids: [Int] = []
            ids.reserveCapacity(entries.count)
            for (offset, entry) in entries.enumerated() {
                var existing: Int64?
                switch match {
                case .none: existing = nil
                case .entryID: existing = try entryID(of: entry, soup: name, offset: offset)
                case .externalID(let path): existing = try lookUp(entry, offset: offset, in: info, path: path, lookup: lookup)
                }
                let id: Int64
                if let existing { id = existing } else {
                    if next == nil { next = try nextID(info) }
                    id = next!
                    next = id + 1
                }
                buffer.removeAll(keepingCapacity: true)
                do throws(StoreJSON.EncodingFailure) {
                    try StoreJSON.encode(entry, entryID: Int(id), lastModified: now, into: &buffer)
                } catch {
                    throw StoreError(code: .invalidEntry, reason: "entry \(offset) has a non-finite number (JSON has none)", file: file, soup: name, path: error.keyPath)
                }
                var values: [SQLValue] = []
                values.reserveCapacity(columns.count + 4)
                if existing == nil { values += [.integer(id), .utf8(buffer), .integer(Int64(now)), .integer(Int64(now))] } else { values += [.utf8(buffer), .integer(Int64(now))] }
                for segments in columns { values.append(EntryPath.sqlValue(EntryPath.project(entry, segments))) }
                if existing != nil { values.append(.integer(id)) }
                try run(existing == nil ? statements.insert : statements.update, values, soup: name)
                if existing != nil, connection.changes == 0 {
                    throw StoreError(code: .unknownEntry, reason: "entry \(offset)'s _soupEntryId \(id) is not in the soup", file: file, soup: name)
                }
                if let ftsInsert = statements.ftsInsert, let ftsUpdate = statements.ftsUpdate {
                    let ftsValues = fullText.map { EntryPath.sqlValue(EntryPath.project(entry, $0)) }
                    try run(existing == nil ? ftsInsert : ftsUpdate, existing == nil ? [.integer(id)] + ftsValues : ftsValues + [.integer(id)], soup: name)
                }
                ids.append(Int(id))
            }
            if let next { nextIDs[info.tableName] = next }
            return StoredEntries(entries: entries, soupEntryIds: ids, lastModifiedDate: now)
        }
    }

    /// Runs a prepared statement that returns no rows.
    private func run(_ statement: SQLiteStatement, _ values: [SQLValue], soup: String) throws(StoreError) {
        try wrapped(soup: soup) { () throws(SQLiteFailure) in try statement.using(values) { statement throws(SQLiteFailure) in try statement.run() } }
    }

    /// The id of the entry whose external id (the value at `path`) `entry` has, if any.
    private func lookUp(_ entry: [String: JSONValue], offset: Int, in info: SoupInfo, path: String, lookup: (SoupIndex, String)?) throws(StoreError) -> Int64? {
        guard let (index, select) = lookup, let key = EntryPath.project(entry, index.segments), key != .null else {
            throw StoreError(code: .missingExternalId, reason: "entry \(offset) has no value at the external id path", file: file, soup: info.name, path: path)
        }
        let ids = try wrapped(soup: info.name) { () throws(SQLiteFailure) -> [Int64] in
            try connection.prepare(select).using([EntryPath.sqlValue(key)]) { statement throws(SQLiteFailure) in
                var ids: [Int64] = []
                while try statement.step() { ids.append(statement.int64(0)) }
                return ids
            }
        }
        guard ids.count < 2 else {
            throw StoreError(code: .duplicateExternalId, reason: "several entries (\(ids.map(String.init).joined(separator: ", ")), …) have \(key) at the external id path",
                             file: file, soup: info.name, path: path)
        }
        return ids.first
    }

    /// The INSERT and UPDATE statements of a soup (and of its full-text table).
    private static func writeSQL(_ info: SoupInfo, columns: [SoupIndex], fullText: [SoupIndex])
        -> (insert: String, update: String, fts: (insert: String, update: String)?) {
        let names = columns.map(\.columnName)
        let insert = "INSERT INTO \(info.tableName) (id, soup, created, lastModified" + names.map { ", " + $0 }.joined()
            + ") VALUES (?, ?, ?, ?" + String(repeating: ", ?", count: names.count) + ")"
        let update = "UPDATE \(info.tableName) SET soup = ?, lastModified = ?" + names.map { ", \($0) = ?" }.joined() + " WHERE id = ?"
        guard !fullText.isEmpty else { return (insert, update, nil) }
        let ftsNames = fullText.map(\.columnName)
        return (insert, update, ("INSERT INTO \(info.ftsTableName) (rowid, \(ftsNames.joined(separator: ", "))) VALUES (?" + String(repeating: ", ?", count: ftsNames.count) + ")",
                                 "UPDATE \(info.ftsTableName) SET " + ftsNames.map { "\($0) = ?" }.joined(separator: ", ") + " WHERE rowid = ?"))
    }

    /// An entry's `_soupEntryId`: nil when absent or null; an integer otherwise.
    private func entryID(of entry: [String: JSONValue], soup: String, offset: Int) throws(StoreError) -> Int64? {
        switch entry[SoupColumns.entryIDPath] {
        case nil, .null?: return nil
        case .int(let id)?: return Int64(id)
        case .double(let id)? where id.rounded() == id && abs(id) < 9e15: return Int64(id)
        case let other?:
            throw StoreError(code: .invalidEntry, reason: "entry \(offset)'s _soupEntryId is \(other), not an integer", file: file, soup: soup,
                             path: SoupColumns.entryIDPath)
        }
    }

    /// The next id of a soup's table: one past `sqlite_sequence`'s (AUTOINCREMENT: ids are never
    /// reused), counted in memory for the rest of the transaction.
    private func nextID(_ info: SoupInfo) throws(StoreError) -> Int64 {
        if let next = nextIDs[info.tableName] { return next }
        let last = try wrapped(soup: info.name) { () throws(SQLiteFailure) -> Int64 in
            try connection.prepare("SELECT seq FROM sqlite_sequence WHERE name = ?").using([.text(info.tableName)]) { statement throws(SQLiteFailure) in
                try statement.step() ? statement.int64(0) : 0
            }
        }
        return last + 1
    }

    static func nowMilliseconds() -> Int {
        Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The entries with `ids` (those that exist), by id.
    func retrieve(_ ids: [Int64], from name: String) throws(StoreError) -> [[String: JSONValue]] {
        let info = try soup(name)
        let query = CompiledQuery(sql: "SELECT soup, id FROM \(info.tableName) WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
                                  binds: [Self.idList(ids)], returnsEntries: true, soup: name)
        return try QueryRunner.rows(query, on: connection).compactMap(\.objectValue)
    }

    /// Removes the entries with `ids`; returns how many there were.
    @discardableResult
    func remove(_ ids: [Int64], from name: String) throws(StoreError) -> Int {
        let info = try soup(name)
        return try atomic { () throws(StoreError) -> Int in
            try wrapped(soup: name) { () throws(SQLiteFailure) -> Int in
                let list = Self.idList(ids)
                try connection.prepare("DELETE FROM \(info.tableName) WHERE id IN (SELECT value FROM json_each(?))").using([list]) { statement throws(SQLiteFailure) in
                    try statement.run()
                }
                let removed = connection.changes
                if info.hasFullText {
                    try connection.prepare("DELETE FROM \(info.ftsTableName) WHERE rowid IN (SELECT value FROM json_each(?))").using([list]) { statement throws(SQLiteFailure) in
                        try statement.run()
                    }
                }
                return removed
            }
        }
    }

    /// Removes the entries of `spec`'s first page (up to its page size, as in the SDK).
    @discardableResult
    func remove(matching spec: QuerySpec, from name: String) throws(StoreError) -> Int {
        _ = try soup(name)
        if spec.queryType != .smart, let queried = spec.soupName, queried != name {
            throw StoreError(code: .invalidQuery, reason: "the query is over soup '\(queried)', not the soup entries are removed from", file: file, soup: name)
        }
        return try atomic { () throws(StoreError) -> Int in
            let query = try QueryCompiler(catalog: catalog, file: file).ids(spec, translations: &translations)
            return try remove(QueryRunner.integers(query, on: connection), from: name)
        }
    }

    private static func idList(_ ids: [Int64]) -> SQLValue {
        .text("[" + ids.map(String.init).joined(separator: ",") + "]")
    }
}
