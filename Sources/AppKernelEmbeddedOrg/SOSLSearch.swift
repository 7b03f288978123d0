import AppKernelCore

/// The SOSL subset the embedded org understands:
///
/// ```
/// FIND {term} [IN (ALL | NAME | EMAIL | PHONE) FIELDS]
///   [RETURNING object [(field [, field …] [WHERE …] [ORDER BY …] [LIMIT n])] [, object …]]
///   [LIMIT n]
/// ```
///
/// The term's words must all match (a trailing `*` matches a word's start); words match
/// whole words of a field, ignoring case. Without RETURNING every searchable object is searched
/// and only `Id` comes back; an object without a field list also returns only `Id`.
public struct SOSLSearch: Sendable, Hashable {
    /// Which fields the term is looked for in.
    public enum Scope: String, Sendable, Hashable, CaseIterable {
        /// Every text field (the default).
        case all = "ALL"
        /// Name fields.
        case name = "NAME"
        /// Email fields.
        case email = "EMAIL"
        /// Phone fields.
        case phone = "PHONE"
    }

    /// One object of the RETURNING clause.
    public struct Returning: Sendable, Hashable {
        /// The object searched.
        public var object: String
        /// The fields returned (`[]`: only `Id`).
        public var fields: [String]
        /// The conditions the records must meet.
        public var conditions: [SOQLQuery.Condition]
        /// The ORDER BY fields and directions, in order.
        public var orderings: [SOQLQuery.Ordering]
        /// The first ORDER BY field and direction.
        public var orderBy: SOQLQuery.Ordering? { orderings.first }
        /// How many records of this object at most.
        public var limit: Int?
        /// Where the object name and each field were written.
        private let annotation: Annotation<SOQLQuery.Places>
        var places: SOQLQuery.Places { annotation.value }

        init(object: String, fields: [String], conditions: [SOQLQuery.Condition], orderings: [SOQLQuery.Ordering], limit: Int?,
             places: SOQLQuery.Places) {
            self.object = object
            self.fields = fields
            self.conditions = conditions
            self.orderings = orderings
            self.limit = limit
            self.annotation = Annotation(value: places)
        }
    }

    /// The search term, as written between the braces.
    public var term: String
    /// The fields searched.
    public var scope: Scope
    /// The objects returned (`[]`: every searchable object, `Id` only).
    public var returning: [Returning]
    /// How many records in all at most.
    public var limit: Int?
    /// The text it was parsed from.
    private var annotation: Annotation<QueryText>
    var source: QueryText { annotation.value }

    /// Parses a search.
    /// - Throws: ``SOQLError`` naming the line and column (Salesforce's `MALFORMED_SEARCH`).
    public init(_ text: String) throws(SOQLError) {
        var parser = try QueryParser(text)
        try parser.expect("FIND")
        guard let term = parser.peek, term.kind == .braced else {
            throw parser.unexpected("no search term found: the term must be enclosed in braces, as in FIND {Acme}")
        }
        _ = parser.next()
        guard term.text.contains(where: { $0.isLetter || $0.isNumber }) else {
            throw parser.source.error("the search term {\(term.text)} has no letter or digit to search for", at: term.offset)
        }
        self.term = term.text
        scope = .all
        if parser.skip("IN") {
            guard let word = parser.peek, word.kind == .word, let scope = Scope(rawValue: word.text.uppercased()) else {
                throw parser.unexpected("expecting ALL, NAME, EMAIL or PHONE after IN, found \(parser.found)")
            }
            _ = parser.next()
            self.scope = scope
            try parser.expect("FIELDS")
        }
        returning = []
        if parser.skip("RETURNING") {
            repeat {
                let object = try parser.identifier("an object name")
                var places = SOQLQuery.Places(object: object.offset, start: object.offset)
                var fields: [String] = []
                var conditions: [SOQLQuery.Condition] = []
                var order: [SOQLQuery.Ordering] = []
                var limit: Int?
                if parser.skip(symbol: "(") {
                    repeat {
                        let field = try parser.identifier("a field name")
                        fields.append(field.text)
                        places.fields.append(field.offset)
                    } while parser.skip(symbol: ",")
                    let parsed = try parser.whereClause()
                    conditions = parsed.map(\.0)
                    places.conditions = parsed.map(\.1)
                    let ordering = try parser.orderByClause()
                    order = ordering.map(\.ordering)
                    places.orderBy = ordering.map(\.offset)
                    limit = try parser.limitClause()
                    try parser.expect(symbol: ")")
                }
                returning.append(Returning(object: object.text, fields: fields, conditions: conditions, orderings: order, limit: limit, places: places))
            } while parser.skip(symbol: ",")
        }
        limit = try parser.limitClause()
        guard parser.peek == nil else { throw parser.unexpected() }
        annotation = Annotation(value: parser.source)
    }

    /// A text's words, upper-cased; a `*` is kept (in a term, a trailing one matches a prefix).
    static func words(in text: String) -> [String] {
        text.uppercased().split { !($0.isLetter || $0.isNumber || $0 == "*") }.map(String.init)
    }
}
