import AppKernelCore
import Foundation

/// Soups: registering, altering, clearing and removing them, and the catalog they live in.
extension StoreEngine {
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

    /// Recomputes the index values of `paths` for every entry of a soup from its JSON
    /// (`reIndexSoup:withIndexPaths:`), in one transaction: their columns, and the full-text
    /// table when one of them is `full_text`. A `json1` path has nothing stored to recompute.
    func reIndexSoup(_ name: String, paths: [String]) throws(StoreError) {
        let info = try soup(name)
        var indexes: [SoupIndex] = []
        for path in paths {
            guard let index = info.index(for: path) else {
                throw StoreError(code: .unindexedPath, reason: "the soup has no index on the path, so there is nothing to re-index: "
                                 + "index it (alterSoup) or leave it out", file: file, soup: name, path: path)
            }
            if !indexes.contains(index) { indexes.append(index) }
        }
        try atomic { () throws(StoreError) in
            try reIndex(info, indexes: indexes.filter(\.hasColumn))
            if indexes.contains(where: { $0.type == .fullText }) {
                let columns = info.indexes.filter { $0.type == .fullText }.map(\.columnName).joined(separator: ", ")
                try run("DELETE FROM \(info.ftsTableName); INSERT INTO \(info.ftsTableName) (rowid, \(columns)) SELECT id, \(columns) FROM \(info.tableName);")
            }
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
}
