import AppKernelCore
import Foundation

/// The writer side of a store: the read-write connection, the soups' catalog, and every
/// operation. Used only under ``SmartStore``'s writer mutex, one thread at a time.
///
/// Every operation is atomic: ``atomic(_:)`` opens a transaction (`BEGIN IMMEDIATE`), or a
/// savepoint when a transaction is already open (inside ``SmartStore/inTransaction(_:)``), and
/// rolls it back — with the in-memory catalog and id counters — on any error.
final class StoreEngine {
    let connection: SQLiteConnection
    private(set) var catalog: StoreCatalog
    /// Where committed catalogs are published for the readers.
    private let published: CatalogBox
    /// The next `_soupEntryId` of each soup table, once read from `sqlite_sequence`.
    private var nextIDs: [String: Int64] = [:]
    private var translations = TranslationCache()
    private var savepoints = 0
    /// The last catalog generation handed out: never reused, so that a generation rolled back
    /// cannot name another catalog in a translation cache.
    private var generations = 1
    /// A reusable buffer for entries' JSON.
    private var buffer: [UInt8] = []

    var file: String { connection.path }

    /// The metadata tables, as the Mobile SDK creates them.
    static let metadataSQL = """
        CREATE TABLE IF NOT EXISTS soup_index_map (soupName TEXT, path TEXT, columnName TEXT, columnType TEXT);
        CREATE TABLE IF NOT EXISTS soup_attrs (id INTEGER PRIMARY KEY AUTOINCREMENT, soupName TEXT);
        CREATE INDEX IF NOT EXISTS soup_attrs_0 ON soup_attrs (soupName);
        """

    /// Opens the database at `path` (the file exists) and checks that it is a SmartStore — or an
    /// empty database, which becomes one. Nothing is written to a file that is neither.
    init(path: String, published: CatalogBox) throws(StoreError) {
        do { connection = try SQLiteConnection(path: path, readOnly: false) } catch { throw StoreError(error, file: path) }
        self.published = published
        catalog = StoreCatalog()
        do throws(StoreError) {
            try checkOwnership()
            try pragma("journal_mode = WAL", expect: "wal")
            try run("PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;")
            try atomic { () throws(StoreError) in try run(Self.metadataSQL) }
            catalog = StoreCatalog(soups: try loadSoups(), generation: 1)
            published.publish(catalog)
        } catch {
            connection.close()
            throw error
        }
    }

    // MARK: Opening

    /// Throws unless the file is SmartStore's (its metadata tables exist) or holds no table.
    private func checkOwnership() throws(StoreError) {
        let names: [String]
        do throws(SQLiteFailure) {
            let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'", cache: false)
            var found: [String] = []
            while try statement.step() { found.append(String(decoding: statement.bytes(0) ?? [], as: UTF8.self)) }
            names = found
        } catch {
            throw StoreError(error.primary == 26 ? SQLiteFailure(code: error.code, message: "not a SQLite database (\(error.message))") : error, file: file)
        }
        let tables = Set(names.filter { !$0.hasPrefix("sqlite_") })
        guard tables.isEmpty || (tables.contains("soup_attrs") && tables.contains("soup_index_map")) else {
            throw StoreError(code: .foreignDatabase, reason: "a SQLite database without SmartStore's tables (soup_attrs, soup_index_map); it has "
                             + tables.sorted().joined(separator: ", ") + "; left untouched", file: file)
        }
    }

    private func pragma(_ pragma: String, expect: String) throws(StoreError) {
        let value = try wrapped { () throws(SQLiteFailure) in
            let statement = try connection.prepare("PRAGMA \(pragma)", cache: false)
            return try statement.step() ? String(decoding: statement.bytes(0) ?? [], as: UTF8.self) : ""
        }
        guard value.lowercased() == expect else {
            throw StoreError(code: .cannotOpen, reason: "PRAGMA \(pragma) answered '\(value)', not '\(expect)'", file: file)
        }
    }

    private func loadSoups() throws(StoreError) -> SoupCatalog {
        try wrapped { () throws(SQLiteFailure) -> SoupCatalog in
            var tables: [String: String] = [:]
            let soups = try connection.prepare("SELECT id, soupName FROM soup_attrs", cache: false)
            while try soups.step() { tables[String(decoding: soups.bytes(1) ?? [], as: UTF8.self)] = "TABLE_\(soups.int64(0))" }
            var indexes: [String: [SoupIndex]] = [:]
            let map = try connection.prepare("SELECT soupName, path, columnName, columnType FROM soup_index_map ORDER BY rowid", cache: false)
            while try map.step() {
                let text = { (column: Int) in String(decoding: map.bytes(column) ?? [], as: UTF8.self) }
                guard let type = IndexType(rawValue: text(3)) else {
                    throw SQLiteFailure(code: 11, message: "soup_index_map names an unknown index type '\(text(3))' for soup '\(text(0))'")
                }
                indexes[text(0), default: []].append(SoupIndex(path: text(1), type: type, columnName: text(2)))
            }
            var catalog: SoupCatalog = [:]
            for (name, table) in tables { catalog[name] = SoupInfo(name: name, tableName: table, indexes: indexes[name] ?? []) }
            return catalog
        }
    }

    func close() {
        connection.close()
    }

    // MARK: Transactions

    /// Runs `body` atomically: in a transaction, or in a savepoint when one is open. On any error
    /// the database, the catalog and the id counters go back to how they were.
    func atomically<Result>(_ body: () throws -> Result) throws -> Result {
        let outer = !connection.inTransaction
        let name = "s\(savepoints)"
        try run(outer ? "BEGIN IMMEDIATE" : "SAVEPOINT \(name)")
        savepoints += 1
        defer { savepoints -= 1 }
        let before = catalog
        do {
            let result = try body()
            try run(outer ? "COMMIT" : "RELEASE \(name)")
            if outer, catalog.generation != published.generation { published.publish(catalog) }
            return result
        } catch {
            try? run(outer ? "ROLLBACK" : "ROLLBACK TO \(name); RELEASE \(name)")
            if catalog.generation != before.generation { connection.clearStatementCache() }
            catalog = before
            nextIDs.removeAll()
            throw error
        }
    }

    /// ``atomically(_:)`` for store operations, whose only errors are store errors.
    func atomic<Result>(_ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        do { return try atomically(body) } catch let error as StoreError { throw error } catch {
            throw StoreError(code: .sqliteError, reason: "\(error)", file: file)
        }
    }

    /// Runs SQL without results.
    private func run(_ sql: String) throws(StoreError) {
        do { try connection.execute(sql) } catch { throw StoreError(error, file: file) }
    }

    /// Runs `body`, turning SQLite's failures into store errors about `soup`.
    private func wrapped<Result>(soup: String? = nil, _ body: () throws(SQLiteFailure) -> Result) throws(StoreError) -> Result {
        do { return try body() } catch { throw StoreError(error, file: file, soup: soup) }
    }

    // MARK: Soups

    /// The registered soup `name`.
    func soup(_ name: String) throws(StoreError) -> SoupInfo {
        guard let soup = catalog.soups[name] else { throw StoreError(code: .unknownSoup, reason: "unknown soup", file: file, soup: name) }
        return soup
    }

    /// Checks a soup spec: a name, at least one index, valid and distinct paths.
    private func validate(_ spec: SoupSpec) throws(StoreError) {
        let fail = { (code: StoreError.Code, path: String?, reason: String) in StoreError(code: code, reason: reason, file: self.file, soup: spec.name, path: path) }
        guard !spec.name.isEmpty else { throw fail(.invalidName, nil, "a soup needs a name") }
        guard !spec.indexes.isEmpty else { throw fail(.invalidSoupSpec, nil, "a soup needs at least one index") }
        var seen: Set<String> = []
        for index in spec.indexes {
            guard EntryPath.isValid(index.path) else { throw fail(.invalidPath, index.path, "not a valid index path") }
            guard SoupColumns.column(forReservedPath: index.path) == nil else { throw fail(.invalidSoupSpec, index.path, "a reserved path cannot be indexed") }
            guard seen.insert(index.path).inserted else { throw fail(.invalidSoupSpec, index.path, "the path is indexed twice") }
        }
    }

    /// Registers `spec`: the same spec again is a no-op; a different one is an error.
    func registerSoup(_ spec: SoupSpec) throws(StoreError) {
        try validate(spec)
        if let existing = catalog.soups[spec.name] {
            guard Set(existing.specs) == Set(spec.indexes) else {
                throw StoreError(code: .soupSpecMismatch,
                                 reason: "registered with indexes \(Self.describe(existing.specs)), not \(Self.describe(spec.indexes)); alterSoup changes them",
                                 file: file, soup: spec.name)
            }
            return
        }
        try atomic { () throws(StoreError) in
            let id = try wrapped(soup: spec.name) { () throws(SQLiteFailure) -> Int64 in
                let statement = try connection.prepare("INSERT INTO soup_attrs (soupName) VALUES (?) RETURNING id")
                return try statement.using([.text(spec.name)]) { statement throws(SQLiteFailure) in
                    _ = try statement.step()
                    return statement.int64(0)
                }
            }
            try createTable(for: spec, tableName: "TABLE_\(id)")
        }
    }

    private static func describe(_ specs: [IndexSpec]) -> String {
        "[" + specs.map { "\($0.path) (\($0.type.rawValue))" }.joined(separator: ", ") + "]"
    }

    /// Creates a soup's table, database indexes, full-text table and `soup_index_map` rows, and
    /// puts it in the catalog. Column names follow the SDK: `TABLE_n_i` for the i-th index.
    @discardableResult
    private func createTable(for spec: SoupSpec, tableName table: String) throws(StoreError) -> SoupInfo {
        let indexes = spec.indexes.enumerated().map { offset, index in
            SoupIndex(path: index.path, type: index.type,
                      columnName: index.type == .json1 ? EntryPath.jsonExtract(index.path, table: nil) : "\(table)_\(offset)")
        }
        let info = SoupInfo(name: spec.name, tableName: table, indexes: indexes)
        var sql = "CREATE TABLE \(table) (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT, created INTEGER, lastModified INTEGER"
        for index in indexes where index.hasColumn { sql += ", \(index.columnName) \(index.columnType)" }
        sql += ");\n"
        sql += "CREATE INDEX \(table)_created_idx ON \(table) (created);\n"
        sql += "CREATE INDEX \(table)_lastModified_idx ON \(table) (lastModified);\n"
        for (offset, index) in indexes.enumerated() { sql += "CREATE INDEX \(table)_\(offset)_idx ON \(table) (\(index.columnName));\n" }
        let fullText = indexes.filter { $0.type == .fullText }.map(\.columnName)
        if !fullText.isEmpty { sql += "CREATE VIRTUAL TABLE \(info.ftsTableName) USING fts5(\(fullText.joined(separator: ", ")));\n" }
        try run(sql)
        try wrapped(soup: spec.name) { () throws(SQLiteFailure) in
            let insert = try connection.prepare("INSERT INTO soup_index_map (soupName, path, columnName, columnType) VALUES (?, ?, ?, ?)")
            for index in indexes {
                try insert.using([.text(spec.name), .text(index.path), .text(index.columnName), .text(index.type.rawValue)]) { statement throws(SQLiteFailure) in try statement.run() }
            }
        }
        setSoup(info, named: spec.name)
        return info
    }

    private func setSoup(_ info: SoupInfo?, named name: String) {
        catalog.soups[name] = info
        generations += 1
        catalog.generation = generations
        connection.clearStatementCache()
    }

    /// Drops a soup's tables and metadata; no-op for an unknown soup (as in the SDK).
    func removeSoup(_ name: String) throws(StoreError) {
        guard let info = catalog.soups[name] else { return }
        try atomic { () throws(StoreError) in
            try run("DROP TABLE IF EXISTS \(info.tableName); DROP TABLE IF EXISTS \(info.ftsTableName);")
            try deleteMetadata(of: name, attributes: true)
            nextIDs[info.tableName] = nil
            setSoup(nil, named: name)
        }
    }

    private func deleteMetadata(of name: String, attributes: Bool) throws(StoreError) {
        try wrapped(soup: name) { () throws(SQLiteFailure) in
            try connection.prepare("DELETE FROM soup_index_map WHERE soupName = ?").using([.text(name)]) { statement throws(SQLiteFailure) in try statement.run() }
            if attributes {
                try connection.prepare("DELETE FROM soup_attrs WHERE soupName = ?").using([.text(name)]) { statement throws(SQLiteFailure) in try statement.run() }
            }
        }
    }

    /// Removes every entry of a soup (ids are not reused afterwards).
    func clearSoup(_ name: String) throws(StoreError) {
        let info = try soup(name)
        try atomic { () throws(StoreError) in
            try run("DELETE FROM \(info.tableName);" + (info.hasFullText ? "DELETE FROM \(info.ftsTableName);" : ""))
        }
    }

    /// Changes a soup's indexes, keeping its entries (the SDK's `SFAlterSoupLongOperation`, as one
    /// transaction): the table is rebuilt with the new index columns, values of paths indexed
    /// before with the same column type are copied, the others computed from the entries when
    /// `reIndexData` (else left NULL, as in the SDK), and the full-text table rebuilt.
    func alterSoup(_ name: String, indexes: [IndexSpec], reIndexData: Bool) throws(StoreError) {
        let old = try soup(name)
        let spec = SoupSpec(name: name, indexes: indexes)
        try validate(spec)
        guard Set(old.specs) != Set(indexes) else { return }
        let table = old.tableName
        try atomic { () throws(StoreError) in
            var drop = "ALTER TABLE \(table) RENAME TO \(table)_old;\n"
            drop += "DROP INDEX IF EXISTS \(table)_created_idx; DROP INDEX IF EXISTS \(table)_lastModified_idx;\n"
            for offset in old.indexes.indices { drop += "DROP INDEX IF EXISTS \(table)_\(offset)_idx;\n" }
            if old.hasFullText { drop += "DROP TABLE \(old.ftsTableName);\n" }
            try run(drop)
            try deleteMetadata(of: name, attributes: false)
            let new = try createTable(for: spec, tableName: table)
            // Copy the core columns and the index columns kept with the same column type.
            var oldColumns = ["id", "created", "lastModified", "soup"], newColumns = oldColumns
            for index in new.indexes where index.hasColumn {
                guard let previous = old.index(for: index.path), previous.hasColumn, previous.columnType == index.columnType else { continue }
                oldColumns.append(previous.columnName)
                newColumns.append(index.columnName)
            }
            try run("""
                INSERT INTO \(table) (\(newColumns.joined(separator: ", "))) SELECT \(oldColumns.joined(separator: ", ")) FROM \(table)_old;
                INSERT INTO sqlite_sequence (name, seq) SELECT '\(table)', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '\(table)');
                UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = '\(table)_old'), 0)) WHERE name = '\(table)';
                DROP TABLE \(table)_old;
                """)
            if reIndexData {
                // As in the SDK: every path whose (path, type) was not indexed before.
                try reIndex(new, indexes: new.indexes.filter { $0.hasColumn && !old.specs.contains($0.spec) })
            }
            if new.hasFullText {
                let columns = new.indexes.filter { $0.type == .fullText }.map(\.columnName).joined(separator: ", ")
                try run("INSERT INTO \(new.ftsTableName) (rowid, \(columns)) SELECT id, \(columns) FROM \(table);")
            }
            nextIDs[table] = nil
        }
    }

    /// Recomputes `indexes`' column values of every entry of `soup` from its JSON.
    private func reIndex(_ soup: SoupInfo, indexes: [SoupIndex]) throws(StoreError) {
        guard !indexes.isEmpty else { return }
        try wrapped(soup: soup.name) { () throws(SQLiteFailure) in
            // Read first, then update: the rows are not changed under a running scan.
            var rows: [(Int64, [UInt8])] = []
            let select = try connection.prepare("SELECT id, soup FROM \(soup.tableName)", cache: false)
            while try select.step() { rows.append((select.int64(0), select.bytes(1) ?? [])) }
            let update = try connection.prepare("UPDATE \(soup.tableName) SET "
                                                + indexes.map { "\($0.columnName) = ?" }.joined(separator: ", ") + " WHERE id = ?", cache: false)
            for (id, json) in rows {
                guard case .object(let entry)? = StoreJSON.decode(json) else {
                    throw SQLiteFailure(code: 11, message: "entry \(id) of soup '\(soup.name)' is not a JSON object")
                }
                try update.using(indexes.map { EntryPath.sqlValue(EntryPath.project(entry, $0.segments)) } + [.integer(id)]) { statement throws(SQLiteFailure) in
                    try statement.run()
                }
            }
        }
    }

    // MARK: Entries

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
    func upsert(_ entries: [[String: JSONValue]], into name: String, match: Match) throws(StoreError) -> [[String: JSONValue]] {
        let info = try soup(name)
        var lookup: (SoupIndex, String)?
        if case .externalID(let path) = match {
            guard EntryPath.isValid(path) else { throw StoreError(code: .invalidPath, reason: "not a valid external id path", file: file, soup: name, path: path) }
            guard let index = info.index(for: path) else {
                throw StoreError(code: .unindexedPath, reason: "an external id path must be indexed", file: file, soup: name, path: path)
            }
            lookup = (index, "SELECT id FROM \(info.tableName) WHERE \(index.columnName) = ? LIMIT 2")
        }
        return try atomic { () throws(StoreError) -> [[String: JSONValue]] in
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
            var stored: [[String: JSONValue]] = []
            stored.reserveCapacity(entries.count)
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
                var result = entry
                result.reserveCapacity(entry.count + 2)
                result[SoupColumns.entryIDPath] = .int(Int(id))
                result[SoupColumns.lastModifiedPath] = .int(now)
                stored.append(result)
            }
            if let next { nextIDs[info.tableName] = next }
            return stored
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
    /// reused), counted in memory while the engine writes.
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
        let query = CompiledQuery(sql: "SELECT soup FROM \(info.tableName) WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
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

    // MARK: Queries

    /// A page of `spec`'s results.
    func query(_ spec: QuerySpec, pageIndex: Int, whereArgs: [JSONValue]) throws(StoreError) -> [JSONValue] {
        let query = try QueryCompiler(catalog: catalog, file: file).select(spec, pageIndex: pageIndex, whereArgs: whereArgs, translations: &translations)
        return try QueryRunner.rows(query, on: connection)
    }

    /// How many results `spec` has.
    func count(_ spec: QuerySpec, whereArgs: [JSONValue]) throws(StoreError) -> Int {
        let query = try QueryCompiler(catalog: catalog, file: file).count(spec, whereArgs: whereArgs, translations: &translations)
        return try QueryRunner.integer(query, on: connection)
    }
}
