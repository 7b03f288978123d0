import Foundation

/// A JSON-shaped value: the typed, `Sendable` stand-in for UIKit's `[AnyHashable: Any]` user-info
/// dictionaries (remote-notification payloads, user-activity and shortcut-item user info), and
/// what SmartStore entries, REST bodies and configuration values are made of.
///
/// Literals build it directly, so payloads read as they would in JSON:
///
/// ```swift
/// let payload: [String: JSONValue] = ["aps": ["content-available": 1], "ids": [1, 2]]
/// payload["aps"]?["content-available"]?.intValue   // 1
/// ```
///
/// ## Numbers
///
/// Every reader in the package that turns JSON text into a `JSONValue` — the configuration reader
/// (``ConfigParser``, then ``ConfigValue/jsonValue``), and ``init(jsonData:)``, which reads
/// SmartStore's entries and REST bodies — turns a number literal into a value by this one rule
/// (Codable types decode by their own declared types):
///
/// - A literal without a fraction or an exponent whose value fits `Int` is ``int(_:)``, exactly:
///   `42`, `-9223372036854775808`, `9007199254740993`, and `-0`, which is `0`.
/// - Every other literal is ``double(_:)``, the `Double` nearest to it: one with a fraction or an
///   exponent even when it is whole (`1.0`, `1e3`, `-0.0`), and a whole number beyond `Int`
///   (`9223372036854775808`), which so keeps only 15–17 significant digits. No decimal type:
///   `0.1` is the `Double` nearest 0.1, as `JSONSerialization` (so the iOS Mobile SDK) reads it.
/// - A literal beyond `Double`'s range (`1e400`) is not JSON: the reader refuses the text. One
///   below its smallest magnitude (`1e-400`) is `0.0`.
///
/// So the kind of a number follows how it is written, not its value: `1` and `1.0` are different
/// values (``doubleValue`` reads both). Writers keep the kind: SmartStore writes `.double(1)` as
/// `1.0`. ``init(foundationObject:)`` applies the rule to `NSNumber`s by their type: a property
/// list's `<integer>` is `.int`, its `<real>` `.double`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or an exponent that fits `Int` (see Numbers above).
    case int(Int)
    /// Any other number: the `Double` nearest to it (see Numbers above).
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list.
    case array([JSONValue])
    /// A string-keyed object.
    case object([String: JSONValue])

    /// The member named `key` when this is an object; `nil` otherwise.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` when this is an array and the index is in range; `nil` otherwise.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, when this is ``int(_:)`` (not a whole ``double(_:)``).
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    /// The number, when this is ``int(_:)`` (converted, so beyond 2^53 rounded) or ``double(_:)``.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// Creates `.null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Creates `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Creates `.int`.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Creates `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Creates `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Creates `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Creates `.object`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text with object keys sorted, so that descriptions are stable in traces.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): JSONValue.quoted(value)
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }
                .map { JSONValue.quoted($0.key) + ":" + $0.value.description }
                .joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension JSONValue {
    /// Converts what `JSONSerialization` or `PropertyListSerialization` returns, numbers by the
    /// number rule (see Numbers above) as far as their `NSNumber` type tells it: Booleans are
    /// numbers whose Objective-C type is `c` (char), here and on Darwin, so `true` and `1` stay
    /// apart; an integer type is ``int(_:)`` when it fits `Int`; a floating-point type is
    /// ``double(_:)``; an `NSDecimalNumber` (what `JSONSerialization` gives for integers beyond
    /// 64 bits) is read from its digits. Values JSON has no form for (a property list's dates and
    /// data) become `.null`.
    public init(foundationObject object: Any) {
        switch object {
        case let dictionary as [String: Any]: self = .object(dictionary.mapValues(JSONValue.init(foundationObject:)))
        case let array as [Any]: self = .array(array.map(JSONValue.init(foundationObject:)))
        case let text as String: self = .string(text)
        case let number as NSNumber: self = JSONValue(number: number)
        default: self = .null
        }
    }

    /// An `NSNumber` by the number rule, through its Objective-C type.
    private init(number: NSNumber) {
        if let decimal = number as? NSDecimalNumber {
            self = JSONValue.number(literal: Array(decimal.description(withLocale: nil).utf8)[...]) ?? .double(decimal.doubleValue)
            return
        }
        switch String(cString: number.objCType) {
        case "c": self = .bool(number.boolValue)
        case "d", "f": self = .double(number.doubleValue)
        case "Q", "L", "I", "S", "C": self = Int(exactly: number.uint64Value).map(JSONValue.int) ?? .double(Double(number.uint64Value))
        default: self = Int(exactly: number.int64Value).map(JSONValue.int) ?? .double(Double(number.int64Value))
        }
    }
}
