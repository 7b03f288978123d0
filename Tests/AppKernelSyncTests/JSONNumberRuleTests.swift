import AppKernelCore
import AppKernelREST
@testable import AppKernelStore
import Foundation
import Testing

/// The one number rule (``JSONValue``'s doc comment) across every reader of JSON text: the
/// configuration reader, SmartStore's entries and the REST client's responses give the same value
/// for the same literal. It lives here because this target links all three modules.
struct JSONNumberRuleTests {
    /// A literal and the value every reader gives it.
    static let numbers: [(literal: String, value: JSONValue)] = [
        ("0", .int(0)),
        ("-0", .int(0)),
        ("42", .int(42)),
        ("-12", .int(-12)),
        ("9007199254740993", .int(9_007_199_254_740_993)),
        ("9223372036854775807", .int(Int.max)),
        ("-9223372036854775808", .int(Int.min)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808)),
        ("-9223372036854775809", .double(-9_223_372_036_854_775_808)),   // the nearest Double
        ("18446744073709551616", .double(18_446_744_073_709_551_616)),
        ("123456789012345678901234567890", .double(1.2345678901234568e29)),
        ("1.0", .double(1)),
        ("-0.0", .double(-0.0)),
        ("1e3", .double(1000)),
        ("1E3", .double(1000)),
        ("1e+3", .double(1000)),
        ("2.5e-3", .double(0.0025)),
        ("0.1", .double(0.1)),
        ("-3.25", .double(-3.25)),
        ("1e-400", .double(0)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
    ]

    /// Literals no reader takes: not JSON numbers, or beyond `Double`.
    static let refused = ["1e400", "-1e400", "01", "-01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "1.5.2"]

    /// The value of `literal` as each reader reads it, by the reader's name; nil where it refuses.
    static func readings(of literal: String) -> [String: JSONValue?] {
        let document = Data(#"{"n": \#(literal)}"#.utf8)
        var readings: [String: JSONValue?] = [
            "config": (try? ConfigParser.parseJSON(document, file: "n.json").required("n"))?.jsonValue,
            "store": StoreJSON.decode(Array(document))?["n"],
            "rest": (try? RestResponse(status: 200, data: document).asJSON())?["n"],
        ]
        #if !canImport(Darwin)
        // Foundation's own parser, through `init(foundationObject:)` (as an app might): on Linux
        // its NSNumber types carry enough to follow the rule. Darwin's is another parser.
        readings["foundation"] = (try? JSONSerialization.jsonObject(with: document)).map(JSONValue.init(foundationObject:))?["n"]
        #endif
        return readings
    }

    @Test(arguments: numbers.indices)
    func everyReaderGivesANumberTheSameValue(index: Int) {
        let (literal, value) = Self.numbers[index]
        for (reader, reading) in Self.readings(of: literal) {
            #expect(reading == value, "\(reader) reads \(literal)")
            // -0.0 == 0.0, so the kind and the sign are checked apart.
            #expect(reading?.intValue == value.intValue, "\(reader) reads \(literal) as the same kind")
            #expect(reading?.doubleValue?.sign == value.doubleValue?.sign, "\(reader) keeps the sign of \(literal)")
        }
    }

    @Test(arguments: refused)
    func everyReaderRefusesTheSameLiterals(literal: String) {
        for (reader, reading) in Self.readings(of: literal) where reader != "foundation" {
            #expect(reading == Optional<JSONValue>.none, "\(reader) refuses \(literal)")
        }
    }

    @Test func aPropertyListsIntegersAndRealsFollowTheRule() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>i</key><integer>9007199254740993</integer><key>r</key><real>1</real></dict></plist>
            """
        let root = try ConfigParser.parsePropertyList(Data(plist.utf8), file: "n.plist")
        #expect(root.jsonValue == ["i": .int(9_007_199_254_740_993), "r": .double(1)])
    }

    @Test func whatTheStoreWritesReadsBackAsTheSameKind() throws {
        for (_, value) in Self.numbers {
            #expect(StoreJSON.decode(try StoreJSON.encode(value)) == value)
        }
    }
}
