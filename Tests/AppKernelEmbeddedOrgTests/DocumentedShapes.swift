import Foundation
import AppKernel
import AppKernelREST

/// The documented response shapes of `Fixtures/shapes` (see its README), and the check that an
/// answer has one.
enum DocumentedShape {
    /// The documented shape in `Fixtures/shapes/<name>.json`.
    static func named(_ name: String) throws -> JSONValue {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/shapes/\(name).json")
        return try JSONValue(jsonData: Data(contentsOf: url))
    }

    /// Where `actual` departs from `documented`: every documented key present with a value of the
    /// same kind (`null` only where `null` is documented), every element of an array matching one
    /// of the documented elements. Empty when it conforms.
    static func mismatches(_ actual: JSONValue, _ documented: JSONValue, at path: String = "$") -> [String] {
        switch (documented, actual) {
        case (.object(let expected), .object(let members)):
            return expected.keys.sorted().flatMap { key -> [String] in
                guard let value = members[key] else { return ["\(path).\(key) is missing"] }
                return mismatches(value, expected[key]!, at: "\(path).\(key)")
            }
        case (.array(let expected), .array(let elements)):
            guard !expected.isEmpty else { return [] }
            return elements.enumerated().flatMap { index, element -> [String] in
                let tries = expected.map { mismatches(element, $0, at: "\(path)[\(index)]") }
                return tries.contains { $0.isEmpty } ? [] : tries.min { $0.count < $1.count } ?? []
            }
        case (.null, .null), (.string, .string), (.bool, .bool), (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            return []
        default:
            return ["\(path) is \(kind(actual)), documented as \(kind(documented))"]
        }
    }

    private static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
