import AppKernelCore
import Foundation
import Testing

/// Inputs the libFuzzer targets (Fuzz/Targets, `.ci/fuzz`) found to break a parser, kept as
/// tests; the crashing inputs themselves are in the targets' seed corpora.
struct FuzzFindingsTests {
    /// 2,400 nested '[' overflowed the stack of the config reader's JSON scanner (a recursive
    /// descent without a limit). It now refuses documents nested deeper than 512 levels.
    @Test func deeplyNestedJSONIsRefusedNotACrash() throws {
        for opener in ["[", "{\"a\":"] {
            let deep = Data(String(repeating: opener, count: 100_000).utf8)
            #expect(throws: ConfigError.self) { try ConfigParser.parseJSON(deep, file: "deep.json") }
        }
        let nested = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try ConfigParser.parseJSON(Data(nested.utf8), file: "nested.json") }
        let tooDeep = "[" + nested + "]"
        let error = try #require(throws: ConfigError.self) { try ConfigParser.parseJSON(Data(tooDeep.utf8), file: "deep.json") }
        #expect(error.code == .malformed)
    }

    /// A binary property list whose top object is a set of dictionaries crashed the process in
    /// Foundation's reader (a bad pointer bridging the set to Swift). The config reader now
    /// refuses property lists that hold a set before Foundation reads them.
    @Test func aBinaryPropertyListWithASetIsRefusedNotACrash() throws {
        // bplist00: a set (0xC1) of one dictionary (0xD0, empty); offsets 8 and 10; trailer.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xC1, 0x01, 0xD0]
        let table = bytes.count
        bytes += [8, 10]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        let error = try #require(throws: ConfigError.self) { try ConfigParser.parsePropertyList(Data(bytes), file: "set.plist") }
        #expect(error.reason.contains("set"))
        // An ordinary binary property list still reads.
        let plain = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2], "b": "c"], format: .binary, options: 0)
        let value = try ConfigParser.parsePropertyList(plain, file: "plain.plist")
        #expect(try value.required("b").string() == "c")
    }
}
