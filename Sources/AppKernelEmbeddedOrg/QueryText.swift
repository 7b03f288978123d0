import AppKernelCore
import AppKernelREST

/// A SOQL or SOSL text outside the subset the embedded org understands, with the place it went
/// wrong: Salesforce's `MALFORMED_QUERY` / `MALFORMED_SEARCH`.
public struct SOQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong (`unexpected token: 'FRM'`).
    public var message: String
    /// The line it went wrong on, from 1.
    public var line: Int
    /// The column it went wrong at, from 1 (characters, not bytes).
    public var column: Int

    /// Creates an error at a line and column.
    public init(_ message: String, line: Int = 1, column: Int = 1) {
        self.message = message
        self.line = line
        self.column = column
    }

    /// "line 1, column 13: unexpected token: 'FRM'".
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A value that rides along with a parsed query without taking part in its equality or hash
/// (where each part was written), so two queries that say the same thing are equal.
struct Annotation<Value: Sendable>: Sendable, Hashable {
    var value: Value

    static func == (lhs: Annotation, rhs: Annotation) -> Bool { true }

    func hash(into hasher: inout Hasher) {}
}

/// One token of SOQL or SOSL text and the character offset it starts at.
struct QueryToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// A keyword, a name or a field path (`Account.Name`), or a number.
        case word
        /// A `'quoted string'`; the text is its value, escapes resolved.
        case string
        /// `,` `(` `)` `=` `!=` `<` `>` `<=` `>=`.
        case symbol
        /// A SOSL `{search term}`; the text is what the braces hold, escapes resolved.
        case braced
    }

    var kind: Kind
    var text: String
    var offset: Int

    /// The keyword test SOQL uses: words compare case-insensitively.
    func isKeyword(_ keyword: String) -> Bool { kind == .word && text.uppercased() == keyword }
}

/// Splits SOQL and SOSL into tokens, and turns offsets into lines and columns.
struct QueryText: Sendable, Hashable {
    /// The text as written.
    let text: String
    private let characters: [Character]

    init(_ text: String) {
        self.text = text
        self.characters = Array(text)
    }

    /// The line and column (both from 1) of a character offset.
    func place(of offset: Int) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for character in characters.prefix(offset) {
            if character == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        return (line, column)
    }

    /// An error at a character offset.
    func error(_ message: String, at offset: Int) -> SOQLError {
        let (line, column) = place(of: offset)
        return SOQLError(message, line: line, column: column)
    }

    /// Salesforce's way of pointing at a place: the line, a caret under the column, then
    /// `ERROR at Row:r:Column:c` and the message.
    func pointing(at offset: Int, _ message: String) -> String {
        let (line, column) = place(of: offset)
        return pointing(line: line, column: column, message)
    }

    /// ``pointing(at:_:)`` for a line and column.
    func pointing(line: Int, column: Int, _ message: String) -> String {
        let lineText = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(line - 1).first.map(String.init) ?? ""
        return "\n\(lineText)\n\(String(repeating: " ", count: column - 1))^\nERROR at Row:\(line):Column:\(column)\n\(message)"
    }

    private static let symbols: Set<Character> = [",", "(", ")", "=", "<", ">"]
    private static let breaks: Set<Character> = [",", "(", ")", "=", "<", ">", "!", "'", "{", "}"]

    /// The tokens. Quoted strings take `\'` and `\\` escapes; SOSL braces take `\}`.
    /// - Throws: ``SOQLError`` for an unclosed quote or brace, or a stray `!` or `}`.
    func tokens() throws(SOQLError) -> [QueryToken] {
        var tokens: [QueryToken] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let start = index
            if character.isWhitespace {
                index += 1
            } else if character == "'" || character == "{" {
                let close: Character = character == "'" ? "'" : "}"
                var value = ""
                var closed = false
                index += 1
                while index < characters.count {
                    let next = characters[index]
                    index += 1
                    if next == "\\", index < characters.count {
                        value.append(characters[index])
                        index += 1
                    } else if next == close {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else {
                    throw error(character == "'" ? "a quoted string is not closed" : "a search term's brace is not closed", at: start)
                }
                tokens.append(QueryToken(kind: character == "'" ? .string : .braced, text: value, offset: start))
            } else if character == "!" || Self.symbols.contains(character) {
                index += 1
                var symbol = String(character)
                if index < characters.count, characters[index] == "=", character != "=" {
                    symbol.append("=")
                    index += 1
                }
                guard symbol != "!" else { throw error("unexpected token: '!'", at: start) }
                tokens.append(QueryToken(kind: .symbol, text: symbol, offset: start))
            } else if character == "}" {
                throw error("unexpected token: '}'", at: start)
            } else {
                while index < characters.count, !characters[index].isWhitespace, !Self.breaks.contains(characters[index]) { index += 1 }
                tokens.append(QueryToken(kind: .word, text: String(characters[start..<index]), offset: start))
            }
        }
        return tokens
    }
}

/// Reads tokens one by one, with the clauses SOQL and SOSL share: `WHERE`, `ORDER BY`, `LIMIT`.
struct QueryParser {
    let source: QueryText
    private let tokens: [QueryToken]
    private var index = 0

    init(_ text: String) throws(SOQLError) {
        source = QueryText(text)
        tokens = try source.tokens()
    }

    /// The next token, not consumed.
    var peek: QueryToken? { index < tokens.count ? tokens[index] : nil }

    /// Where the next token starts (the end of the text when there is none).
    var offset: Int { peek?.offset ?? source.text.count }

    /// Consumes the next token.
    mutating func next() -> QueryToken? {
        defer { index += 1 }
        return peek
    }

    /// The next token quoted, or `<EOF>`.
    var found: String { peek.map { "'\($0.text)'" } ?? "<EOF>" }

    /// An error at the next token: `unexpected token: 'X'` (or `<EOF>`) unless a message is given.
    func unexpected(_ message: String? = nil) -> SOQLError {
        source.error(message ?? "unexpected token: \(found)", at: offset)
    }

    /// Consumes the keyword if it comes next.
    mutating func skip(_ keyword: String) -> Bool {
        guard peek?.isKeyword(keyword) == true else { return false }
        index += 1
        return true
    }

    /// Consumes the symbol if it comes next.
    mutating func skip(symbol: String) -> Bool {
        guard let token = peek, token.kind == .symbol, token.text == symbol else { return false }
        index += 1
        return true
    }

    /// Consumes a keyword that must come next.
    mutating func expect(_ keyword: String) throws(SOQLError) {
        guard skip(keyword) else { throw unexpected("expecting '\(keyword)', found \(found)") }
    }

    /// Consumes a symbol that must come next.
    mutating func expect(symbol: String) throws(SOQLError) {
        guard skip(symbol: symbol) else { throw unexpected("expecting '\(symbol)', found \(found)") }
    }

    /// A name or a dotted path (`Account.Owner.Name`): parts of letters, digits and `_`, each
    /// starting with a letter or `_`.
    mutating func identifier(_ what: String) throws(SOQLError) -> QueryToken {
        guard let token = peek, token.kind == .word,
              token.text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ part in
                  part.first.map { $0.isLetter || $0 == "_" } == true && part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
              }) else {
            throw unexpected("expecting \(what), found \(found)")
        }
        index += 1
        return token
    }

    /// `WHERE condition [AND condition …]`, if it comes next; each condition with its offset.
    mutating func whereClause() throws(SOQLError) -> [(SOQLQuery.Condition, Int)] {
        guard skip("WHERE") else { return [] }
        var conditions: [(SOQLQuery.Condition, Int)] = []
        repeat {
            conditions.append(try condition())
        } while skip("AND")
        return conditions
    }

    /// `field op value` or `field [NOT] IN (value, …)`.
    private mutating func condition() throws(SOQLError) -> (SOQLQuery.Condition, Int) {
        let field = try identifier("a field name")
        if skip("IN") { return (try list(after: field, .in), field.offset) }
        if skip("NOT") {
            guard skip("IN") else { throw unexpected("expecting 'IN' after '\(field.text) NOT', found \(found)") }
            return (try list(after: field, .notIn), field.offset)
        }
        guard let op = peek, op.kind == .symbol, let comparison = SOQLQuery.Condition.Comparison(rawValue: op.text),
              comparison != .in, comparison != .notIn else {
            throw unexpected("only =, !=, <, <=, >, >=, IN and NOT IN are supported after '\(field.text)', found \(found)")
        }
        index += 1
        let (value, isDateTime) = try literal(after: "\(field.text) \(op.text)")
        return (SOQLQuery.Condition(field: field.text, comparison, value: value, isDateTime: isDateTime), field.offset)
    }

    /// `(value [, value …])` after `field IN` / `field NOT IN`.
    private mutating func list(after field: QueryToken, _ comparison: SOQLQuery.Condition.Comparison) throws(SOQLError) -> SOQLQuery.Condition {
        try expect(symbol: "(")
        var values: [JSONValue] = []
        var dateTimes: [Bool] = []
        repeat {
            let (value, isDateTime) = try literal(after: "\(field.text) \(comparison.rawValue) (")
            values.append(value)
            dateTimes.append(isDateTime)
        } while skip(symbol: ",")
        try expect(symbol: ")")
        guard Set(dateTimes).count == 1 else { throw unexpected("the values of '\(field.text) \(comparison.rawValue)' mix date-times and other values") }
        return SOQLQuery.Condition(field: field.text, comparison, value: .array(values), isDateTime: dateTimes[0])
    }

    /// A value: a quoted string, `true`, `false`, `null`, a number or a date-time literal.
    private mutating func literal(after context: String) throws(SOQLError) -> (JSONValue, Bool) {
        guard let literal = peek else { throw unexpected("expecting a value after '\(context)', found <EOF>") }
        let value: JSONValue
        var isDateTime = false
        switch (literal.kind, literal.text.lowercased()) {
        case (.string, _): value = .string(literal.text)
        case (.word, "true"): value = true
        case (.word, "false"): value = false
        case (.word, "null"): value = .null
        case (.word, let text) where Int(text) != nil: value = .int(Int(text)!)
        case (.word, let text) where Double(text) != nil: value = .double(Double(text)!)
        case (.word, _) where SalesforceDateTime.millis(from: literal.text) != nil:
            value = .string(literal.text)
            isDateTime = true
        default: throw unexpected("unexpected value '\(literal.text)'")
        }
        index += 1
        return (value, isDateTime)
    }

    /// `ORDER BY field [ASC | DESC] [, …]`, if it comes next, each with its field's offset.
    mutating func orderByClause() throws(SOQLError) -> [(ordering: SOQLQuery.Ordering, offset: Int)] {
        guard skip("ORDER") else { return [] }
        try expect("BY")
        var orderings: [(ordering: SOQLQuery.Ordering, offset: Int)] = []
        repeat {
            let field = try identifier("a field name")
            let ascending = !skip("DESC")
            if ascending { _ = skip("ASC") }
            orderings.append((SOQLQuery.Ordering(field: field.text, ascending: ascending), field.offset))
        } while skip(symbol: ",")
        return orderings
    }

    /// `LIMIT n`, if it comes next.
    mutating func limitClause() throws(SOQLError) -> Int? {
        guard skip("LIMIT") else { return nil }
        guard let token = peek, token.kind == .word, let value = Int(token.text), value >= 0 else {
            throw unexpected("expecting a number after LIMIT, found \(found)")
        }
        index += 1
        return value
    }
}
