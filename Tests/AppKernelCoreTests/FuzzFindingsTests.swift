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
}
