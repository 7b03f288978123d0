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
    var catalog: StoreCatalog
    /// Where committed catalogs are published for the readers.
    private let published: CatalogBox
    /// The next `_soupEntryId` of each soup table, read from `sqlite_sequence` once a transaction.
    var nextIDs: [String: Int64] = [:]
    var translations = TranslationCache()
    private var savepoints = 0
    /// The last catalog generation handed out: never reused, so that a generation rolled back
    /// cannot name another catalog in a translation cache.
    var generations = 1
    /// A reusable buffer for entries' JSON.
    var buffer: [UInt8] = []

    var file: String { connection.path }

    /// The metadata tables, as the Mobile SDK creates them.
    static let metadataSQL = """
        CREATE TABLE IF NOT EXISTS soup_index_map (soupName TEXT, path TEXT, columnName TEXT, columnType TEXT);
        CREATE TABLE IF NOT EXISTS soup_attrs (id INTEGER PRIMARY KEY AUTOINCREMENT, soupName TEXT);
        CREATE INDEX IF NOT EXISTS soup_attrs_0 ON soup_attrs (soupName);
        """

    /// Opens the database at `path` (the file exists) and checks that it is a SmartStore — or an
    /// empty database, which becomes one. Nothing is written to a file that is neither.
    init(path: String, published: CatalogBox, queryStepBudget: Int = SmartStore.Configuration.defaultQueryStepBudget,
         key: SmartStore.EncryptionKey? = nil) throws(StoreError) {
        do { connection = try SQLiteConnection(path: path, readOnly: false, key: key) } catch { throw StoreError(error, file: path) }
        connection.queryStepBudget = queryStepBudget
        self.published = published
        catalog = StoreCatalog()
        do throws(StoreError) {
            try checkOwnership()
            try pragma("journal_mode = WAL", expect: "wal")
            // The busy timeout was set by the connection as it opened, before any of these.
            try run("PRAGMA synchronous = FULL;")
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
            throw StoreError(error.primary == 26 && !error.wrongKey ? SQLiteFailure(code: error.code, message: "not a SQLite database (\(error.message))") : error,
                             file: file)
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
        // Another instance (a second store on this file, another process) may have written since
        // the last transaction: ids are counted afresh from `sqlite_sequence` under the lock.
        if outer { nextIDs.removeAll() }
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
    func run(_ sql: String) throws(StoreError) {
        do { try connection.execute(sql) } catch { throw StoreError(error, file: file) }
    }

    /// Runs `body`, turning SQLite's failures into store errors about `soup`.
    func wrapped<Result>(soup: String? = nil, _ body: () throws(SQLiteFailure) -> Result) throws(StoreError) -> Result {
        do { return try body() } catch { throw StoreError(error, file: file, soup: soup) }
    }

    // MARK: Queries

    /// A page of `spec`'s results.
    func query(_ spec: QuerySpec, pageIndex: Int, whereArgs: [JSONValue]) throws(StoreError) -> [JSONValue] {
        let query = try QueryCompiler(catalog: catalog, file: file).select(spec, pageIndex: pageIndex, whereArgs: whereArgs, translations: &translations)
        return try QueryRunner.rows(query, on: connection)
    }

    /// The SQL `smartSql` translates to over the soups as they are (from the translation cache),
    /// prepared once to check what a query checks: SQLite accepts it, and it is one read-only
    /// statement.
    func convertSmartSql(_ smartSql: String) throws(StoreError) -> String {
        let sql = try translations.sql(for: smartSql, catalog: catalog, file: file)
        let statement: SQLiteStatement
        do throws(SQLiteFailure) {
            statement = try connection.prepare(sql, cache: false)
        } catch {
            var failure = StoreError(error, file: file, query: smartSql)
            if failure.code == .sqliteError { failure.code = .smartSqlError }
            throw failure
        }
        try QueryRunner.requireOneReadingStatement(statement, smartSql: smartSql, file: file)
        return sql
    }

    /// How many results `spec` has.
    func count(_ spec: QuerySpec, whereArgs: [JSONValue]) throws(StoreError) -> Int {
        let query = try QueryCompiler(catalog: catalog, file: file).count(spec, whereArgs: whereArgs, translations: &translations)
        return try QueryRunner.integer(query, on: connection)
    }
}
