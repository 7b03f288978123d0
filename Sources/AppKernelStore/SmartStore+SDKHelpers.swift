public import AppKernelCore

extension SmartStore {
    /// The SQL a Smart SQL query runs as (`convertSmartSql:`): `{soup}` as the soup's table,
    /// `{soup:path}` as its column or `json_extract(…)`, by the rules ``QuerySpec`` and the DocC
    /// article *Smart SQL* give. ``query(_:pageIndex:whereArgs:)`` runs this SQL inside its paging
    /// (`SELECT * FROM (…) LIMIT … OFFSET …`). The SQL is checked as a query checks it: SQLite
    /// prepares it, and it is one read-only statement (the SDK answers nil for a Smart SQL
    /// starting with insert, update or delete).
    ///
    /// ```swift
    /// let sql = try store.convertSmartSql("select {employees}.{employees:salary} from {employees}")
    /// // "select json_extract(TABLE_1.soup, '$.salary') from TABLE_1" (salary not indexed)
    /// ```
    /// - Throws: ``StoreError`` `unknownSoup`, `invalidPath`, `unindexedPath` (a `MATCH` term on a
    ///   path without a full-text index), `smartSqlError` (SQLite refuses the SQL),
    ///   `invalidQuery` (not one read-only statement), each naming the query.
    public func convertSmartSql(_ smartSql: String) throws(StoreError) -> String {
        try withEngine { engine throws(StoreError) in try engine.convertSmartSql(smartSql) }
    }

    /// Recomputes the indexed values of `paths` for every entry of a soup from the entries' JSON
    /// (`reIndexSoup:withIndexPaths:`), in one transaction — after entries were written around
    /// the store, or an index's values were left empty (``alterSoup(_:indexes:reIndexData:)``
    /// with `reIndexData: false`). Full-text paths are re-indexed in the full-text table too.
    /// - Throws: ``StoreError`` `unknownSoup`; `unindexedPath` for a path the soup does not index
    ///   (the SDK skips it in silence).
    public func reIndexSoup(_ name: String, paths: [String]) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.reIndexSoup(name, paths: paths) }
    }

    /// The value at a dotted `path` in `json` (`SFJsonUtils projectIntoJson:path:`), as the SDK
    /// reads an index's value from an entry:
    /// - `path` nil or empty: `json` itself; `json` nil: nil.
    /// - through an object by key; a key that is absent (or a string, number or Boolean in the
    ///   way): nil. A JSON `null` at the end of the path is `.null`.
    /// - through an array element by element: an array of what each element has at the rest of
    ///   the path, elements with nothing left out — one level of array for each array crossed
    ///   (`d.dd.ddd` over arrays in arrays is an array of arrays), nil when no element has
    ///   anything.
    ///
    /// ```swift
    /// let json: JSONValue = ["c": [["cc": "cc1"], ["cc": 2], [:], ["cc": ["cc5": 5]]]]
    /// SmartStore.project(json, path: "c.cc")     // ["cc1", 2, ["cc5": 5]]
    /// SmartStore.project(json, path: "c.cc.cc5") // [5]
    /// ```
    public static func project(_ json: JSONValue?, path: String?) -> JSONValue? {
        guard let json else { return nil }
        guard let path, !path.isEmpty else { return json }
        return EntryPath.project(json, path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...])
    }
}
