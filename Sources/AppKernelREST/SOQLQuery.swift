import AppKernelCore

/// The SOQL subset the embedded org understands:
///
/// ```
/// SELECT field [, field …] FROM object
///   [WHERE field (= | !=) value [AND field (= | !=) value …]]
///   [ORDER BY field [ASC | DESC]]
///   [LIMIT n]
/// ```
///
/// Keywords are case-insensitive; values are `'quoted strings'` (with `\'` escapes), numbers,
/// `true`, `false` or `null`; a field may follow one relationship (`Account.Name`).
public struct SOQLQuery: Sendable, Hashable {
    /// A comparison in the WHERE clause.
    public struct Condition: Sendable, Hashable {
        /// The field.
        public var field: String
        /// `true` for `=`, `false` for `!=`.
        public var equals: Bool
        /// The value compared with.
        public var value: JSONValue

        /// Creates a condition.
        public init(field: String, equals: Bool, value: JSONValue) {
            self.field = field
            self.equals = equals
            self.value = value
        }
    }

    /// The selected fields, in order.
    public var fields: [String]
    /// The object queried.
    public var object: String
    /// The conditions, all of which must hold.
    public var conditions: [Condition]
    /// The ordering field and direction.
    public var orderBy: (field: String, ascending: Bool)?
    /// The row limit.
    public var limit: Int?

    /// Equal when every part is.
    public static func == (lhs: SOQLQuery, rhs: SOQLQuery) -> Bool {
        lhs.fields == rhs.fields && lhs.object == rhs.object && lhs.conditions == rhs.conditions
            && lhs.orderBy?.field == rhs.orderBy?.field && lhs.orderBy?.ascending == rhs.orderBy?.ascending && lhs.limit == rhs.limit
    }

    /// Hashes the parts.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
        hasher.combine(object)
        hasher.combine(conditions)
        hasher.combine(orderBy?.field)
        hasher.combine(limit)
    }

    /// Parses a query.
    /// - Throws: ``SOQLError`` with Salesforce's `MALFORMED_QUERY` wording.
    public init(_ text: String) throws(SOQLError) {
        var tokens = try SOQLQuery.tokenize(text)
        func next() -> String? { tokens.isEmpty ? nil : tokens.removeFirst() }
        func expect(_ keyword: String) throws(SOQLError) {
            guard let token = next(), token.uppercased() == keyword else { throw SOQLError("expecting '\(keyword)'") }
        }
        func identifier(_ what: String) throws(SOQLError) -> String {
            guard let token = next(), token.first.map({ $0.isLetter || $0 == "_" }) == true,
                  token.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else { throw SOQLError("expecting \(what)") }
            return token
        }
        try expect("SELECT")
        var fields = [try identifier("a field name")]
        while tokens.first == "," {
            _ = next()
            fields.append(try identifier("a field name"))
        }
        try expect("FROM")
        let object = try identifier("an object name")
        var conditions: [Condition] = []
        var orderBy: (String, Bool)?
        var limit: Int?
        if tokens.first?.uppercased() == "WHERE" {
            _ = next()
            repeat {
                let field = try identifier("a field name")
                guard let op = next(), op == "=" || op == "!=" else { throw SOQLError("only = and != are supported after '\(field)'") }
                guard let literal = next() else { throw SOQLError("expecting a value after '\(field) \(op)'") }
                conditions.append(Condition(field: field, equals: op == "=", value: try SOQLQuery.value(literal)))
            } while tokens.first?.uppercased() == "AND" && next() != nil
        }
        if tokens.first?.uppercased() == "ORDER" {
            _ = next()
            try expect("BY")
            let field = try identifier("a field name")
            var ascending = true
            if let direction = tokens.first?.uppercased(), direction == "ASC" || direction == "DESC" {
                ascending = direction == "ASC"
                _ = next()
            }
            orderBy = (field, ascending)
        }
        if tokens.first?.uppercased() == "LIMIT" {
            _ = next()
            guard let text = next(), let value = Int(text), value >= 0 else { throw SOQLError("expecting a number after LIMIT") }
            limit = value
        }
        if let extra = tokens.first { throw SOQLError("unexpected token: '\(extra)'") }
        self.fields = fields
        self.object = object
        self.conditions = conditions
        self.orderBy = orderBy
        self.limit = limit
    }

    private static func value(_ literal: String) throws(SOQLError) -> JSONValue {
        if literal.hasPrefix("'") { return .string(String(literal.dropFirst().dropLast())) }
        switch literal.lowercased() {
        case "true": return true
        case "false": return false
        case "null": return .null
        default:
            if let integer = Int(literal) { return .int(integer) }
            if let number = Double(literal) { return .double(number) }
            throw SOQLError("unexpected value '\(literal)'")
        }
    }

    /// Words, `,`, `=`, `!=` and quoted strings (kept with their quotes, escapes resolved).
    private static func tokenize(_ text: String) throws(SOQLError) -> [String] {
        var tokens: [String] = []
        var characters = Array(text)[...]
        while let character = characters.first {
            if character.isWhitespace { characters.removeFirst(); continue }
            if character == "," || character == "=" {
                tokens.append(String(character))
                characters.removeFirst()
            } else if character == "!" {
                characters.removeFirst()
                guard characters.first == "=" else { throw SOQLError("unexpected token: '!'") }
                characters.removeFirst()
                tokens.append("!=")
            } else if character == "'" {
                characters.removeFirst()
                var literal = "'"
                var closed = false
                while let next = characters.popFirst() {
                    if next == "\\", let escaped = characters.popFirst() { literal.append(escaped); continue }
                    if next == "'" { closed = true; break }
                    literal.append(next)
                }
                guard closed else { throw SOQLError("a quoted string is not closed") }
                tokens.append(literal + "'")
            } else {
                var word = ""
                while let next = characters.first, !next.isWhitespace, next != ",", next != "=", next != "!", next != "'" {
                    word.append(next)
                    characters.removeFirst()
                }
                tokens.append(word)
            }
        }
        return tokens
    }
}

/// A query outside the supported subset, worded as Salesforce's `MALFORMED_QUERY`.
public struct SOQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    init(_ message: String) { self.message = message }
    /// What is wrong.
    public var description: String { message }
}
