import Foundation

/// A JSON-shaped value: the typed, `Sendable` stand-in for UIKit's `[AnyHashable: Any]` user-info
/// dictionaries (remote-notification payloads, user-activity and shortcut-item user info).
///
/// Literals build it directly, so payloads read as they would in JSON:
///
/// ```swift
/// let payload: [String: JSONValue] = ["aps": ["content-available": 1], "ids": [1, 2]]
/// payload["aps"]?["content-available"]?.intValue   // 1
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case int(Int)
    /// A number with a fraction.
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
    /// The integer, when this is a whole number.
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    /// The number, when this is a whole number or a number with a fraction.
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
    /// Converts what `JSONSerialization` or `PropertyListSerialization` returns. Booleans are
    /// numbers whose Objective-C type is `c` (char), here and on Darwin, so `true` and `1` stay
    /// apart; other numbers are `.int` when whole and not stored as a double; values JSON has no
    /// form for (a property list's dates and data) become `.null`.
    public init(foundationObject object: Any) {
        switch object {
        case let dictionary as [String: Any]: self = .object(dictionary.mapValues(JSONValue.init(foundationObject:)))
        case let array as [Any]: self = .array(array.map(JSONValue.init(foundationObject:)))
        case let text as String: self = .string(text)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { self = .bool(number.boolValue) }
            else if let integer = Int(exactly: number.doubleValue), !String(cString: number.objCType).contains("d") { self = .int(integer) }
            else { self = .double(number.doubleValue) }
        default: self = .null
        }
    }
}
