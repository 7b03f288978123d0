import AppKernelCore
import Foundation

/// A query spec turned into SQL over one catalog.
struct CompiledQuery {
    /// The SQL to run.
    var sql: String
    /// Its parameters.
    var binds: [SQLValue]
    /// Whether each row is one entry (column 0 holds its JSON) rather than an array of values.
    var returnsEntries: Bool
    /// The soup queried, for errors (nil for Smart SQL).
    var soup: String?
    /// The Smart SQL as written, for errors.
    var smartSql: String?
}

/// Smart SQL translations kept per catalog generation (the SDK's `SFSmartSqlCache`).
struct TranslationCache {
    private var generation = -1
    private var translations: [String: String] = [:]

    /// The translation of `smartSql` over `catalog`, from the cache when it was made over the
    /// same generation of the catalog.
    mutating func sql(for smartSql: String, catalog: StoreCatalog, file: String?) throws(StoreError) -> String {
        if generation != catalog.generation {
            translations.removeAll()
            generation = catalog.generation
        }
        if let sql = translations[smartSql] { return sql }
        let sql = try SmartSqlTranslator.translate(smartSql, catalog: catalog.soups, file: file)
        if translations.count > 256 { translations.removeAll() }
        translations[smartSql] = sql
        return sql
    }
}

/// The soups of a store and a number that changes whenever they do (for caches).
struct StoreCatalog: Sendable {
    /// Every soup by name.
    var soups: SoupCatalog = [:]
    /// Bumped on every change.
    var generation = 0
}

/// Builds the SQL of query specs (the SDK's `computeSmartAndCountAndIdsSql`, straight to SQL
/// rather than through Smart SQL) and runs it on a connection.
struct QueryCompiler {
    let catalog: StoreCatalog
    let file: String?

    private func error(_ code: StoreError.Code, _ reason: String, soup: String? = nil, path: String? = nil, query: String? = nil) -> StoreError {
        StoreError(code: code, reason: reason, file: file, soup: soup, path: path, query: query)
    }

    /// The rows a page skips (`pageSize × pageIndex`), the arguments checked before any
    /// arithmetic: a page size of at least 1, a page index of at least 0, and an offset that fits
    /// a SQLite integer (`Int64`).
    func offset(_ spec: QuerySpec, pageIndex: Int) throws(StoreError) -> Int {
        guard spec.pageSize >= 1 else {
            throw error(.invalidQuery, "pageSize \(spec.pageSize) is out of range: it must be at least 1", soup: spec.soupName, query: spec.smartSqlSource)
        }
        guard pageIndex >= 0 else {
            throw error(.invalidQuery, "pageIndex \(pageIndex) is negative: it must be at least 0", soup: spec.soupName, query: spec.smartSqlSource)
        }
        let (offset, overflow) = spec.pageSize.multipliedReportingOverflow(by: pageIndex)
        guard !overflow, offset <= Int(Int64.max) else {
            throw error(.invalidQuery, "pageIndex \(pageIndex) is out of range: with pageSize \(spec.pageSize) it must be at most \(Int(Int64.max) / spec.pageSize)"
                        + " (pageSize × pageIndex at most \(Int64.max))", soup: spec.soupName, query: spec.smartSqlSource)
        }
        return offset
    }

    /// The page `pageIndex` of `spec`'s results.
    func select(_ spec: QuerySpec, pageIndex: Int, whereArgs: [JSONValue], translations: inout TranslationCache) throws(StoreError) -> CompiledQuery {
        let limit = " LIMIT \(spec.pageSize) OFFSET \(try offset(spec, pageIndex: pageIndex))"
        if spec.queryType == .smart {
            let (sql, smartSql) = try smart(spec, whereArgs: whereArgs, translations: &translations)
            return CompiledQuery(sql: "SELECT * FROM (\(sql))" + limit, binds: whereArgs.map(EntryPath.sqlValue), returnsEntries: false,
                                 smartSql: smartSql)
        }
        let parts = try self.parts(spec, whereArgs: whereArgs)
        let columns = try spec.selectPaths.map { paths throws(StoreError) in
            guard !paths.isEmpty else { throw error(.invalidQuery, "selectPaths is empty", soup: parts.soup.name) }
            return try paths.map { path throws(StoreError) in try field(path, in: parts.soup) }.joined(separator: ", ")
        } ?? "\(parts.soup.tableName).\(SoupColumns.soup), \(parts.soup.tableName).\(SoupColumns.id)"
        return CompiledQuery(sql: "SELECT \(columns) FROM \(parts.soup.tableName)\(parts.filter)\(parts.order)" + limit, binds: parts.binds,
                             returnsEntries: spec.selectPaths == nil, soup: parts.soup.name)
    }

    /// How many results `spec` has over all pages.
    func count(_ spec: QuerySpec, whereArgs: [JSONValue], translations: inout TranslationCache) throws(StoreError) -> CompiledQuery {
        if spec.queryType == .smart {
            let (sql, smartSql) = try smart(spec, whereArgs: whereArgs, translations: &translations)
            return CompiledQuery(sql: "SELECT count(*) FROM (\(sql))", binds: whereArgs.map(EntryPath.sqlValue), returnsEntries: false, smartSql: smartSql)
        }
        let parts = try self.parts(spec, whereArgs: whereArgs)
        return CompiledQuery(sql: "SELECT count(*) FROM \(parts.soup.tableName)\(parts.filter)", binds: parts.binds, returnsEntries: false,
                             soup: parts.soup.name)
    }

    /// The ids of `spec`'s first page (what ``SmartStore/remove(matching:fromSoup:)`` removes):
    /// a Smart SQL spec must select a column named `id` (`{soup:_soupEntryId}`), as in the SDK.
    func ids(_ spec: QuerySpec, translations: inout TranslationCache) throws(StoreError) -> CompiledQuery {
        if spec.queryType == .smart {
            let (sql, smartSql) = try smart(spec, whereArgs: [], translations: &translations)
            return CompiledQuery(sql: "SELECT \(SoupColumns.id) FROM (\(sql)) LIMIT \(spec.pageSize)", binds: [], returnsEntries: false, smartSql: smartSql)
        }
        let parts = try self.parts(spec, whereArgs: [])
        return CompiledQuery(sql: "SELECT \(parts.soup.tableName).\(SoupColumns.id) FROM \(parts.soup.tableName)\(parts.filter)\(parts.order) LIMIT \(spec.pageSize)",
                             binds: parts.binds, returnsEntries: false, soup: parts.soup.name)
    }

    private func smart(_ spec: QuerySpec, whereArgs: [JSONValue], translations: inout TranslationCache) throws(StoreError) -> (String, String) {
        guard let smartSql = spec.smartSqlSource, !smartSql.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw error(.invalidQuery, "a smart query needs its Smart SQL")
        }
        guard spec.pageSize > 0 else { throw error(.invalidQuery, "pageSize \(spec.pageSize) is out of range: it must be at least 1", query: smartSql) }
        var sql = try translations.sql(for: smartSql, catalog: catalog, file: file)
        // The query is wrapped (`SELECT * FROM (…) LIMIT …`): a trailing `;` would end it early.
        while let last = sql.unicodeScalars.last, last == ";" || last.properties.isWhitespace { sql.unicodeScalars.removeLast() }
        return (sql, smartSql)
    }

    /// The soup, WHERE and ORDER BY clauses of a non-smart spec, and its parameters.
    private func parts(_ spec: QuerySpec, whereArgs: [JSONValue]) throws(StoreError) -> (soup: SoupInfo, filter: String, order: String, binds: [SQLValue]) {
        guard let name = spec.soupName else { throw error(.invalidQuery, "a \(spec.queryType.rawValue) query needs a soup") }
        guard let soup = catalog.soups[name] else { throw error(.unknownSoup, "unknown soup", soup: name) }
        guard whereArgs.isEmpty else { throw error(.invalidQuery, "whereArgs apply to smart queries only", soup: name) }
        guard spec.pageSize > 0 else { throw error(.invalidQuery, "pageSize \(spec.pageSize) is out of range: it must be at least 1", soup: name) }
        var filter = ""
        var binds: [SQLValue] = []
        switch spec.queryType {
        case .exact:
            let field = try requiredField(spec, soup)
            if spec.matchKey == nil || spec.matchKey == .null {
                filter = " WHERE \(field) IS NULL"
            } else {
                filter = " WHERE \(field) = ?"
                binds = [EntryPath.sqlValue(spec.matchKey)]
            }
        case .like:
            let field = try requiredField(spec, soup)
            guard let likeKey = spec.likeKey else { throw error(.invalidQuery, "a like query needs a likeKey", soup: name) }
            filter = " WHERE \(field) LIKE ?"
            binds = [.text(likeKey)]
        case .range:
            if let path = spec.path {
                let field = try field(path, in: soup)
                var conditions: [String] = []
                if let begin = spec.beginKey { conditions.append("\(field) >= ?"); binds.append(EntryPath.sqlValue(begin)) }
                if let end = spec.endKey { conditions.append("\(field) <= ?"); binds.append(EntryPath.sqlValue(end)) }
                filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            }
        case .match:
            guard soup.hasFullText else { throw error(.unindexedPath, "a full-text match needs a full_text index; the soup has none", soup: name, path: spec.path) }
            guard case .string(let matchKey)? = spec.matchKey else { throw error(.invalidQuery, "a match query needs a string matchKey", soup: name) }
            var column: String?
            if let path = spec.path {
                guard let index = soup.index(for: path), index.type == .fullText else {
                    throw error(.unindexedPath, "a full-text match needs a full_text index on the path", soup: name, path: path)
                }
                column = index.columnName
            }
            filter = " WHERE \(soup.tableName).\(SoupColumns.id) IN (SELECT rowid FROM \(soup.ftsTableName) WHERE \(soup.ftsTableName) MATCH ?)"
            binds = [.text(try fieldTerms(Self.qualify(matchKey, column: column), soup: soup))]
        case .smart:
            preconditionFailure("smart specs are compiled by smart(_:whereArgs:translations:)")
        }
        let order = try spec.orderPath.map { path throws(StoreError) in
            " ORDER BY \(try field(path, in: soup)) \(spec.order == .descending ? "DESC" : "ASC")"
        } ?? ""
        return (soup, filter, order, binds)
    }

    private func requiredField(_ spec: QuerySpec, _ soup: SoupInfo) throws(StoreError) -> String {
        guard let path = spec.path else { throw error(.invalidQuery, "a \(spec.queryType.rawValue) query needs a path", soup: soup.name) }
        return try field(path, in: soup)
    }

    /// The SQL reading `path` in `soup`'s table: a reserved column, an index column, or the
    /// entry's JSON.
    func field(_ path: String, in soup: SoupInfo) throws(StoreError) -> String {
        if let column = SoupColumns.column(forReservedPath: path) { return "\(soup.tableName).\(column)" }
        if let index = soup.index(for: path), index.hasColumn { return "\(soup.tableName).\(index.columnName)" }
        guard EntryPath.isValid(path) else { throw error(.invalidPath, "not a valid path", soup: soup.name, path: path) }
        return EntryPath.jsonExtract(path, table: soup.tableName)
    }

    /// A match key's field-colon terms (`{employees:firstName}:Eva OR {employees:lastName}:Eva`)
    /// with each `{soup:path}` turned into the path's full-text column, as the SDK's Smart SQL
    /// translation does inside a `MATCH` string (SFSmartStoreFullTextSearchTests).
    /// - Throws: `unknownSoup`; `unindexedPath` for a path without a `full_text` index in the
    ///   soup queried; `invalidPath` for `{a:b:c}`.
    private func fieldTerms(_ matchKey: String, soup: SoupInfo) throws(StoreError) -> String {
        guard matchKey.contains("{") else { return matchKey }
        var out = ""
        var rest = Substring(matchKey)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            let parts = rest[rest.index(after: open)..<close].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else {
                throw error(.invalidPath, "invalid soup/path reference {\(parts.joined(separator: ":"))} in the match key: {soup:path}", soup: soup.name)
            }
            guard catalog.soups[parts[0]] != nil else { throw error(.unknownSoup, "unknown soup in the match key", soup: parts[0]) }
            guard parts[0] == soup.name, let index = soup.index(for: parts[1]), index.type == .fullText else {
                throw error(.unindexedPath, "a match key's field term needs a full_text index on the path in the soup queried ('\(soup.name)')",
                            soup: parts[0], path: parts[1])
            }
            out += index.columnName
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// Restricts each term of an FTS5 query to `column` (FTS5 has no `column MATCH 'term'`, only
    /// `table MATCH 'column:term'`), keeping `AND`, `OR`, `NOT` and parentheses — the SDK's
    /// `qualifyMatchKey`.
    static func qualify(_ matchKey: String, column: String?) -> String {
        guard let column else { return matchKey }
        var out = ""
        var term = ""
        func flush() {
            guard !term.isEmpty else { return }
            let lower = term.lowercased()
            out += lower == "and" || lower == "or" || lower == "not" || term.hasPrefix("{") ? term : "\(column):\(term)"
            term = ""
        }
        for character in matchKey {
            if character == "(" || character == ")" || character == " " {
                flush()
                out.append(character)
            } else {
                term.append(character)
            }
        }
        flush()
        return out
    }
}

/// Runs compiled queries on a connection and turns rows into values. Each query runs within the
/// connection's step budget (``SQLiteConnection/queryStepBudget``).
enum QueryRunner {
    /// The rows of `query`: entries (`.object`; the SQL selects each entry's JSON and then its
    /// id) or arrays of values.
    static func rows(_ query: CompiledQuery, on connection: SQLiteConnection) throws(StoreError) -> [JSONValue] {
        let statement = try prepare(query, on: connection)
        defer { finish(statement, on: connection) }
        do {
            try statement.bind(query.binds)
            var rows: [JSONValue] = []
            if query.returnsEntries {
                while try statement.step() {
                    guard let bytes = statement.bytes(0), let entry = StoreJSON.decode(bytes), case .object = entry else {
                        let id = Int(statement.int64(1))
                        throw StoreError(code: .unreadableEntry, reason: "its stored JSON cannot be read (a damaged row); remove it (remove([\(id)], fromSoup:)) "
                                         + "or replace it (an upsert with _soupEntryId \(id))", file: connection.path, soup: query.soup, entryID: id)
                    }
                    rows.append(entry)
                }
            } else {
                let count = statement.columnCount
                // A column named `soup` (`{soup:_soup}`) holds an entry's JSON, as in the SDK.
                let soupColumns = (0..<count).map { statement.columnName($0) == SoupColumns.soup || statement.columnName($0).hasPrefix("soup:") }
                while try statement.step() {
                    var row: [JSONValue] = []
                    row.reserveCapacity(count)
                    for column in 0..<count { row.append(value(statement.value(column), isSoup: soupColumns[column])) }
                    rows.append(.array(row))
                }
            }
            return rows
        } catch let failure as SQLiteFailure {
            throw wrap(failure, query, connection)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .sqliteError, reason: "\(error)", file: connection.path)
        }
    }

    /// The first column of the first row as an integer (a count).
    static func integer(_ query: CompiledQuery, on connection: SQLiteConnection) throws(StoreError) -> Int {
        let statement = try prepare(query, on: connection)
        defer { finish(statement, on: connection) }
        do throws(SQLiteFailure) {
            try statement.bind(query.binds)
            return try statement.step() ? Int(statement.int64(0)) : 0
        } catch {
            throw wrap(error, query, connection)
        }
    }

    /// Every value of the first column, as integers (ids).
    static func integers(_ query: CompiledQuery, on connection: SQLiteConnection) throws(StoreError) -> [Int64] {
        let statement = try prepare(query, on: connection)
        defer { finish(statement, on: connection) }
        do throws(SQLiteFailure) {
            try statement.bind(query.binds)
            var values: [Int64] = []
            while try statement.step() { values.append(statement.int64(0)) }
            return values
        } catch {
            throw wrap(error, query, connection)
        }
    }

    /// Prepares `query`'s SQL, checking that Smart SQL is one statement that only reads.
    private static func prepare(_ query: CompiledQuery, on connection: SQLiteConnection) throws(StoreError) -> SQLiteStatement {
        let statement: SQLiteStatement
        do throws(SQLiteFailure) { statement = try connection.prepare(query.sql) } catch { throw wrap(error, query, connection) }
        if let smartSql = query.smartSql {
            try requireOneReadingStatement(statement, smartSql: smartSql, file: connection.path)
            guard statement.parameterCount == query.binds.count else {
                throw StoreError(code: .invalidQuery, reason: "the query has \(statement.parameterCount) parameters but \(query.binds.count) whereArgs were given",
                                 file: connection.path, query: smartSql)
            }
        }
        connection.interrupter.limitSteps(to: connection.queryStepBudget)
        return statement
    }

    /// Refuses Smart SQL that SQLite does not see as one statement that only reads (the guard of
    /// queries and of `convertSmartSql`).
    static func requireOneReadingStatement(_ statement: SQLiteStatement, smartSql: String, file: String) throws(StoreError) {
        guard statement.isReadOnly, statement.tail.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw StoreError(code: .invalidQuery, reason: "Smart SQL must be one SELECT", file: file, query: smartSql)
        }
    }

    /// Resets a statement after its query and lifts the step budget.
    private static func finish(_ statement: SQLiteStatement, on connection: SQLiteConnection) {
        statement.reset()
        connection.interrupter.removeLimit()
    }

    /// A SQLite failure as a store error: in Smart SQL, SQLite's refusal is `smartSqlError`
    /// naming the query.
    private static func wrap(_ failure: SQLiteFailure, _ query: CompiledQuery, _ connection: SQLiteConnection) -> StoreError {
        var error = StoreError(failure, file: connection.path, soup: query.soup, query: query.smartSql)
        if query.smartSql != nil, error.code == .sqliteError { error.code = .smartSqlError }
        if error.code == .cancelled, connection.interrupter.budgetExceeded {
            error.code = .queryBudgetExceeded
            error.reason = "the query ran more than its budget of \(connection.queryStepBudget) SQLite steps and was stopped "
                + "(SmartStore.Configuration.queryStepBudget, given to SmartStore(fileURL:configuration:)): make it end sooner, or raise the budget"
        }
        return error
    }

    /// A column's value: integers, reals and text as they are, an entry's JSON as the entry, a
    /// blob as base64 text.
    static func value(_ value: SQLValue, isSoup: Bool) -> JSONValue {
        switch value {
        case .null: .null
        case .integer(let number): .int(Int(number))
        case .real(let number): .double(number)
        case .text(let text): isSoup ? StoreJSON.decode(Array(text.utf8)) ?? .string(text) : .string(text)
        case .utf8(let bytes): isSoup ? StoreJSON.decode(bytes) ?? .string(String(decoding: bytes, as: UTF8.self)) : .string(String(decoding: bytes, as: UTF8.self))
        case .blob(let bytes): .string(Data(bytes).base64EncodedString())
        }
    }
}
