import Foundation
import AppKernel

/// A parsed configuration value that remembers where it came from, so errors name the key path
/// and the line.
struct ConfigValue {
    enum Kind {
        case object([(key: String, value: ConfigValue)])
        case array([ConfigValue])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    let kind: Kind
    let line: Int?
    let file: String
    let path: String

    var typeName: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a Boolean"
        case .null: "null"
        }
    }

    func error(_ code: ConfigError.Code, _ reason: String, at path: String? = nil) -> ConfigError {
        ConfigError(code: code, file: file, keyPath: path ?? self.path, line: line, reason: reason)
    }

    // MARK: Typed access

    func object() throws(ConfigError) -> [(key: String, value: ConfigValue)] {
        guard case .object(let members) = kind else { throw error(.wrongType, "expected an object, found \(typeName)") }
        return members
    }

    func array() throws(ConfigError) -> [ConfigValue] {
        guard case .array(let elements) = kind else { throw error(.wrongType, "expected an array, found \(typeName)") }
        return elements
    }

    func string() throws(ConfigError) -> String {
        guard case .string(let text) = kind else { throw error(.wrongType, "expected a string, found \(typeName)") }
        return text
    }

    func bool() throws(ConfigError) -> Bool {
        guard case .bool(let flag) = kind else { throw error(.wrongType, "expected true or false, found \(typeName)") }
        return flag
    }

    func strings() throws(ConfigError) -> [String] {
        var result: [String] = []
        for element in try array() { result.append(try element.string()) }
        return result
    }

    /// The member `key`, or `nil` when absent.
    func member(_ key: String) throws(ConfigError) -> ConfigValue? {
        try object().first { $0.key == key }?.value
    }

    /// The member `key`.
    /// - Throws: `missingKey` naming the key path.
    func required(_ key: String) throws(ConfigError) -> ConfigValue {
        guard let value = try member(key) else {
            throw error(.missingKey, "the required key '\(key)' is missing", at: path.isEmpty ? key : "\(path).\(key)")
        }
        return value
    }

    /// Rejects members other than `known` (typos must not pass silently).
    func onlyKeys(_ known: Set<String>) throws(ConfigError) {
        for (key, value) in try object() where !known.contains(key) {
            throw value.error(.unknownValue, "unknown key '\(key)'; expected one of \(known.sorted().joined(separator: ", "))")
        }
    }

    /// An allowed value from a fixed list.
    func oneOf<Value: RawRepresentable & CaseIterable>(_ type: Value.Type, what: String) throws(ConfigError) -> Value where Value.RawValue == String {
        let text = try string()
        guard let value = Value(rawValue: text) else {
            throw error(.unknownValue, "unknown \(what) '\(text)'; expected one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    // MARK: Parsing

    /// Parses JSON text, keeping lines.
    /// - Throws: `malformed` with the line and column of the first problem.
    static func parseJSON(_ data: Data, file: String) throws(ConfigError) -> ConfigValue {
        var parser = JSONParser(bytes: Array(data), file: file)
        return try parser.parseDocument()
    }

    /// Parses a property list (no line numbers: Foundation's parser does not give them).
    static func parsePropertyList(_ data: Data, file: String) throws(ConfigError) -> ConfigValue {
        let object: Any
        do { object = try PropertyListSerialization.propertyList(from: data, format: nil) } catch {
            throw ConfigError(code: .malformed, file: file, keyPath: "", reason: "not a valid property list: \(error.localizedDescription)")
        }
        return convert(JSONValue(foundationObject: object), file: file, path: "")
    }

    private static func convert(_ value: JSONValue, file: String, path: String) -> ConfigValue {
        func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        let kind: Kind
        switch value {
        case .object(let members): kind = .object(members.keys.sorted().map { ($0, convert(members[$0]!, file: file, path: child($0))) })
        case .array(let values): kind = .array(values.enumerated().map { convert($1, file: file, path: "\(path)[\($0)]") })
        case .string(let text): kind = .string(text)
        case .bool(let flag): kind = .bool(flag)
        case .int, .double: kind = .number(value.doubleValue ?? 0)
        case .null: kind = .null
        }
        return ConfigValue(kind: kind, line: nil, file: file, path: path)
    }
}

/// A strict JSON parser (RFC 8259) that records each value's line and reports the line and
/// column of the first error.
private struct JSONParser {
    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    mutating func parseDocument() throws(ConfigError) -> ConfigValue {
        skipWhitespace()
        let value = try parseValue(path: "")
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the end of the document") }
        return value
    }

    func failure(_ reason: String) -> ConfigError {
        ConfigError(code: .malformed, file: file, keyPath: "", line: line, column: index - lineStart + 1, reason: "malformed JSON: \(reason)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    mutating func parseValue(path: String) throws(ConfigError) -> ConfigValue {
        guard index < bytes.count else { throw failure("the document ends where a value was expected") }
        let startLine = line
        func make(_ kind: ConfigValue.Kind) -> ConfigValue { ConfigValue(kind: kind, line: startLine, file: file, path: path) }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(key: String, value: ConfigValue)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return make(.object(members))
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes") }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after the key '\(key)'") }
                index += 1
                skipWhitespace()
                let value = try parseValue(path: path.isEmpty ? key : "\(path).\(key)")
                if members.contains(where: { $0.key == key }) {
                    throw ConfigError(code: .duplicateName, file: file, keyPath: path.isEmpty ? key : "\(path).\(key)", line: value.line,
                                      reason: "the key '\(key)' appears twice in one object")
                }
                members.append((key, value))
                skipWhitespace()
                guard index < bytes.count else { throw failure("the document ends inside an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return make(.object(members)) }
                throw failure("expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [ConfigValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return make(.array(elements))
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(path: "\(path)[\(elements.count)]"))
                skipWhitespace()
                guard index < bytes.count else { throw failure("the document ends inside an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return make(.array(elements)) }
                throw failure("expected ',' or ']' in an array")
            }
        case UInt8(ascii: "\""):
            return make(.string(try parseString()))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return make(.bool(true))
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return make(.bool(false))
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return make(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return make(.number(try parseNumber()))
        default:
            throw failure("unexpected character '\(Character(UnicodeScalar(bytes[index])))'")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(ConfigError) {
        let expected = Array(literal.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure("expected '\(literal)'")
        }
        index += expected.count
    }

    mutating func parseNumber() throws(ConfigError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        guard digits() > 0 else { throw failure("a number needs digits") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("a number needs digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number needs digits in its exponent") }
        }
        guard let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { throw failure("not a number") }
        return number
    }

    mutating func parseString() throws(ConfigError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll()
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                index += 1
                guard index < bytes.count else { throw failure("the document ends inside a string") }
                switch bytes[index] {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard bytes.count - index > 4, let code = UInt32(String(decoding: bytes[index + 1...index + 4], as: UTF8.self), radix: 16)
                    else { throw failure("a \\u escape needs four hexadecimal digits") }
                    index += 4
                    if (0xD800...0xDBFF).contains(code), bytes.count - index > 6, bytes[index + 1] == UInt8(ascii: "\\"), bytes[index + 2] == UInt8(ascii: "u"),
                       let low = UInt32(String(decoding: bytes[index + 3...index + 6], as: UTF8.self), radix: 16), (0xDC00...0xDFFF).contains(low) {
                        index += 6
                        scalars.append(UnicodeScalar(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
                    } else {
                        scalars.append(UnicodeScalar(code) ?? "\u{FFFD}")
                    }
                default:
                    throw failure("unknown escape '\\\(Character(UnicodeScalar(bytes[index])))'")
                }
                index += 1
            case 0..<0x20:
                throw failure(byte == UInt8(ascii: "\n") ? "a string is not closed before the end of the line" : "a control character inside a string")
            default:
                raw.append(byte)
                index += 1
            }
        }
        throw failure("the document ends inside a string")
    }
}
