import AppKernelCore
import Testing

struct ConfigErrorTests {
    @Test func theDescriptionSaysWhereAndWhat() {
        #expect(ConfigError(code: .wrongType, file: "a.json", keyPath: "syncs[2].target.type", line: 7, column: 22, reason: "expected a string, found a number")
            .description == "a.json:7:22: syncs[2].target.type: expected a string, found a number")
        #expect(ConfigError(code: .malformed, file: "a.json", keyPath: "", line: 3, column: 1, reason: "malformed JSON: x").description
            == "a.json:3:1: malformed JSON: x")
        #expect(ConfigError(code: .invalidValue, file: "a.json", keyPath: "k", line: 4, reason: "r").description == "a.json:4: k: r")
        #expect(ConfigError(code: .wrongType, file: "a.plist", keyPath: "k", reason: "r").description == "a.plist: k: r",
                "no position for property lists")
        #expect(ConfigError(code: .unreadableFile, file: "a.json", keyPath: "", reason: "cannot be read").description == "a.json: cannot be read")
    }

    @Test func theShortInitializersLeaveThePositionOut() {
        let plain = ConfigError(code: .unreadableFile, file: "f", keyPath: "", reason: "r")
        #expect(plain.line == nil && plain.column == nil)
        let withLine = ConfigError(code: .missingKey, file: "f", keyPath: "k", line: 2, reason: "r")
        #expect(withLine.line == 2 && withLine.column == nil)
        #expect(ConfigError.Code(rawValue: "unknownSoup") == .unknownSoup)
    }
}
