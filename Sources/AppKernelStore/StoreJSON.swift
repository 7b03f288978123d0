import AppKernelCore

/// The JSON text of soup entries: compact UTF-8 written straight into a byte buffer and read back
/// in one pass. It is on every upsert's and query's path, so it avoids Foundation's
/// `JSONSerialization` (and its `NSDictionary` round trip): integers stay `.int`, numbers with a
/// fraction or exponent `.double`, `true`/`false` `.bool` — the types an entry was written with.
enum StoreJSON {
    /// Why a value cannot be written as JSON.
    struct EncodingFailure: Error, Equatable {
        /// The key path of the value (`Owner.Score`).
        var keyPath: String
    }

    /// Appends `entry` as compact JSON with the store's members written first —
    /// `_soupEntryId` and `_soupLastModifiedDate` — in place of any the entry has.
    /// - Throws: ``EncodingFailure`` for a non-finite number (JSON has none).
    static func encode(_ entry: [String: JSONValue], entryID: Int, lastModified: Int, into out: inout [UInt8]) throws(EncodingFailure) {
        out.append(contentsOf: #"{"_soupEntryId":"#.utf8)
        writeInteger(entryID, into: &out)
        out.append(contentsOf: #","_soupLastModifiedDate":"#.utf8)
        writeInteger(lastModified, into: &out)
        // Only an entry that has either member pays for skipping it.
        let skips = entry[SoupColumns.entryIDPath] != nil || entry[SoupColumns.lastModifiedPath] != nil
        for (key, value) in entry where !skips || (key != SoupColumns.entryIDPath && key != SoupColumns.lastModifiedPath) {
            out.append(UInt8(ascii: ","))
            try member(key, value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `"key":value`; a failure names the key in front of its own path.
    private static func member(_ key: String, _ value: JSONValue, into out: inout [UInt8]) throws(EncodingFailure) {
        writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        do { try write(value, into: &out) } catch {
            throw EncodingFailure(keyPath: error.keyPath.isEmpty ? key : error.keyPath.hasPrefix("[") ? key + error.keyPath : key + "." + error.keyPath)
        }
    }

    /// `value` as compact JSON bytes.
    static func encode(_ value: JSONValue) throws(EncodingFailure) -> [UInt8] {
        var out: [UInt8] = []
        try write(value, into: &out)
        return out
    }

    private static func write(_ value: JSONValue, into out: inout [UInt8]) throws(EncodingFailure) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .int(let number): writeInteger(number, into: &out)
        case .double(let number):
            guard number.isFinite else { throw EncodingFailure(keyPath: "") }
            out.append(contentsOf: number.description.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                do { try write(element, into: &out) } catch { throw EncodingFailure(keyPath: "[\(index)]" + (error.keyPath.hasPrefix("[") || error.keyPath.isEmpty ? "" : ".") + error.keyPath) }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                try self.member(key, member, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeInteger(_ number: Int, into out: inout [UInt8]) {
        // Up to 15 digits, `String(number)` is a small string: no allocation.
        out.append(contentsOf: String(number).utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy their UTF-8 at once.
        guard needsEscape(text.utf8.span) else {
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ bytes: Span<UInt8>) -> Bool {
        for index in bytes.indices where bytes[index] < 0x20 || bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "\\") {
            return true
        }
        return false
    }

    /// Reads one JSON value (with nothing but whitespace after it); nil when the text is not JSON.
    static func decode(_ bytes: [UInt8]) -> JSONValue? {
        var reader = Reader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        // Not a ternary: `value : nil` would read nil as JSON null (JSONValue is nil-literal expressible).
        guard reader.index == bytes.count else { return nil }
        return value
    }

    /// A one-pass reader over UTF-8 bytes. Every method returns nil on malformed input.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            guard index < bytes.count, depth < 512 else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
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

        /// A string starting at the opening quote.
        mutating func string() -> String? {
            index += 1
            let start = index
            // Fast path: no escapes.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            var scalars = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: scalars, as: UTF8.self)
                case UInt8(ascii: "\\"):
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
                default: scalars.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                code = code << 4 | UInt32(digit)
            }
            return code
        }

        mutating func number() -> JSONValue? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            guard skipDigits() else { return nil }
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard skipDigits() else { return nil }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integral = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard skipDigits() else { return nil }
            }
            if integral {
                var magnitude: UInt64 = 0
                var overflow = false
                for byte in bytes[digitsStart..<index] {
                    let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                    magnitude = sum
                    overflow = overflow || o1 || o2
                }
                let negative = digitsStart > start
                if !overflow, negative ? magnitude <= UInt64(Int64.max) + 1 : magnitude <= UInt64(Int64.max) {
                    return .int(negative ? Int(truncatingIfNeeded: 0 &- magnitude) : Int(magnitude))
                }
            }
            return Double(String(decoding: bytes[start..<index], as: UTF8.self)).map(JSONValue.double)
        }

        /// Skips a run of digits; false when there was none.
        mutating func skipDigits() -> Bool {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index > start
        }
    }
}
