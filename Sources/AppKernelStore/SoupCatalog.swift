import AppKernelCore

/// One registered index of a soup, with where its values live — a row of `soup_index_map`.
struct SoupIndex: Sendable, Hashable {
    /// The indexed path (`Owner.Name`).
    let path: String
    /// Its type.
    let type: IndexType
    /// The column holding its values (`TABLE_1_0`), or for `json1` the expression the database
    /// index is on (`json_extract(soup, '$.Owner.Name')`) — as the Mobile SDK names them.
    let columnName: String
    /// `path` split at its dots.
    let segments: [String]

    init(path: String, type: IndexType, columnName: String) {
        self.path = path
        self.type = type
        self.columnName = columnName
        segments = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The public spec.
    var spec: IndexSpec { IndexSpec(path: path, type: type) }
    /// Whether its values are copied into a column of the soup table (every type but `json1`).
    var hasColumn: Bool { type != .json1 }
    /// The SQL column type of that column.
    var columnType: String {
        switch type {
        case .string, .fullText, .json1: "TEXT"
        case .integer: "INTEGER"
        case .floating: "REAL"
        }
    }
}

/// A registered soup: its name, id and table, and its indexes.
struct SoupInfo: Sendable, Hashable {
    /// The soup's name.
    let name: String
    /// Its table: `TABLE_<id>` (`id` from `soup_attrs`), as in the Mobile SDK.
    let tableName: String
    /// Its indexes, in registration order.
    let indexes: [SoupIndex]

    /// The full-text table (`TABLE_<id>_fts`, FTS5).
    var ftsTableName: String { tableName + "_fts" }
    /// Whether any index is `full_text`.
    var hasFullText: Bool { indexes.contains { $0.type == .fullText } }
    /// The index on `path`, if any.
    func index(for path: String) -> SoupIndex? { indexes.first { $0.path == path } }
    /// The public specs.
    var specs: [IndexSpec] { indexes.map(\.spec) }
}

/// Every soup of a store by name: a value, so that readers query with a snapshot while the
/// writer changes its own copy; published after each commit.
typealias SoupCatalog = [String: SoupInfo]

/// The columns every soup table has, and the paths that name them.
enum SoupColumns {
    static let id = "id"
    static let soup = "soup"
    static let created = "created"
    static let lastModified = "lastModified"

    /// The entry field holding an entry's id.
    static let entryIDPath = "_soupEntryId"
    /// The entry field holding an entry's last modification (milliseconds since 1970).
    static let lastModifiedPath = "_soupLastModifiedDate"
    /// The Smart SQL path of an entry's creation date (a column only, not a field).
    static let createdPath = "_soupCreatedDate"
    /// The Smart SQL path of the whole entry.
    static let soupPath = "_soup"

    /// The column a reserved path names, if it is one.
    static func column(forReservedPath path: String) -> String? {
        switch path {
        case soupPath: soup
        case entryIDPath: id
        case createdPath: created
        case lastModifiedPath: lastModified
        default: nil
        }
    }
}

/// Paths into entries (`Owner.Name`): their syntax and the values they reach.
enum EntryPath {
    /// Whether `path` can be used: dot-separated, non-empty segments without quotes, braces,
    /// brackets, colons, backslashes, `*`, whitespace or control characters — so that it can be
    /// written into a `json_extract(soup, '$.path')` expression as it is.
    static func isValid(_ path: String) -> Bool {
        guard !path.isEmpty else { return false }
        var previousWasDot = true
        for scalar in path.unicodeScalars {
            if scalar == "." {
                if previousWasDot { return false }
                previousWasDot = true
                continue
            }
            previousWasDot = false
            switch scalar {
            case "'", "\"", "{", "}", "[", "]", ":", "\\", "*", "`": return false
            default: if scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7F { return false }
            }
        }
        return !previousWasDot
    }

    /// The SQL expression reading `path` from a soup table's JSON (`json_extract(TABLE_1.soup,
    /// '$.a.b')`); `table` nil leaves the column unqualified, as index expressions are written.
    static func jsonExtract(_ path: String, table: String?) -> String {
        "json_extract(\(table.map { $0 + "." } ?? "")soup, '$.\(path)')"
    }

    /// The value at `segments` in `entry`, as the Mobile SDK projects it: through objects by key,
    /// and through arrays element by element (a list of what each element has there, nil when
    /// none has anything).
    static func project(_ entry: [String: JSONValue], _ segments: [String]) -> JSONValue? {
        guard let first = segments.first, let value = entry[first] else { return nil }
        return project(value, segments[1...])
    }

    static func project(_ value: JSONValue, _ segments: ArraySlice<String>) -> JSONValue? {
        guard let segment = segments.first else { return value }
        switch value {
        case .object(let members):
            return members[segment].flatMap { project($0, segments.dropFirst()) }
        case .array(let elements):
            let values = elements.compactMap { project($0, segments) }
            return values.isEmpty ? nil : .array(values)
        default:
            return nil
        }
    }

    /// What an index column holds for `value`: strings, numbers and Booleans (as 1 / 0, like
    /// SQLite's `json_extract`) as they are, objects and arrays as their JSON text, a missing
    /// value or `null` as NULL. The column's type affinity then converts (`"12"` in an integer
    /// index is 12).
    static func sqlValue(_ value: JSONValue?) -> SQLValue {
        switch value {
        case nil, .null?: .null
        case .bool(let flag)?: .integer(flag ? 1 : 0)
        case .int(let number)?: .integer(Int64(number))
        case .double(let number)?: .real(number)
        case .string(let text)?: .text(text)
        case let nested?: (try? StoreJSON.encode(nested)).map(SQLValue.utf8) ?? .null
        }
    }
}
