/// One value of a configuration file — JSON or a property list, read by ``ConfigParser`` — that
/// remembers where it came from, so that every error names the file, the key path and (for JSON)
/// the line and column.
///
/// The typed accessors are strict: a string is not a number, `1` is not `true`, an unknown key is
/// an error that lists the allowed ones.
///
/// ```swift
/// let root = try ConfigParser.load(contentsOf: url)
/// try root.onlyKeys(["name", "retries"])
/// let name = try root.required("name").string()
/// let retries = try root.member("retries")?.int() ?? 3
/// ```
public struct ConfigValue: Sendable {
    /// What a value is.
    public enum Kind: Sendable {
        /// An object's members, in the file's order (a property list's sorted by key).
        case object([(key: String, value: ConfigValue)])
        /// An array's elements.
        case array([ConfigValue])
        /// A string.
        case string(String)
        /// A number written without a fraction or an exponent that fits `Int` (a property list's
        /// `<integer>`), by ``JSONValue``'s number rule.
        case int(Int)
        /// Any other number (a property list's `<real>`), by ``JSONValue``'s number rule.
        case double(Double)
        /// `true` or `false` — never a number.
        case bool(Bool)
        /// `null` (or a property-list value JSON has no form for: a date, data).
        case null
    }

    /// What the value is.
    public let kind: Kind
    /// The file's name, for errors.
    public let file: String
    /// Where in the file: `syncs[2].target`; empty for the root.
    public let keyPath: String
    /// The line (from 1) the value starts on, for JSON; `nil` for property lists.
    public let line: Int?
    /// The column (from 1, in characters) the value starts at, for JSON; `nil` for property lists.
    public let column: Int?

    /// Creates a value.
    /// - Parameters:
    ///   - kind: What it is.
    ///   - file: The file's name, for errors.
    ///   - keyPath: Where in the file; empty for the root.
    ///   - line: The line it starts on, where known.
    ///   - column: The column it starts at, where known.
    public init(kind: Kind, file: String, keyPath: String, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.file = file
        self.keyPath = keyPath
        self.line = line
        self.column = column
    }

    /// Converts a ``JSONValue`` (what a property list or `JSONSerialization` gives, through
    /// ``JSONValue/init(foundationObject:)``), building each value's key path; there are no
    /// positions. Object members are sorted by key so that errors come in a stable order.
    /// - Parameters:
    ///   - value: The value to convert.
    ///   - file: The file's name, for errors.
    ///   - keyPath: The value's own key path; empty for the root.
    public init(_ value: JSONValue, file: String, keyPath: String = "") {
        let kind: Kind
        switch value {
        case .object(let members):
            kind = .object(members.sorted { $0.key < $1.key }.map { member in
                (member.key, ConfigValue(member.value, file: file, keyPath: ConfigValue.keyPath(keyPath, member: member.key)))
            })
        case .array(let elements):
            kind = .array(elements.enumerated().map { ConfigValue($1, file: file, keyPath: ConfigValue.keyPath(keyPath, element: $0)) })
        case .string(let text): kind = .string(text)
        case .bool(let flag): kind = .bool(flag)
        case .int(let number): kind = .int(number)
        case .double(let number): kind = .double(number)
        case .null: kind = .null
        }
        self.init(kind: kind, file: file, keyPath: keyPath)
    }

    /// The value as JSON, without positions: what a custom part that reads its own keys receives.
    /// Numbers keep their kind (``JSONValue``'s number rule): `1` is `.int(1)`, `1.0` `.double(1)`.
    public var jsonValue: JSONValue {
        switch kind {
        case .object(let members): .object(Dictionary(members.map { ($0.key, $0.value.jsonValue) }, uniquingKeysWith: { _, last in last }))
        case .array(let elements): .array(elements.map(\.jsonValue))
        case .string(let text): .string(text)
        case .int(let number): .int(number)
        case .double(let number): .double(number)
        case .bool(let flag): .bool(flag)
        case .null: .null
        }
    }

    /// `"a string"`, `"an object"`, … — how errors name what was found.
    public var typeName: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .int, .double: "a number"
        case .bool: "a Boolean"
        case .null: "null"
        }
    }

    /// An error at this value's position (file, line, column).
    /// - Parameters:
    ///   - code: What kind of problem it is.
    ///   - reason: What is wrong and what is expected instead.
    ///   - keyPath: The key path to name, when not this value's own (a missing member's).
    public func error(_ code: ConfigError.Code, _ reason: String, at keyPath: String? = nil) -> ConfigError {
        ConfigError(code: code, file: file, keyPath: keyPath ?? self.keyPath, line: line, column: column, reason: reason)
    }

    /// `parent.member`, or `member` at the root.
    public static func keyPath(_ parent: String, member: String) -> String { parent.isEmpty ? member : "\(parent).\(member)" }

    /// `parent[index]`.
    public static func keyPath(_ parent: String, element index: Int) -> String { "\(parent)[\(index)]" }

    // MARK: Typed access

    /// The members of an object, in order.
    /// - Throws: `wrongType` when this is not an object.
    public func object() throws(ConfigError) -> [(key: String, value: ConfigValue)] {
        try expect("an object") { if case .object(let members) = $0 { members } else { nil } }
    }

    /// The elements of an array.
    /// - Throws: `wrongType` when this is not an array.
    public func array() throws(ConfigError) -> [ConfigValue] {
        try expect("an array") { if case .array(let elements) = $0 { elements } else { nil } }
    }

    /// The string.
    /// - Throws: `wrongType` when this is not a string.
    public func string() throws(ConfigError) -> String {
        try expect("a string") { if case .string(let text) = $0 { text } else { nil } }
    }

    /// The Boolean.
    /// - Throws: `wrongType` when this is not `true` or `false` (`1` and `"yes"` are not).
    public func bool() throws(ConfigError) -> Bool {
        try expect("true or false") { if case .bool(let flag) = $0 { flag } else { nil } }
    }

    /// The number (an ``Kind/int(_:)`` converted to `Double`).
    /// - Throws: `wrongType` when this is not a number.
    public func number() throws(ConfigError) -> Double {
        try expect("a number") { Self.double($0) }
    }

    /// The whole number: an ``Kind/int(_:)``, or a ``Kind/double(_:)`` without a fraction
    /// (`1.0` and `1e3` are whole).
    /// - Throws: `wrongType` when this is not a number, `invalidValue` when it has a fraction or
    ///   does not fit an `Int`.
    public func int() throws(ConfigError) -> Int {
        if case .int(let whole) = kind { return whole }
        let number = try expect("a whole number") { Self.double($0) }
        guard let whole = Int(exactly: number) else { throw error(.invalidValue, "expected a whole number, found \(number)") }
        return whole
    }

    /// A number kind's value as a `Double`; nil for other kinds.
    private static func double(_ kind: Kind) -> Double? {
        switch kind {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// What `extract` finds in ``kind``, or a `wrongType` error saying what was `expected` and
    /// what was found.
    private func expect<Value>(_ expected: String, _ extract: (Kind) -> Value?) throws(ConfigError) -> Value {
        guard let value = extract(kind) else { throw error(.wrongType, "expected \(expected), found \(typeName)") }
        return value
    }

    /// The strings of an array of strings.
    /// - Throws: `wrongType` naming the array, or the first element that is not a string.
    public func strings() throws(ConfigError) -> [String] {
        var result: [String] = []
        for element in try array() { result.append(try element.string()) }
        return result
    }

    /// The member `key` of this object, or `nil` when absent.
    /// - Throws: `wrongType` when this is not an object.
    public func member(_ key: String) throws(ConfigError) -> ConfigValue? {
        try object().first { $0.key == key }?.value
    }

    /// The member `key` of this object.
    /// - Throws: `wrongType` when this is not an object; `missingKey` naming the key path.
    public func required(_ key: String) throws(ConfigError) -> ConfigValue {
        guard let value = try member(key) else {
            throw error(.missingKey, "the required key '\(key)' is missing", at: ConfigValue.keyPath(keyPath, member: key))
        }
        return value
    }

    /// Refuses members other than `allowed` (typos must not pass silently).
    /// - Parameter allowed: The keys this object may have.
    /// - Throws: `wrongType` when this is not an object; `unknownKey` at the first other member,
    ///   listing the allowed keys.
    public func onlyKeys(_ allowed: Set<String>) throws(ConfigError) {
        for (key, value) in try object() where !allowed.contains(key) {
            throw value.error(.unknownKey, "unknown key '\(key)'; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
    }

    /// One of a fixed list of string values.
    /// - Parameters:
    ///   - type: The allowed values, by raw value.
    ///   - what: How errors name the value (`"sync type"`).
    /// - Throws: `wrongType` when this is not a string; `unknownValue` listing the allowed ones.
    public func oneOf<Value: RawRepresentable & CaseIterable>(_ type: Value.Type, what: String) throws(ConfigError) -> Value
    where Value.RawValue == String {
        let text = try string()
        guard let value = Value(rawValue: text) else {
            throw error(.unknownValue, "unknown \(what) '\(text)'; expected one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// One of a fixed list of strings.
    /// - Parameters:
    ///   - allowed: The allowed strings, in the order errors list them.
    ///   - what: How errors name the value (`"layout type"`).
    /// - Throws: `wrongType` when this is not a string; `unknownValue` listing the allowed ones.
    public func oneOf(_ allowed: [String], what: String) throws(ConfigError) -> String {
        let text = try string()
        guard allowed.contains(text) else {
            throw error(.unknownValue, "unknown \(what) '\(text)'; expected one of \(allowed.joined(separator: ", "))")
        }
        return text
    }

    // MARK: Positions

    /// The value at `keyPath` in this tree (this value itself when the paths are equal), or `nil`.
    public func value(atKeyPath keyPath: String) -> ConfigValue? {
        if self.keyPath == keyPath { return self }
        guard keyPath.hasPrefix(self.keyPath) else { return nil }
        switch kind {
        case .object(let members): return members.lazy.compactMap { $0.value.value(atKeyPath: keyPath) }.first
        case .array(let elements): return elements.lazy.compactMap { $0.value(atKeyPath: keyPath) }.first
        default: return nil
        }
    }

    /// The value at `keyPath` or, when that names a missing member of an object, the object.
    private func valueOrOwner(atKeyPath keyPath: String) -> ConfigValue? {
        if let value = value(atKeyPath: keyPath) { return value }
        let owner = keyPath.lastIndex(of: ".").map { String(keyPath[..<$0]) } ?? ""
        guard !keyPath.hasSuffix("]"), let object = value(atKeyPath: owner), case .object = object.kind else { return nil }
        return object
    }

    /// `error` with the line and column of the value its key path names in this tree (or, for a
    /// missing key, of the object that lacks it), when it has none yet — for checks made after parsing.
    public func locating(_ error: ConfigError) -> ConfigError {
        guard error.line == nil, error.file == file, let value = valueOrOwner(atKeyPath: error.keyPath) else { return error }
        var located = error
        located.line = value.line
        located.column = value.column
        return located
    }
}
