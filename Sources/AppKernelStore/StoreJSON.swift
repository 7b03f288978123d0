import AppKernelCore

/// The JSON text of soup entries: compact UTF-8 written straight into a byte buffer and read back
/// in one pass by Core's reader (``JSONValue/init(jsonData:)``'s). It is on every upsert's and
/// query's path, so it avoids Foundation's `JSONSerialization` (and its `NSDictionary` round
/// trip). What is written reads back as it was: `.int` as digits, `.double` always with a
/// fraction or an exponent (`1.0`), so ``JSONValue``'s number rule gives back the same kind.
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

    /// How many levels of objects and arrays `value` nests (`1` for `[1]`, `0` for a scalar),
    /// counted up to `limit + 1` (meaning "deeper than `limit`"): the walk never goes deeper, so
    /// its recursion stays bounded whatever the value.
    static func depth(of value: JSONValue, limit: Int) -> Int {
        switch value {
        case .array, .object: if limit <= 0 { return 1 }
        default: return 0
        }
        switch value {
        case .array(let elements):
            var deepest = 0
            for element in elements {
                deepest = max(deepest, depth(of: element, limit: limit - 1))
                if deepest >= limit { break }
            }
            return 1 + deepest
        case .object(let members):
            var deepest = 0
            for member in members.values {
                deepest = max(deepest, depth(of: member, limit: limit - 1))
                if deepest >= limit { break }
            }
            return 1 + deepest
        default: return 0
        }
    }

    /// Reads one JSON value (with nothing but whitespace after it) with Core's reader, whose
    /// numbers follow ``JSONValue``'s number rule; nil when the text is not JSON.
    static func decode(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONValue(jsonBytes: bytes)
    }
}
