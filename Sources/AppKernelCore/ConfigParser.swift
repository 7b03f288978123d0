public import Foundation

/// Reads a configuration file — strict JSON or a property list — into a ``ConfigValue`` tree.
///
/// JSON is parsed here, strictly (RFC 8259: no comments, no trailing commas, no leading zeros, no
/// key twice in one object), keeping each value's line and column; the first error names its
/// line and column. Numbers follow ``JSONValue``'s number rule. Property lists go through `PropertyListSerialization` and
/// ``JSONValue/init(foundationObject:)`` (so `<true/>` stays a Boolean and `<integer>1</integer>`
/// a number); Foundation reports no positions for them, so their values and errors have none.
public enum ConfigParser {
    /// How a configuration file is written.
    public enum Format: Sendable, Hashable {
        /// JSON.
        case json
        /// A property list (XML or binary).
        case propertyList

        /// The format of `data` named `file`: a property list when the name ends in `.plist` or the
        /// data starts with `<?xml` or `bplist`; JSON otherwise.
        public init(file: String, data: Data) {
            let isPropertyList = file.hasSuffix(".plist") || data.starts(with: Array("<?xml".utf8)) || data.starts(with: Array("bplist".utf8))
            self = isPropertyList ? .propertyList : .json
        }
    }

    /// Reads the file at `url` and parses it in the format ``Format/init(file:data:)`` picks.
    /// - Throws: ``ConfigError``: `unreadableFile`, or as ``parse(_:file:format:)``.
    public static func load(contentsOf url: URL) throws(ConfigError) -> ConfigValue {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ConfigError(code: .unreadableFile, file: url.lastPathComponent, keyPath: "",
                              reason: "cannot be read: \(error.localizedDescription)")
        }
        return try parse(data, file: url.lastPathComponent)
    }

    /// Parses `data` as JSON or as a property list.
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - file: The name errors give the file.
    ///   - format: How it is written; `nil` picks by ``Format/init(file:data:)``.
    /// - Throws: ``ConfigError`` (`malformed`, `duplicateName`).
    public static func parse(_ data: Data, file: String, format: Format? = nil) throws(ConfigError) -> ConfigValue {
        switch format ?? Format(file: file, data: data) {
        case .json: try parseJSON(data, file: file)
        case .propertyList: try parsePropertyList(data, file: file)
        }
    }

    /// Parses strict JSON, keeping each value's line and column.
    /// - Throws: ``ConfigError``: `malformed` with the line and column of the first problem;
    ///   `duplicateName` for a key given twice in one object.
    public static func parseJSON(_ data: Data, file: String) throws(ConfigError) -> ConfigValue {
        var scanner = JSONScanner(bytes: Array(data), file: file)
        return try scanner.document()
    }

    /// Parses a property list; its values have key paths but no positions (Foundation's parser
    /// gives none).
    /// - Throws: ``ConfigError`` `malformed` when it is not a property list.
    public static func parsePropertyList(_ data: Data, file: String) throws(ConfigError) -> ConfigValue {
        // Foundation's reader (swift-corelibs-foundation, Swift 6.3) crashes the process bridging
        // a binary property list's set of dictionaries to Swift — the config fuzz target found it.
        // Config files never hold sets: such a file is refused before Foundation reads it.
        if BinaryPropertyList.containsSet([UInt8](data)) {
            throw ConfigError(code: .malformed, file: file, keyPath: "", reason: "not a valid property list: it holds a set")
        }
        let object: Any
        do { object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
            throw ConfigError(code: .malformed, file: file, keyPath: "", reason: "not a valid property list: \(error.localizedDescription)")
        }
        return ConfigValue(JSONValue(foundationObject: object), file: file)
    }
}

/// Just enough of the binary property list format (`bplist00`: objects, an offset table and a
/// 32-byte trailer) to find a set among the objects (marker `0xC_`).
enum BinaryPropertyList {
    static func containsSet(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 40, bytes.starts(with: Array("bplist".utf8)) else { return false }
        let trailer = bytes.count - 32
        /// The big-endian unsigned integer of `size` bytes at `start`, if it is inside the file.
        func integer(at start: Int, size: Int) -> Int? {
            guard (1...8).contains(size), start >= 0, start <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for byte in bytes[start..<start + size] { value = value << 8 | UInt64(byte) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        let offsetSize = Int(bytes[trailer + 6])
        guard (1...8).contains(offsetSize), let count = integer(at: trailer + 8, size: 8),
              let table = integer(at: trailer + 24, size: 8), table < trailer else { return false }
        for index in 0..<min(count, (trailer - table) / offsetSize) {
            guard let offset = integer(at: table + index * offsetSize, size: offsetSize), offset < trailer else { continue }
            if bytes[offset] & 0xF0 == 0xC0 { return true }
        }
        return false
    }
}

/// The JSON parser behind ``ConfigParser/parseJSON(_:file:)``: one pass over the UTF-8 bytes,
/// tracking the line and where it starts so that every value and error has a line and column.
private struct JSONScanner {
    /// How deeply objects and arrays may nest (as Foundation's JSON parser allows).
    static let maximumDepth = 512
    let bytes: [UInt8]
    let file: String
    var index = 0
    /// How many objects and arrays enclose the value being read.
    var depth = 0
    var line = 1
    var lineStart = 0
    /// A place on the current line whose column is known, so that columns are counted once.
    var columnMark = (index: 0, column: 1)

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    /// The column of `index`, counting characters (UTF-8 continuation bytes do not count).
    mutating func column() -> Int {
        if columnMark.index < lineStart || columnMark.index > index { columnMark = (lineStart, 1) }
        columnMark.column += bytes[columnMark.index..<index].reduce(0) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        columnMark.index = index
        return columnMark.column
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func document() throws(ConfigError) -> ConfigValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }  // a UTF-8 byte-order mark
        skipWhitespace()
        let root = try value(at: "")
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the end of the document") }
        return root
    }

    /// A `malformed` error at `index`.
    mutating func failure(_ reason: String) -> ConfigError {
        ConfigError(code: .malformed, file: file, keyPath: "", line: line, column: column(), reason: "malformed JSON: \(reason)")
    }

    /// A `malformed` error at `position`, an earlier place on the current line.
    mutating func failure(_ reason: String, at position: Int) -> ConfigError {
        index = position
        return failure(reason)
    }

    /// The character at `position`, for error messages.
    func character(at position: Int) -> String {
        String(decoding: bytes[position..<min(position + 4, bytes.count)], as: UTF8.self).first.map(String.init) ?? "?"
    }

    mutating func skipWhitespace() {
        while let byte = current {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    /// Consumes `byte` (after white space) and returns true, or returns false leaving it.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    mutating func value(at keyPath: String) throws(ConfigError) -> ConfigValue {
        guard let byte = current else { throw failure("the document ends where a value was expected") }
        let (startLine, startColumn) = (line, column())
        func make(_ kind: ConfigValue.Kind) -> ConfigValue {
            ConfigValue(kind: kind, file: file, keyPath: keyPath, line: startLine, column: startColumn)
        }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Each level is a few stack frames: a limit keeps a hostile file from overflowing the
            // stack (a crash the config fuzz target found with 2,400 '[').
            guard depth < Self.maximumDepth else { throw failure("the document nests deeper than \(Self.maximumDepth) levels") }
            depth += 1
            defer { depth -= 1 }
            return byte == UInt8(ascii: "{") ? make(.object(try members(of: keyPath))) : make(.array(try elements(of: keyPath)))
        case UInt8(ascii: "\""): return make(.string(try string()))
        case UInt8(ascii: "t"): try literal("true"); return make(.bool(true))
        case UInt8(ascii: "f"): try literal("false"); return make(.bool(false))
        case UInt8(ascii: "n"): try literal("null"); return make(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try number() {
            case .int(let number): return make(.int(number))
            case let other: return make(.double(other.doubleValue ?? 0))
            }
        default: throw failure("unexpected character '\(character(at: index))'")
        }
    }

    mutating func members(of keyPath: String) throws(ConfigError) -> [(key: String, value: ConfigValue)] {
        index += 1
        var members: [(key: String, value: ConfigValue)] = []
        if consume(UInt8(ascii: "}")) { return members }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes") }
            let key = try string()
            guard consume(UInt8(ascii: ":")) else { throw failure("expected ':' after the key '\(key)'") }
            skipWhitespace()
            let memberPath = ConfigValue.keyPath(keyPath, member: key)
            let value = try value(at: memberPath)
            if members.contains(where: { $0.key == key }) {
                throw value.error(.duplicateName, "the key '\(key)' appears twice in one object")
            }
            members.append((key, value))
            if consume(UInt8(ascii: ",")) { continue }
            if consume(UInt8(ascii: "}")) { return members }
            throw failure(current == nil ? "the document ends inside an object" : "expected ',' or '}' in an object")
        }
    }

    mutating func elements(of keyPath: String) throws(ConfigError) -> [ConfigValue] {
        index += 1
        var elements: [ConfigValue] = []
        if consume(UInt8(ascii: "]")) { return elements }
        while true {
            skipWhitespace()
            elements.append(try value(at: ConfigValue.keyPath(keyPath, element: elements.count)))
            if consume(UInt8(ascii: ",")) { continue }
            if consume(UInt8(ascii: "]")) { return elements }
            throw failure(current == nil ? "the document ends inside an array" : "expected ',' or ']' in an array")
        }
    }

    mutating func literal(_ literal: String) throws(ConfigError) {
        let expected = Array(literal.utf8)
        guard bytes[index...].starts(with: expected) else { throw failure("expected '\(literal)'") }
        index += expected.count
    }

    /// A number: its syntax checked here, for errors with positions; its value by
    /// ``JSONValue``'s number rule (`.int` or `.double`).
    mutating func number() throws(ConfigError) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }
        func digits() -> Int {
            let from = index
            while isDigit(current) { index += 1 }
            return index - from
        }
        let leadingZero = current == UInt8(ascii: "0")
        let integerDigits = digits()
        guard integerDigits > 0 else { throw failure("a number needs digits") }
        guard !leadingZero || integerDigits == 1 else { throw failure("a number does not start with 0 followed by more digits", at: start) }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number needs digits in its exponent") }
        }
        guard let number = JSONValue.number(literal: bytes[start..<index]) else { throw failure("the number is out of range") }
        return number
    }

    mutating func string() throws(ConfigError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll()
        }
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                index += 1
                scalars.append(try escape())
            case 0..<0x20:
                throw failure(byte == UInt8(ascii: "\n") ? "a string is not closed before the end of the line" : "a control character inside a string")
            default:
                raw.append(byte)
                index += 1
            }
        }
        throw failure("the document ends inside a string")
    }

    /// The character an escape stands for; `index` is just past the backslash, and is left past
    /// the escape.
    mutating func escape() throws(ConfigError) -> UnicodeScalar {
        guard let byte = current else { throw failure("the document ends inside a string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let code = try hexQuad()
            // A high surrogate followed by `\u` and a low one is one character outside the BMP.
            if (0xD800...0xDBFF).contains(code), bytes[index...].starts(with: Array("\\u".utf8)) {
                let mark = index
                index += 2
                let low = try hexQuad()
                if (0xDC00...0xDFFF).contains(low) { return UnicodeScalar(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}" }
                index = mark
            }
            return UnicodeScalar(code) ?? "\u{FFFD}"
        default:
            throw failure("unknown escape '\\\(character(at: index - 1))'", at: index - 2)
        }
    }

    /// Four hexadecimal digits.
    mutating func hexQuad() throws(ConfigError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = current.flatMap({ Character(UnicodeScalar($0)).hexDigitValue }) else {
                throw failure("a \\u escape needs four hexadecimal digits")
            }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }
}
