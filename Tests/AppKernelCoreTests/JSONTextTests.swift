import AppKernelCore
import Foundation
import Testing

/// The one JSON text reader (`JSONValue(jsonData:)`, behind SmartStore's entries and REST
/// answers) refuses bytes that are not UTF-8 instead of repairing them with U+FFFD, as
/// RFC 8259 §8.1 requires and Foundation's `JSONSerialization` does: a repaired string would
/// silently change a record's value.
struct JSONTextTests {
    @Test(arguments: [
        [0x22, 0xFF, 0x22],                    // a byte that never occurs in UTF-8
        [0x22, 0xC3, 0x22],                    // a sequence cut short
        [0x22, 0xED, 0xA0, 0x80, 0x22],        // an encoded surrogate
        [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22],  // an overlong "/" after an escape
    ] as [[UInt8]])
    func textThatIsNotUTF8IsRefused(bytes: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try JSONValue(jsonData: Data(bytes)) }
    }

    @Test func validUTF8IsKeptExactly() throws {
        #expect(try JSONValue(jsonData: Data(#"["café \n ☃ 𝄞"]"#.utf8)) == .array([.string("café \n ☃ 𝄞")]))
    }
}
