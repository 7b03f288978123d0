import AppKernelCore
import Foundation

/// The Smart SQL the Mobile SDK writes for a non-smart query spec (`SFQuerySpec`'s
/// `computeSmartAndCountAndIdsSql`), word for word, trailing spaces included: `SELECT` the
/// entry (`{soup:_soup}`) or the select paths, `FROM {soup}`, a `WHERE` by query type (keys as
/// `?`; a `match` key written into the SQL, each bare term qualified with the path's column), and
/// `ORDER BY`.
///
/// The store does not run these strings (it builds its SQL directly, keys bound); they are what
/// ``QuerySpec/smartSql``, ``QuerySpec/countSmartSql`` and ``QuerySpec/idsSmartSql`` read, and
/// ``SmartStore/convertSmartSql(_:)`` turns them into SQL that gives the same rows.
struct SmartSqlForm {
    let select: String?
    let count: String?
    let ids: String?

    init(_ spec: QuerySpec) {
        guard let soup = spec.soupName else {
            select = nil
            count = nil
            ids = nil
            return
        }
        func field(_ path: String) -> String { "{\(soup):\(path)}" }
        let selectClause = "SELECT " + (spec.selectPaths ?? ["_soup"]).map(field).joined(separator: ", ") + " "
        let fromClause = "FROM {\(soup)} "
        let whereClause = Self.whereClause(spec, soup: soup, field: field)
        let orderClause = spec.orderPath.map { "ORDER BY \(field($0)) \(spec.order == .descending ? "DESC" : "ASC") " } ?? ""
        select = selectClause + fromClause + whereClause + orderClause
        count = "SELECT count(*) " + fromClause + whereClause
        ids = "SELECT id " + fromClause + whereClause + orderClause
    }

    private static func whereClause(_ spec: QuerySpec, soup: String, field: (String) -> String) -> String {
        let path = spec.path.map(field)
        switch spec.queryType {
        case .exact:
            return path.map { "WHERE \($0) = ? " } ?? ""
        case .like:
            return path.map { "WHERE \($0) LIKE ? " } ?? ""
        case .range:
            guard let path else { return "" }
            switch (spec.beginKey, spec.endKey) {
            case (nil, nil): return ""
            case (_, nil): return "WHERE \(path) >= ? "
            case (nil, _): return "WHERE \(path) <= ? "
            default: return "WHERE \(path) >= ? AND \(path) <= ? "
            }
        case .match:
            let matchKey = spec.matchKey?.stringValue ?? ""
            // The SDK writes the key as it is; a quote is doubled here so that the SQL stays one string.
            let qualified = QueryCompiler.qualify(matchKey, column: path).replacingOccurrences(of: "'", with: "''")
            return "WHERE \(field("_soupEntryId")) IN (SELECT rowid FROM {\(soup)}_fts WHERE {\(soup)}_fts MATCH '\(qualified)') "
        case .smart:
            return ""
        }
    }
}
