public import AppKernelCore

/// The SOQL subset the embedded org understands:
///
/// ```
/// SELECT item [, item …] FROM object
///   [WHERE condition [AND condition …]]
///   [ORDER BY field [ASC | DESC] [, field [ASC | DESC] …]]
///   [LIMIT n]
///
/// item:      a field, a parent path (Account.Name, Contact.Account.Name), or a child-relationship
///            subquery: (SELECT field [, field …] FROM Contacts [WHERE …] [ORDER BY …] [LIMIT n])
/// condition: field (= | != | < | <= | > | >=) value
///            field [NOT] IN (value [, value …])
/// ```
///
/// Keywords are case-insensitive; values are `'quoted strings'` (with `\'` escapes), numbers,
/// `true`, `false`, `null`, or date-time literals (`2026-11-24T10:00:00Z`,
/// `2026-11-24T10:00:00.000+0000` — unquoted, as SOQL writes them; see `SalesforceDateTime` in AppKernelREST).
/// Subqueries nest one level, as in Salesforce.
public struct SOQLQuery: Sendable, Hashable {
    /// A comparison in the WHERE clause.
    public struct Condition: Sendable, Hashable {
        /// How the field is compared with the value.
        public enum Comparison: String, Sendable, Hashable, CaseIterable {
            /// `=` (text ignoring case, numbers by value).
            case equal = "="
            /// `!=`.
            case notEqual = "!="
            /// `<`.
            case less = "<"
            /// `<=`.
            case lessOrEqual = "<="
            /// `>`.
            case greater = ">"
            /// `>=`.
            case greaterOrEqual = ">="
            /// `IN (…)`: the value is an array.
            case `in` = "IN"
            /// `NOT IN (…)`: the value is an array.
            case notIn = "NOT IN"
        }

        /// The field.
        public var field: String
        /// How it is compared.
        public var comparison: Comparison
        /// The value compared with (an array for `IN` and `NOT IN`; a date-time literal is its text).
        public var value: JSONValue
        /// Whether the value was written as a date-time literal (unquoted).
        public var isDateTime: Bool

        /// Creates a condition.
        public init(field: String, _ comparison: Comparison, value: JSONValue, isDateTime: Bool = false) {
            self.field = field
            self.comparison = comparison
            self.value = value
            self.isDateTime = isDateTime
        }

        /// Creates an `=` (`equals`) or `!=` condition.
        public init(field: String, equals: Bool, value: JSONValue) {
            self.init(field: field, equals ? .equal : .notEqual, value: value)
        }

        /// `true` for `=`.
        public var equals: Bool { comparison == .equal }
    }

    /// An ORDER BY clause.
    public struct Ordering: Sendable, Hashable {
        /// The field ordered by.
        public var field: String
        /// `true` for `ASC` (the default), `false` for `DESC`.
        public var ascending: Bool

        /// Creates an ordering.
        public init(field: String, ascending: Bool) {
            self.field = field
            self.ascending = ascending
        }
    }

    /// The selected fields and parent paths, in order (subqueries are in ``subqueries``).
    public var fields: [String]
    /// The object queried; for a subquery, the child relationship (`Contacts`).
    public var object: String
    /// The child-relationship subqueries of the SELECT list, in order.
    public var subqueries: [SOQLQuery]
    /// The conditions, all of which must hold.
    public var conditions: [Condition]
    /// The ORDER BY fields and directions, in order.
    public var orderings: [Ordering]
    /// The first ORDER BY field and direction.
    public var orderBy: Ordering? { orderings.first }
    /// The row limit.
    public var limit: Int?

    /// Where each part was written, for errors that point at it.
    struct Places: Sendable, Hashable {
        var fields: [Int] = []
        var object = 0
        var conditions: [Int] = []
        var orderBy: [Int] = []
        /// Where the subquery starts (its `(`).
        var start = 0
    }

    /// The text the query was parsed from (a subquery keeps the whole text), and where each part
    /// was written in it.
    private let annotation: Annotation<(source: QueryText, places: Places)>
    var source: QueryText { annotation.value.source }
    var places: Places { annotation.value.places }

    /// Parses a query.
    /// - Throws: ``SOQLError`` naming the line and column, worded like Salesforce's
    ///   `MALFORMED_QUERY` (`unexpected token: 'FRM'`, `unexpected token: <EOF>`).
    public init(_ text: String) throws(SOQLError) {
        var parser = try QueryParser(text)
        try self.init(parsing: &parser, subquery: false)
        guard parser.peek == nil else { throw parser.unexpected() }
    }

    private init(parsing parser: inout QueryParser, subquery: Bool) throws(SOQLError) {
        var places = Places(start: parser.offset)
        try parser.expect("SELECT")
        var fields: [String] = []
        var subqueries: [SOQLQuery] = []
        repeat {
            if parser.peek?.kind == .symbol, parser.peek?.text == "(" {
                guard !subquery else {
                    throw parser.unexpected("a subquery can't hold another subquery: Salesforce nests child relationships one level deep")
                }
                _ = parser.next()
                subqueries.append(try SOQLQuery(parsing: &parser, subquery: true))
                try parser.expect(symbol: ")")
            } else {
                let field = try parser.identifier("a field name")
                fields.append(field.text)
                places.fields.append(field.offset)
            }
        } while parser.skip(symbol: ",")
        try parser.expect("FROM")
        let object = try parser.identifier(subquery ? "a child relationship name" : "an object name")
        places.object = object.offset
        let conditions = try parser.whereClause()
        places.conditions = conditions.map(\.1)
        let order = try parser.orderByClause()
        places.orderBy = order.map(\.offset)
        self.limit = try parser.limitClause()
        self.fields = fields
        self.object = object.text
        self.subqueries = subqueries
        self.conditions = conditions.map(\.0)
        self.orderings = order.map(\.ordering)
        self.annotation = Annotation(value: (parser.source, places))
    }
}
