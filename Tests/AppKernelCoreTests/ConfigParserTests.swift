import AppKernelCore
import Foundation
import Testing
import TestSupport

struct ConfigParserTests {
    static func json(_ text: String, file: String = "config.json") throws(ConfigError) -> ConfigValue {
        try ConfigParser.parseJSON(Data(text.utf8), file: file)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":}", "\"open", "{\"a\": 1} x", "[01x]", "{\"a\": tru}", "\"bad \\q\"", "[1e]",
                      "01", "-", "1.", "[1 2]", "{\"a\" 1}", "{a: 1}", "// comment\n{}", "\"\\u12G4\"", "1e999", "{\"a\": 1,}"].map(OneLine.init))
    func malformedDocumentsAreRefusedWithALineAndColumn(_ example: OneLine<String>) {
        let text = example.value
        let error = #expect(throws: ConfigError.self) { _ = try Self.json(text) }
        #expect(error?.code == .malformed, "\(text): \(String(describing: error))")
        #expect(error?.line != nil && error?.column != nil)
        #expect(error?.reason.hasPrefix("malformed JSON: ") == true)
        #expect(error?.keyPath == "")
    }

    /// Broken documents, and the line, column and reason of the error each gets.
    static let positioned: [(text: String, line: Int, column: Int, reason: String)] = [
        ("{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':' after the key 'b'"),
        ("[1,\n 2,\n ]", 3, 2, "unexpected character ']'"),
        ("{\"a\": \"x\ny\"}", 1, 9, "a string is not closed before the end of the line"),
        ("{\"é\": tru}", 1, 7, "expected 'true'"),  // columns count characters, not bytes
        ("{\"a\": [1, 2]\n\n  \"b\": 3}", 3, 3, "expected ',' or '}' in an object"),
        ("[\"a\", \"b\"", 1, 10, "the document ends inside an array"),
        ("{}\n  x", 2, 3, "unexpected text after the end of the document"),
        ("[007]", 1, 2, "a number does not start with 0 followed by more digits"),
        ("{\"a\": \"\\x\"}", 1, 8, "unknown escape '\\x'"),
        ("\r\n\r\n  ¿", 3, 3, "unexpected character '¿'"),
    ]

    @Test(arguments: positioned.indices)
    func malformedJSONNamesLineColumnAndReason(index: Int) {
        let (text, line, column, reason) = Self.positioned[index]
        let error = #expect(throws: ConfigError.self) { _ = try Self.json(text) }
        #expect(error?.line == line, "\(text)")
        #expect(error?.column == column, "\(text)")
        #expect(error?.reason == "malformed JSON: \(reason)")
        #expect(error?.description == "config.json:\(line):\(column): malformed JSON: \(reason)")
    }

    @Test func aKeyGivenTwiceIsADuplicateAtItsSecondValue() {
        let error = #expect(throws: ConfigError.self) { _ = try Self.json(#"{"a": 1, "a": 2}"#) }
        #expect(error == ConfigError(code: .duplicateName, file: "config.json", keyPath: "a", line: 1, column: 15,
                                     reason: "the key 'a' appears twice in one object"))
        let nested = #expect(throws: ConfigError.self) { _ = try Self.json("{\"s\": [{\"x\": 1,\n \"x\": 2}]}") }
        #expect(nested?.description == "config.json:2:7: s[0].x: the key 'x' appears twice in one object")
    }

    @Test func everyValueKnowsItsKeyPathLineAndColumn() throws {
        let root = try Self.json("{\n  \"soups\": [\n    {\"name\": 3, \"tags\": [\"a\", true]}\n  ]\n}")
        #expect(root.keyPath == "" && root.line == 1 && root.column == 1)
        let soups = try root.required("soups")
        #expect(soups.keyPath == "soups" && soups.line == 2 && soups.column == 12)
        let entry = try soups.array()[0]
        let name = try entry.required("name")
        #expect(name.keyPath == "soups[0].name" && name.line == 3 && name.column == 14)
        let error = #expect(throws: ConfigError.self) { _ = try name.string() }
        #expect(error?.description == "config.json:3:14: soups[0].name: expected a string, found a number")
        let tag = #expect(throws: ConfigError.self) { _ = try entry.required("tags").strings() }
        #expect(tag?.description == "config.json:3:31: soups[0].tags[1]: expected a string, found a Boolean")
    }

    @Test func escapesUnicodeAndAByteOrderMarkParse() throws {
        let value = try Self.json(#"{"name": "Caf\u00e9 \ud83d\ude00 \"q\"\n\/\t", "raw": "é😀"}"#)
        #expect(try value.required("name").string() == "Café 😀 \"q\"\n/\t")
        #expect(try value.required("raw").string() == "é😀")
        #expect(try Self.json("\u{FEFF}{\"a\": 1}").required("a").int() == 1)
        #expect(try Self.json(#"["\ud800x"]"#).array()[0].string() == "\u{FFFD}x", "a lone surrogate is replaced")
    }

    @Test func numbersLiteralsAndNullParse() throws {
        let value = try Self.json(#"[0, -12, 3.25, 1e3, -2E-2, true, false, null]"#).array()
        #expect(try value[0...4].map { try $0.number() } == [0, -12, 3.25, 1000, -0.02])
        #expect(try value[5].bool() && !(try value[6].bool()))
        guard case .null = value[7].kind else { Issue.record("expected null"); return }
    }

    static let plist = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0"><dict>
      <key>name</key><string>app</string>
      <key>flags</key><dict><key>on</key><true/><key>count</key><integer>1</integer></dict>
      <key>list</key><array><string>a</string><real>2.5</real></array>
    </dict></plist>
    """

    @Test func aPropertyListBecomesTheSameTreeWithBooleansApartFromNumbers() throws {
        let root = try ConfigParser.parsePropertyList(Data(Self.plist.utf8), file: "app.plist")
        try root.onlyKeys(["name", "flags", "list"])
        #expect(try root.required("name").string() == "app")
        let flags = try root.required("flags")
        #expect(try flags.object().map(\.key) == ["count", "on"], "members sorted, as a property list has no order")
        #expect(try flags.required("on").bool())
        #expect(try flags.required("count").int() == 1)
        #expect(try root.required("list").array()[1].number() == 2.5)
        let notABool = #expect(throws: ConfigError.self) { _ = try flags.required("count").bool() }
        #expect(notABool == ConfigError(code: .wrongType, file: "app.plist", keyPath: "flags.count", reason: "expected true or false, found a number"))
        #expect(notABool?.line == nil && notABool?.column == nil, "Foundation gives no positions for property lists")
        #expect(notABool?.description == "app.plist: flags.count: expected true or false, found a number")
        let notANumber = #expect(throws: ConfigError.self) { _ = try flags.required("on").int() }
        #expect(notANumber?.reason == "expected a whole number, found a Boolean")
    }

    @Test func aBrokenPropertyListIsMalformedWithoutAPosition() {
        let error = #expect(throws: ConfigError.self) {
            _ = try ConfigParser.parsePropertyList(Data("<plist><dict><key>a</key></plist>".utf8), file: "bad.plist")
        }
        #expect(error?.code == .malformed)
        #expect(error?.file == "bad.plist")
        #expect(error?.line == nil)
        #expect(error?.reason.hasPrefix("not a valid property list") == true)
    }

    @Test func theFormatFollowsTheNameThenTheContents() throws {
        #expect(ConfigParser.Format(file: "a.plist", data: Data("{}".utf8)) == .propertyList)
        #expect(ConfigParser.Format(file: "a.json", data: Data("{}".utf8)) == .json)
        #expect(ConfigParser.Format(file: "data", data: Data("<?xml version=\"1.0\"?>".utf8)) == .propertyList)
        #expect(ConfigParser.Format(file: "data", data: Data("bplist00".utf8)) == .propertyList)
        #expect(throws: ConfigError.self) { _ = try ConfigParser.parse(Data(Self.plist.utf8), file: "x.json", format: .json) }
        #expect(try ConfigParser.parse(Data(Self.plist.utf8), file: "x").required("name").string() == "app")
    }

    @Test func filesLoadByTheirFormatAndAMissingOneIsUnreadable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("settings.json")
        try Data("{\n  \"retries\": \"3\"\n}".utf8).write(to: json)
        let retries = try ConfigParser.load(contentsOf: json).required("retries")
        let error = #expect(throws: ConfigError.self) { _ = try retries.int() }
        #expect(error?.description == "settings.json:2:14: retries: expected a whole number, found a string")
        let plist = directory.appendingPathComponent("settings.plist")
        try Data(Self.plist.utf8).write(to: plist)
        #expect(try ConfigParser.load(contentsOf: plist).required("name").string() == "app")
        let missing = #expect(throws: ConfigError.self) { _ = try ConfigParser.load(contentsOf: directory.appendingPathComponent("absent.json")) }
        #expect(missing?.code == .unreadableFile)
        #expect(missing?.file == "absent.json")
        #expect(missing?.reason.hasPrefix("cannot be read: ") == true)
    }
}
