import AppKernelCore
@testable import AppKernelStore
import Foundation
import Testing

/// The entries' JSON text: what goes in comes out, with its types.
struct StoreJSONTests {
    func roundTrip(_ value: JSONValue) throws -> JSONValue? {
        StoreJSON.decode(try StoreJSON.encode(value))
    }

    @Test func valuesRoundTripWithTheirTypes() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -1, .int(Int.max), .int(Int.min), 0.5, -2.25, 1e-7, 6.02e23, .double(Double.leastNonzeroMagnitude), 1.0,
            "", "plain", "quote \" backslash \\ slash / tab \t newline \n return \r bell \u{07} nul \u{00}", "é ü 中文 😀 \u{10FFFF}",
            [], [1, [2, [3, ["deep": [nil]]]]], [:], ["a": ["b": ["c": "d"]], "list": [true, 1, 1.5, "x"]],
        ]
        for value in values {
            #expect(try roundTrip(value) == value, "\(value)")
        }
        // 1.0 stays a double, 1 an int.
        #expect(try roundTrip(1.0) == .double(1))
        #expect(try roundTrip(1) == .int(1))
    }

    @Test func entriesGetTheStoresMembersFirstAndOnce() throws {
        var out: [UInt8] = []
        try StoreJSON.encode(["Name": "x", "_soupEntryId": 99, "_soupLastModifiedDate": "old"], entryID: 7, lastModified: 1_700_000_000_000, into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.hasPrefix(#"{"_soupEntryId":7,"_soupLastModifiedDate":1700000000000,"#))
        #expect(StoreJSON.decode(out) == ["_soupEntryId": 7, "_soupLastModifiedDate": 1_700_000_000_000, "Name": "x"])
    }

    @Test func aNonFiniteNumberIsRefusedWithItsKeyPath() {
        var out: [UInt8] = []
        #expect(throws: StoreJSON.EncodingFailure(keyPath: "Owner.scores[2]")) {
            try StoreJSON.encode(["Owner": ["scores": [1, 2, .double(.infinity)]]], entryID: 1, lastModified: 0, into: &out)
        }
        #expect(throws: StoreJSON.EncodingFailure(keyPath: "nan")) { try StoreJSON.encode(["nan": .double(.nan)], entryID: 1, lastModified: 0, into: &out) }
    }

    @Test func textThatIsNotJSONIsNil() {
        for text in ["", "{", "[1,]", "{\"a\" 1}", "tru", "01x", "\"unterminated", "{\"a\":1} trailing", "\"\\ud800\"", "\"\\q\"", "-", "1.", "1e"] {
            #expect(StoreJSON.decode(Array(text.utf8)) == Optional<JSONValue>.none, "\(text)")
        }
        #expect(StoreJSON.decode(Array(" {\"a\" : [ 1 , 2 ] } ".utf8)) == ["a": [1, 2]])
        #expect(StoreJSON.decode(Array("\"\\ud83d\\ude00\"".utf8)) == "😀")
        #expect(StoreJSON.decode(Array("18446744073709551616".utf8)) == .double(18446744073709551616), "past Int64: a double")
    }
}
