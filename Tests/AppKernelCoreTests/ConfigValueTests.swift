import AppKernelCore
import Foundation
import Testing

struct ConfigValueTests {
    enum Mode: String, CaseIterable { case fast, safe }

    let root: ConfigValue

    init() throws {
        root = try ConfigParser.parseJSON(Data("""
        {"name": "n", "count": 2, "ratio": 0.5, "on": true, "tags": ["a", "b"],
         "nested": {"mode": "slow", "zz": 1, "aa": 2}, "nothing": null}
        """.utf8), file: "c.json")
    }

    @Test func typedAccessorsReturnTheirValue() throws {
        #expect(try root.required("name").string() == "n")
        #expect(try root.required("count").int() == 2)
        #expect(try root.required("ratio").number() == 0.5)
        #expect(try root.required("on").bool())
        #expect(try root.required("tags").strings() == ["a", "b"])
        #expect(try root.member("absent") == nil)
        #expect(try root.object().count == 7)
    }

    /// A key, the accessor applied to it, and the reason of the error it gets.
    static let wrongTypes: [(key: String, access: @Sendable (ConfigValue) throws -> Void, reason: String)] = [
        ("name", { _ = try $0.int() }, "expected a whole number, found a string"),
        ("name", { _ = try $0.number() }, "expected a number, found a string"),
        ("count", { _ = try $0.string() }, "expected a string, found a number"),
        ("count", { _ = try $0.bool() }, "expected true or false, found a number"),
        ("on", { _ = try $0.array() }, "expected an array, found a Boolean"),
        ("tags", { _ = try $0.object() }, "expected an object, found an array"),
        ("nothing", { _ = try $0.strings() }, "expected an array, found null"),
    ]

    @Test(arguments: wrongTypes.indices)
    func aWrongTypeNamesWhatWasExpectedAndFound(index: Int) throws {
        let (key, access, reason) = Self.wrongTypes[index]
        let value = try root.required(key)
        let error = #expect(throws: ConfigError.self) { try access(value) }
        #expect(error?.code == .wrongType)
        #expect(error?.reason == reason)
        #expect(error?.keyPath == key)
        #expect(error?.line == value.line && error?.column == value.column)
    }

    @Test func aFractionIsNotAWholeNumber() throws {
        let error = #expect(throws: ConfigError.self) { _ = try root.required("ratio").int() }
        #expect(error?.code == .invalidValue)
        #expect(error?.reason == "expected a whole number, found 0.5")
    }

    @Test func aMissingKeyIsNamedByItsFullPathAtItsObject() throws {
        let nested = try root.required("nested")
        let error = #expect(throws: ConfigError.self) { _ = try nested.required("level") }
        #expect(error == ConfigError(code: .missingKey, file: "c.json", keyPath: "nested.level", line: 2, column: 12,
                                     reason: "the required key 'level' is missing"))
    }

    @Test func anUnknownKeyListsTheAllowedOnes() throws {
        let nested = try root.required("nested")
        let error = #expect(throws: ConfigError.self) { try nested.onlyKeys(["mode", "aa", "level"]) }
        #expect(error?.code == .unknownKey)
        #expect(error?.keyPath == "nested.zz", "the first unknown key, in the file's order")
        #expect(error?.reason == "unknown key 'zz'; expected one of aa, level, mode")
        #expect(error?.description == "c.json:2:35: nested.zz: unknown key 'zz'; expected one of aa, level, mode")
        try nested.onlyKeys(["mode", "zz", "aa"])
    }

    @Test func aValueOutsideAFixedListListsTheAllowedOnes() throws {
        let error = #expect(throws: ConfigError.self) { _ = try root.required("nested").required("mode").oneOf(Mode.self, what: "mode") }
        #expect(error?.code == .unknownValue)
        #expect(error?.reason == "unknown mode 'slow'; expected one of fast, safe")
        #expect(try ConfigParser.parseJSON(Data(#""safe""#.utf8), file: "m.json").oneOf(Mode.self, what: "mode") == .safe)
    }

    @Test func aLaterCheckIsLocatedByItsKeyPath() throws {
        let later = ConfigError(code: .invalidValue, file: "c.json", keyPath: "tags[1]", reason: "'b' is not allowed")
        #expect(root.value(atKeyPath: "tags[1]")?.column == 67)
        #expect(root.locating(later).description == "c.json:1:67: tags[1]: 'b' is not allowed")
        let elsewhere = ConfigError(code: .invalidValue, file: "other.json", keyPath: "tags[1]", reason: "r")
        #expect(root.locating(elsewhere) == elsewhere, "another file's error is left alone")
        let unknown = ConfigError(code: .invalidValue, file: "c.json", keyPath: "tags[9]", reason: "r")
        #expect(root.locating(unknown) == unknown)
    }

    @Test func aJSONValueConvertsWithKeyPathsAndNoPositions() throws {
        let value = ConfigValue(["b": [1, "x"], "a": ["on": true]] as JSONValue, file: "mem")
        #expect(try value.object().map(\.key) == ["a", "b"])
        let element = try value.required("b").array()[1]
        #expect(element.keyPath == "b[1]" && element.line == nil && element.column == nil)
        #expect(try value.required("a").required("on").bool())
        #expect(value.typeName == "an object")
    }
}
