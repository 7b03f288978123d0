import Foundation
/// Edits a SOQL query clause by clause, without parsing it whole — the Mobile SDK's
/// `SFSDKSoqlMutator`: a SOQL sync-down target adds the fields and ordering it needs, and a
/// resync adds `LastModifiedDate > …` to the `WHERE` clause.
///
/// Clauses are found at the top level only: keywords inside quotes or parentheses (a subquery)
/// are left alone. Each clause keeps its text as written.
struct SOQLMutator {
    /// The clause keywords, in the order a query is rebuilt.
    private static let keywords = ["select", "from", "where", "group by", "having", "order by", "limit", "offset"]

    /// Each clause found, by keyword, with its text (trimmed).
    private(set) var clauses: [String: String] = [:]

    init(_ soql: String) {
        let characters = Array(soql)
        var marks: [(keyword: String, start: Int, end: Int)] = []
        var depth = 0, index = 0
        var quoted = false
        while index < characters.count {
            let character = characters[index]
            if quoted {
                if character == "\\" { index += 2; continue }
                if character == "'" { quoted = false }
                index += 1
                continue
            }
            switch character {
            case "'": quoted = true
            case "(": depth += 1
            case ")": depth = max(depth - 1, 0)
            default:
                let atWordStart = index == 0 || !Self.isWordCharacter(characters[index - 1])
                if depth == 0, atWordStart, let (keyword, end) = Self.keyword(in: characters, at: index) {
                    marks.append((keyword, index, end))
                    index = end
                    continue
                }
            }
            index += 1
        }
        for (offset, mark) in marks.enumerated() {
            let end = offset + 1 < marks.count ? marks[offset + 1].start : characters.count
            clauses[mark.keyword] = String(characters[mark.end..<end]).trimmingWhitespace
        }
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "."
    }

    /// The keyword starting at `index` (and where it ends), if one does and a word boundary follows.
    private static func keyword(in characters: [Character], at index: Int) -> (String, Int)? {
        for keyword in keywords {
            let parts = keyword.split(separator: " ")
            var position = index
            var matched = true
            for (number, part) in parts.enumerated() {
                if number > 0 {
                    guard position < characters.count, characters[position].isWhitespace else { matched = false; break }
                    while position < characters.count, characters[position].isWhitespace { position += 1 }
                }
                let end = position + part.count
                guard end <= characters.count, String(characters[position..<end]).lowercased() == part else { matched = false; break }
                position = end
            }
            if matched, position == characters.count || !isWordCharacter(characters[position]) { return (keyword, position) }
        }
        return nil
    }

    /// The select list's top-level fields (subqueries left out), trimmed.
    var selectedFields: [String] {
        var fields: [String] = [], current = ""
        var depth = 0
        for character in clauses["select"] ?? "" {
            switch character {
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                fields.append(current.trimmingWhitespace)
                current = ""
                continue
            default: break
            }
            if depth == 0, character != ")" { current.append(character) }
        }
        fields.append(current.trimmingWhitespace)
        return fields.filter { !$0.isEmpty }
    }

    /// Whether the select list has `field` (ignoring case, as SOQL does).
    func isSelectingField(_ field: String) -> Bool {
        selectedFields.contains { $0.caseInsensitiveCompare(field) == .orderedSame }
    }

    /// Puts `fields` first in the select list.
    mutating func addSelectFields(_ fields: String) {
        let current = clauses["select"] ?? ""
        clauses["select"] = current.isEmpty ? fields : fields + ", " + current
    }

    /// Replaces the select list.
    mutating func replaceSelectFields(_ fields: String) { clauses["select"] = fields }

    /// Adds a predicate before the `WHERE` clause's (`pred AND (existing)`).
    mutating func addWherePredicates(_ predicate: String) {
        guard let existing = clauses["where"], !existing.isEmpty else {
            clauses["where"] = predicate
            return
        }
        clauses["where"] = predicate + " AND " + (SOQLMutator.hasTopLevelOr(existing) ? "(\(existing))" : existing)
    }

    /// Whether `OR` joins conditions outside parentheses and quotes.
    private static func hasTopLevelOr(_ text: String) -> Bool {
        var depth = 0, quoted = false, word = ""
        for character in text + " " {
            if quoted {
                if character == "'" { quoted = false }
                continue
            }
            if isWordCharacter(character) {
                word.append(character)
                continue
            }
            if depth == 0, word.lowercased() == "or" { return true }
            word = ""
            switch character {
            case "'": quoted = true
            case "(": depth += 1
            case ")": depth -= 1
            default: break
            }
        }
        return false
    }

    /// Whether there is an `ORDER BY`.
    var hasOrderBy: Bool { clauses["order by"] != nil }

    /// Whether the query orders by exactly `fields` (white space ignored).
    func isOrderingBy(_ fields: String) -> Bool {
        guard let order = clauses["order by"] else { return false }
        return order.filter { !$0.isWhitespace }.lowercased() == fields.filter { !$0.isWhitespace }.lowercased()
    }

    /// Replaces the `ORDER BY` clause (an empty text removes it).
    mutating func replaceOrderBy(_ fields: String) {
        clauses["order by"] = fields.isEmpty ? nil : fields
    }

    /// The query, rebuilt: `SELECT … FROM … WHERE … GROUP BY … HAVING … ORDER BY … LIMIT … OFFSET …`.
    var soql: String {
        Self.keywords.compactMap { keyword in
            guard let text = clauses[keyword], !text.isEmpty else { return nil }
            return keyword.uppercased() + " " + text
        }.joined(separator: " ")
    }
}

extension String {
    /// Without leading and trailing white space.
    var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
