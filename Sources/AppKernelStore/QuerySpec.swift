public import AppKernelCore

/// A SmartStore query — the Mobile SDK's `SFQuerySpec`: which soup, which entries, in which
/// order, how many a page.
///
/// Build one with the factories: ``all(soupName:selectPaths:orderPath:order:pageSize:)``,
/// ``exact(soupName:path:matchKey:selectPaths:orderPath:order:pageSize:)``,
/// ``range(soupName:path:beginKey:endKey:selectPaths:orderPath:order:pageSize:)``,
/// ``like(soupName:path:likeKey:selectPaths:orderPath:order:pageSize:)``,
/// ``match(soupName:path:matchKey:selectPaths:orderPath:order:pageSize:)`` (full text) and
/// ``smart(_:pageSize:)`` (Smart SQL).
///
/// What a query returns (``SmartStore/query(_:pageIndex:whereArgs:)``), as in the SDK:
/// - `all`, `exact`, `range`, `like`, `match`: the entries, each a `.object`; with
///   `selectPaths`, one `.array` a row instead, the values at those paths in order.
/// - `smart`: one `.array` a row, its columns' values; a `{soup:_soup}` column is the entry as
///   an `.object`.
///
/// Paths (`path`, `orderPath`, `selectPaths`, and `{soup:path}` in Smart SQL) need not be
/// indexed, as in the SDK: an un-indexed path is read from the entry's JSON with SQLite's
/// `json_extract` (slower: no database index helps). `_soupEntryId`, `_soupLastModifiedDate`,
/// `_soupCreatedDate` and `_soup` name the entry's columns. A full-text `match` needs a
/// `full_text` index on its path.
///
/// Keys are `JSONValue`s, bound as SQL values: strings as text, numbers as numbers, Booleans as
/// 1 / 0 (how an indexed `true` is stored), so `matchKey: true` finds entries whose `__local__`
/// is `true`. SQLite's type affinity converts keys to an indexed column's type (`"12"` matches 12
/// in an `integer` index).
public struct QuerySpec: Sendable, Hashable, CustomStringConvertible {
    /// The kind of query (the SDK's `SFSoupQueryType`).
    public enum QueryType: String, Sendable, Hashable, CaseIterable {
        /// Entries whose `path` equals `matchKey`.
        case exact
        /// Entries whose `path` lies between `beginKey` and `endKey` (both optional; neither is
        /// every entry — the `all` query).
        case range
        /// Entries whose `path` is `LIKE` `likeKey`.
        case like
        /// Entries whose full-text indexed `path` (or any full-text path) matches `matchKey`
        /// (FTS5 syntax).
        case match
        /// Smart SQL.
        case smart
    }

    /// A sort order.
    public enum Order: String, Sendable, Hashable, CaseIterable {
        /// Smallest first.
        case ascending
        /// Largest first.
        case descending
    }

    /// The SDK's default page size.
    public static let defaultPageSize = 10

    /// The kind of query.
    public var queryType: QueryType
    /// The soup queried (nil for Smart SQL, which names its soups).
    public var soupName: String?
    /// The paths whose values each row holds, instead of whole entries.
    public var selectPaths: [String]?
    /// The path compared (`indexPath` in the SDK's JSON form); nil for `all`, and for a `match`
    /// over every full-text path.
    public var path: String?
    /// `exact`: the value matched; `match`: the full-text query (a string).
    public var matchKey: JSONValue?
    /// `range`: the lower bound, inclusive.
    public var beginKey: JSONValue?
    /// `range`: the upper bound, inclusive.
    public var endKey: JSONValue?
    /// `like`: the pattern (`%` and `_` wildcards).
    public var likeKey: String?
    /// The Smart SQL this spec stands for (`SFQuerySpec.smartSql`): a `smart` spec's own; for
    /// the others the SDK's form of the query, built from the soup, paths and keys
    /// (`SELECT {employees:_soup} FROM {employees} WHERE {employees:lastName} = ? ORDER BY
    /// {employees:lastName} ASC `, keys as `?` except a `match` key, written in). The store runs
    /// the same query in SQL of its own (``SmartStore/convertSmartSql(_:)`` translates this form).
    /// nil for a non-smart spec without a soup. Setting it sets a `smart` spec's Smart SQL.
    public var smartSql: String? {
        get { queryType == .smart ? smartSqlSource : SmartSqlForm(self).select }
        set { smartSqlSource = newValue }
    }
    /// The Smart SQL counting this spec's results (`SFQuerySpec.countSmartSql`):
    /// `SELECT count(*) FROM (…)` around a `smart` spec's Smart SQL, else the SDK's form.
    public var countSmartSql: String? {
        queryType == .smart ? smartSqlSource.map { "SELECT count(*) FROM (\($0))" } : SmartSqlForm(self).count
    }
    /// The Smart SQL selecting this spec's entry ids (`SFQuerySpec.idsSmartSql`):
    /// `SELECT id FROM (…)` around a `smart` spec's Smart SQL (which must then select
    /// `{soup:_soupEntryId}`), else the SDK's form.
    public var idsSmartSql: String? {
        queryType == .smart ? smartSqlSource.map { "SELECT id FROM (\($0))" } : SmartSqlForm(self).ids
    }
    /// `smart`: the Smart SQL as given (nil for the other types).
    var smartSqlSource: String?
    /// The path sorted by, if any.
    public var orderPath: String?
    /// The sort order.
    public var order: Order
    /// Entries (rows) a page.
    public var pageSize: Int

    /// Creates a spec; prefer the factories.
    public init(queryType: QueryType, soupName: String? = nil, selectPaths: [String]? = nil, path: String? = nil,
                matchKey: JSONValue? = nil, beginKey: JSONValue? = nil, endKey: JSONValue? = nil, likeKey: String? = nil,
                smartSql: String? = nil, orderPath: String? = nil, order: Order = .ascending, pageSize: Int = QuerySpec.defaultPageSize) {
        self.queryType = queryType
        self.soupName = soupName
        self.selectPaths = selectPaths
        self.path = path
        self.matchKey = matchKey
        self.beginKey = beginKey
        self.endKey = endKey
        self.likeKey = likeKey
        self.smartSqlSource = smartSql
        self.orderPath = orderPath
        self.order = order
        self.pageSize = pageSize
    }

    /// Every entry of the soup (`buildAllQuerySpec`: a range query without keys).
    public static func all(soupName: String, selectPaths: [String]? = nil, orderPath: String? = nil, order: Order = .ascending,
                           pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .range, soupName: soupName, selectPaths: selectPaths, orderPath: orderPath, order: order, pageSize: pageSize)
    }

    /// Entries whose `path` equals `matchKey` (`buildExactQuerySpec`).
    public static func exact(soupName: String, path: String, matchKey: JSONValue, selectPaths: [String]? = nil, orderPath: String? = nil,
                             order: Order = .ascending, pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .exact, soupName: soupName, selectPaths: selectPaths, path: path, matchKey: matchKey,
                  orderPath: orderPath, order: order, pageSize: pageSize)
    }

    /// Entries whose `path` lies between `beginKey` and `endKey`, both inclusive and optional
    /// (`buildRangeQuerySpec`).
    public static func range(soupName: String, path: String, beginKey: JSONValue?, endKey: JSONValue?, selectPaths: [String]? = nil,
                             orderPath: String? = nil, order: Order = .ascending, pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .range, soupName: soupName, selectPaths: selectPaths, path: path, beginKey: beginKey, endKey: endKey,
                  orderPath: orderPath, order: order, pageSize: pageSize)
    }

    /// Entries whose `path` is `LIKE` `likeKey` (`buildLikeQuerySpec`; SQLite's LIKE is
    /// case-insensitive for ASCII).
    public static func like(soupName: String, path: String, likeKey: String, selectPaths: [String]? = nil, orderPath: String? = nil,
                            order: Order = .ascending, pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .like, soupName: soupName, selectPaths: selectPaths, path: path, likeKey: likeKey,
                  orderPath: orderPath, order: order, pageSize: pageSize)
    }

    /// Entries whose full-text indexed `path` matches `matchKey`, in FTS5's query syntax
    /// (`buildMatchQuerySpec`): each term is searched in `path`'s column (`AND`, `OR`, `NOT` and
    /// parentheses are kept); `path` nil searches every full-text path.
    public static func match(soupName: String, path: String?, matchKey: String, selectPaths: [String]? = nil, orderPath: String? = nil,
                             order: Order = .ascending, pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .match, soupName: soupName, selectPaths: selectPaths, path: path, matchKey: .string(matchKey),
                  orderPath: orderPath, order: order, pageSize: pageSize)
    }

    /// Smart SQL (`buildSmartQuerySpec`): a SELECT over soups, `{soup}` naming a soup's table and
    /// `{soup:path}` a path's value (`{soup:_soup}` the entry, `{soup:_soupEntryId}`,
    /// `{soup:_soupLastModifiedDate}`, `{soup:_soupCreatedDate}` its columns). Joins, `GROUP BY`,
    /// aggregates (`count`, `sum`…) and `?` parameters (``SmartStore/query(_:pageIndex:whereArgs:)``)
    /// work as in SQLite.
    public static func smart(_ smartSql: String, pageSize: Int = defaultPageSize) -> QuerySpec {
        QuerySpec(queryType: .smart, smartSql: smartSql, pageSize: pageSize)
    }

    /// The SDK's JSON form (`{"queryType": "exact", "indexPath": …}`), for logs.
    public var description: String {
        var members: [String: JSONValue] = ["queryType": .string(queryType.rawValue), "order": .string(order.rawValue), "pageSize": .int(pageSize)]
        if let soupName { members["soupName"] = .string(soupName) }
        if let selectPaths { members["selectPaths"] = .array(selectPaths.map(JSONValue.string)) }
        if let path { members["indexPath"] = .string(path) }
        if let matchKey { members["matchKey"] = matchKey }
        if let beginKey { members["beginKey"] = beginKey }
        if let endKey { members["endKey"] = endKey }
        if let likeKey { members["likeKey"] = .string(likeKey) }
        if let smartSqlSource { members["smartSql"] = .string(smartSqlSource) }
        if let orderPath { members["orderPath"] = .string(orderPath) }
        return JSONValue.object(members).description
    }
}
