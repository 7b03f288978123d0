public import Foundation

extension JSONValue {
    /// Parses JSON text (RFC 8259, UTF-8; a leading byte-order mark is skipped; any value may be
    /// the root). Numbers follow the number rule of ``JSONValue``. A key given twice in one object
    /// keeps its last value.
    ///
    /// ```swift
    /// let value = try JSONValue(jsonData: Data(#"{"Id": "001A", "Employees": 12, "Rating": 4.5}"#.utf8))
    /// value["Employees"]   // .int(12)
    /// ```
    /// - Throws: ``JSONSyntaxError`` with the byte offset where the text stops being JSON.
    public init(jsonData: Data) throws(JSONSyntaxError) {
        try self.init(jsonBytes: Array(jsonData))
    }

    /// How deeply objects and arrays may nest in JSON text this module reads: 512, the config
    /// reader's limit and Foundation's. A value counts the objects and arrays around it and
    /// itself (`[[1]]` nests 2 deep). SmartStore refuses deeper entries with the same number.
    package static let maximumNestingDepth = 512

    /// ``init(jsonData:)`` over bytes already in an array: how SmartStore reads its entries.
    package init(jsonBytes bytes: [UInt8]) throws(JSONSyntaxError) {
        var reader = JSONTextReader(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        guard let value = reader.value(depth: 0) else { throw JSONSyntaxError(offset: reader.index) }
        reader.skipSpace()
        guard reader.index == bytes.count else { throw JSONSyntaxError(offset: reader.index) }
        self = value
    }

    /// The value of a number literal by the number rule of ``JSONValue`` — the one place the rule
    /// is applied: `.int` for a literal without fraction or exponent that fits `Int`, `.double`
    /// for any other; `nil` when `literal` is not a JSON number or is beyond `Double`'s range.
    static func number(literal: ArraySlice<UInt8>) -> JSONValue? {
        var index = literal.startIndex
        let end = literal.endIndex
        let negative = index < end && literal[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let digitsStart = index
        while index < end, isDigit(literal[index]) { index += 1 }
        let digitsEnd = index
        // RFC 8259: at least one digit, and no leading zero before another digit.
        guard digitsEnd > digitsStart, literal[digitsStart] != UInt8(ascii: "0") || digitsEnd - digitsStart == 1 else { return nil }
        var integral = true
        if index < end, literal[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            let fractionStart = index
            while index < end, isDigit(literal[index]) { index += 1 }
            guard index > fractionStart else { return nil }
        }
        if index < end, literal[index] == UInt8(ascii: "e") || literal[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < end, literal[index] == UInt8(ascii: "+") || literal[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < end, isDigit(literal[index]) { index += 1 }
            guard index > exponentStart else { return nil }
        }
        guard index == end else { return nil }
        if integral {
            // Accumulated negatively, so that Int.min, whose magnitude Int cannot hold, fits.
            var value = 0
            var fits = true
            for byte in literal[digitsStart..<digitsEnd] {
                let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
                let (sum, underflowed) = times.subtractingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                if overflowed || underflowed { fits = false; break }
                value = sum
            }
            if fits {
                if negative { return .int(value) }
                if value != .min { return .int(-value) }
            }
        }
        guard let number = Double(String(decoding: literal, as: UTF8.self)), number.isFinite else { return nil }
        return .double(number)
    }
}

/// A one-pass reader of JSON text over UTF-8 bytes, behind ``JSONValue/init(jsonData:)``. Every
/// method returns nil on text that is not JSON, leaving `index` where it stopped.
struct JSONTextReader {
    /// How deeply objects and arrays may nest (as Foundation's JSON parser allows).
    static let maximumDepth = JSONValue.maximumNestingDepth
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    /// The value at `index`; `depth` counts the objects and arrays around it (the text's
    /// recursion, and so its stack, is bounded by ``maximumDepth``).
    mutating func value(depth: Int) -> JSONValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return depth < Self.maximumDepth ? object(depth: depth) : nil
        case UInt8(ascii: "["): return depth < Self.maximumDepth ? array(depth: depth) : nil
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        return value
    }

    mutating func object(depth: Int) -> JSONValue? {
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth + 1) else { return nil }
            members[key] = member
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            return .object(members)
        }
    }

    mutating func array(depth: Int) -> JSONValue? {
        index += 1
        var elements: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            guard let element = value(depth: depth + 1) else { return nil }
            elements.append(element)
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "]") else { return nil }
            index += 1
            return .array(elements)
        }
    }

    /// A string starting at the opening quote; a control character or bytes that are not UTF-8
    /// in it are not JSON (refused, never repaired: RFC 8259 §8.1).
    mutating func string() -> String? {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 { index += 1 }
        guard index < bytes.count, bytes[index] >= 0x20 else { return nil }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(validating: bytes[start..<(index - 1)], as: UTF8.self)
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(validating: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by an escaped low one.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                        index += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20: return nil
            default:
                scalars.append(byte)
                index += 1
            }
        }
        return nil
    }

    mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            index += 1
            code = code << 4 | UInt32(digit)
        }
        return code
    }

    /// A number: its extent by the JSON grammar's characters, its value by the number rule.
    mutating func number() -> JSONValue? {
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        guard index > start, let value = JSONValue.number(literal: bytes[start..<index]) else {
            index = start
            return nil
        }
        return value
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): true
        default: false
        }
    }
}
