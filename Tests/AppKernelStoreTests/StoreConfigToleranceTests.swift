import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// `userstore.json` read as the iOS SDK reads it: SFSDKStoreConfig.m (`registerSoups:`),
/// SFSoupIndex.m (`initWithDictionary:`, `columnType`) and SFSmartStore.m
/// (`registerSoupWithName:withIndexSpecs:…`, `columnNameForPath:inSoup:`).
struct StoreConfigToleranceTests {
    static let id = #"{"path": "Id", "type": "string"}"#

    /// What iOS goes on with: loaded with iOS's default and a warning at the key path; the strict
    /// reader refuses the same key path.
    @Test(arguments: [
        // SFSDKStoreConfig.m: `config[@"soups"]` nil → "No store config available", nothing registered.
        (#"{}"#, ["soups"], [SoupSpec]()),
        // registerSoups: "Soup already exists … skipping": the first definition stays.
        (#"{"soups": [{"soupName": "A", "indexes": [\#(id)]}, {"soupName": "A", "indexes": [{"path": "Name", "type": "string"}]}]}"#, ["soups[1].soupName"],
         [SoupSpec(name: "A", indexes: [IndexSpec(path: "Id", type: .string)])]),
        // SFSoupIndex.m columnType: no type is a TEXT column.
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name"}]}]}"#,
         ["soups[0].indexes[1].type"],
         [SoupSpec(name: "A", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "Name", type: .string)])]),
        // columnNameForPath:inSoup: the last index of a path is the one queried.
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "string"}, {"path": "N", "type": "string"}, {"path": "Id", "type": "integer"}]}]}"#,
         ["soups[0].indexes[2].path"], [SoupSpec(name: "A", indexes: [IndexSpec(path: "N", type: .string), IndexSpec(path: "Id", type: .integer)])]),
        // SFSoupIndex reads columnName and registerSoup computes its own.
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "string", "columnName": 7}]}]}"#, ["soups[0].indexes[0].columnName"],
         [SoupSpec(name: "A", indexes: [IndexSpec(path: "Id", type: .string)])]),
    ])
    func whatIOSToleratesLoadsWithAWarning(_ json: String, _ keyPaths: [String], _ soups: [SoupSpec]) throws {
        let config = try StoreConfig.load(json: json)
        #expect(config.soups == soups)
        #expect(config.warnings.map(\.keyPath) == keyPaths)
        #expect(config.warnings.allSatisfy { $0.file == "userstore.json" && $0.line != nil && !$0.message.isEmpty })
        let strict = #expect(throws: ConfigError.self) { _ = try StoreConfig.parseSoups(Data(json.utf8)) }
        #expect(strict?.keyPath == keyPaths.first)
    }

    /// What iOS fails on: refused by both readers, naming the key path.
    @Test(arguments: [
        ("{\"soups\": [", ConfigError.Code.malformed, ""),                                              // not JSON: iOS registers no soup at all
        (#"["soups"]"#, .wrongType, ""),                                                                  // root not an object: crash
        (#"{"soups": {"soupName": "A"}}"#, .wrongType, "soups"),                                          // for-in over a dictionary: crash
        (#"{"soups": ["A"]}"#, .wrongType, "soups[0]"),                                                   // a string has no keys: crash
        (#"{"soups": [{"indexes": [\#(id)]}]}"#, .missingKey, "soups[0].soupName"),                       // "Bogus soupName"
        (#"{"soups": [{"soupName": "", "indexes": [\#(id)]}]}"#, .invalidValue, "soups[0].soupName"),     // "Bogus soupName"
        (#"{"soups": [{"soupName": "A"}]}"#, .missingKey, "soups[0].indexes"),                            // "Bogus indexSpecs"
        (#"{"soups": [{"soupName": "A", "indexes": []}]}"#, .invalidValue, "soups[0].indexes"),           // "Bogus indexSpecs"
        (#"{"soups": [{"soupName": "A", "indexes": ["Id"]}]}"#, .wrongType, "soups[0].indexes[0]"),       // initWithDictionary: on a string: crash
        (#"{"soups": [{"soupName": "A", "indexes": [{"type": "string"}]}]}"#, .missingKey, "soups[0].indexes[0].path"),
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": 3}]}]}"#, .wrongType, "soups[0].indexes[0].type"),  // isEqualToString: on a number
        // Refused on purpose though iOS goes on (DESIGN, "config files"): a key the SDK does not
        // read (iOS ignores it; a misspelt key would be lost in silence) and an index type it
        // does not know (SFSoupIndex.m columnType makes it TEXT; "integr" would compare as text).
        (#"{"version": 2, "soups": []}"#, .unknownKey, "version"),
        (#"{"soups": [{"soupName": "A", "indexes": [\#(id)], "comment": "x"}]}"#, .unknownKey, "soups[0].comment"),
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "text"}]}]}"#, .unknownValue, "soups[0].indexes[0].type"),
    ])
    func whatIOSFailsOnIsRefused(_ json: String, _ code: ConfigError.Code, _ keyPath: String) {
        let error = #expect(throws: ConfigError.self) { _ = try StoreConfig.load(json: json) }
        #expect(error?.code == code)
        if !keyPath.isEmpty { #expect(error?.keyPath == keyPath) }
        #expect(error?.file == "userstore.json")
    }

    /// The SDK's template file (its sample apps' `userstore.json`) loads without a warning.
    @Test func theSDKsOwnFileLoadsClean() throws {
        let config = try StoreConfig.load(json: """
        {"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "full_text"},
                   {"path": "__local__", "type": "string"}, {"path": "Owner.Name", "type": "json1"}, {"path": "NumberOfEmployees", "type": "integer"},
                   {"path": "AnnualRevenue", "type": "floating"}]}]}
        """)
        #expect(config.warnings.isEmpty)
        #expect(config.soups.first?.indexes.count == 6)
        #expect(config.warnings.first?.description == nil)
        let warned = try StoreConfig.load(json: #"{"soups": [{"soupName": "A", "indexes": [{"path": "Id"}]}]}"#)
        #expect(warned.warnings.first?.description.hasPrefix("userstore.json:1: soups[0].indexes[0].type: the required key 'type' is missing") == true)
    }

    /// A decimal in an `integer` index: iOS binds the number as it is and the INTEGER column's
    /// affinity keeps 2.5 (SFSmartStore.m `projectIndexedPaths`); Android stores `longValue()`,
    /// 2. AppKernel follows iOS.
    @Test func aDecimalInAnIntegerIndexIsKeptAsIOSKeepsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        let config = try StoreConfig.load(json: #"{"soups": [{"soupName": "A", "indexes": [{"path": "n", "type": "integer"}]}]}"#)
        try store.registerSoups(config.soups)
        try store.upsert([["n": 2.5], ["n": 2]], intoSoup: "A")
        #expect(try store.count(.exact(soupName: "A", path: "n", matchKey: 2.5)) == 1)
        #expect(try store.count(.exact(soupName: "A", path: "n", matchKey: 2)) == 1)
        #expect(try store.query(.smart("SELECT {A:n} FROM {A} ORDER BY 1")) == [[2], [2.5]])
    }
}
