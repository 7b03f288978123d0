import AppKernelAuth
import Foundation
import Testing
import AppKernelSDK

struct BootConfigTests {
    @Test func aCompleteFileLoads() throws {
        let config = try BootConfig.parse(json: Data("""
        {"remoteAccessConsumerKey": "3MVG9-key", "oauthRedirectURI": "myapp://oauth/done",
         "oauthScopes": ["api", "refresh_token"], "shouldAuthenticate": false, "loginHost": "https://test.salesforce.com"}
        """.utf8))
        #expect(config == BootConfig(remoteAccessConsumerKey: "3MVG9-key", oauthRedirectURI: "myapp://oauth/done",
                                     oauthScopes: ["api", "refresh_token"], shouldAuthenticate: false, loginHost: "https://test.salesforce.com"))
        #expect(config.oauthConfig.tokenURL.absoluteString == "https://test.salesforce.com/services/oauth2/token")
    }

    @Test func defaultsApply() throws {
        let config = try BootConfig.parse(json: Data(#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b"}"#.utf8))
        #expect(config.shouldAuthenticate)
        #expect(config.oauthScopes.isEmpty)
        #expect(config.loginHost == "https://login.salesforce.com")
    }

    @Test(arguments: [
        (#"{"oauthRedirectURI": "a://b"}"#, ConfigError.Code.missingKey, "remoteAccessConsumerKey", "the required key 'remoteAccessConsumerKey' is missing"),
        (#"{"remoteAccessConsumerKey": 3, "oauthRedirectURI": "a://b"}"#, .wrongType, "remoteAccessConsumerKey", "expected a string, found a number"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "shouldAuthenticate": "yes"}"#, .wrongType, "shouldAuthenticate", "expected true or false, found a string"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "oauthScopes": "api"}"#, .wrongType, "oauthScopes", "expected an array, found a string"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "oauthScopes": ["api", 1]}"#, .wrongType, "oauthScopes[1]", "expected a string, found a number"),
        (#"{"remoteAccessConsumerKey": " ", "oauthRedirectURI": "a://b"}"#, .invalidValue, "remoteAccessConsumerKey", "is empty; copy the consumer key of your connected app"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "no scheme"}"#, .invalidValue, "oauthRedirectURI", "'no scheme' is not a URL with a scheme (e.g. myapp://oauth/done)"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "loginHost": "ftp://x"}"#, .invalidValue, "loginHost", "'ftp://x' is not an http(s) URL"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "oauthScopes": ["api web"]}"#, .invalidValue, "oauthScopes[0]", "'api web' is not a single scope name"),
        (#"{"remoteAccessConsumerKey": "k", "oauthRedirectURI": "a://b", "oauthScope": []}"#, .unknownKey, "oauthScope",
         "unknown key 'oauthScope'; expected one of attemptOfflineLoad, errorPage, isLocal, loginHost, oauthRedirectURI, oauthScopes, remoteAccessConsumerKey, shouldAuthenticate, startPage, unauthenticatedStartPage"),
        (#"{"remoteAccessConsumerKey": "k", "remoteAccessConsumerKey": "k2", "oauthRedirectURI": "a://b"}"#, .duplicateName, "remoteAccessConsumerKey",
         "the key 'remoteAccessConsumerKey' appears twice in one object"),
    ])
    func everyProblemNamesItsKey(_ json: String, _ code: ConfigError.Code, _ keyPath: String, _ reason: String) {
        let error = #expect(throws: ConfigError.self) { _ = try BootConfig.parse(json: Data(json.utf8)) }
        #expect(error?.code == code)
        #expect(error?.keyPath == keyPath)
        #expect(error?.reason == reason)
        #expect(error?.file == "bootconfig.json")
    }

    @Test func malformedJSONNamesTheLineAndColumn() {
        let error = #expect(throws: ConfigError.self) {
            _ = try BootConfig.parse(json: Data("{\n  \"remoteAccessConsumerKey\": \"k\",\n  \"oauthRedirectURI\": \"a://b\"\n  \"oauthScopes\": []\n}".utf8))
        }
        #expect(error?.code == .malformed)
        #expect(error?.line == 4)
        #expect(error?.column == 3)
        #expect(error?.description == "bootconfig.json:4:3: malformed JSON: expected ',' or '}' in an object")
    }

    @Test func filesLoadFromADirectoryAsJSONOrPlist() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = #expect(throws: ConfigError.self) { _ = try BootConfig.load(fromDirectory: directory) }
        #expect(missing?.code == .unreadableFile)
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>remoteAccessConsumerKey</key><string>3MVG9-plist</string>
          <key>oauthRedirectURI</key><string>myapp://done</string>
          <key>oauthScopes</key><array><string>api</string></array>
          <key>shouldAuthenticate</key><false/>
        </dict></plist>
        """
        try Data(plist.utf8).write(to: directory.appendingPathComponent("bootconfig.plist"))
        let fromPlist = try BootConfig.load(fromDirectory: directory)
        #expect(fromPlist.remoteAccessConsumerKey == "3MVG9-plist")
        #expect(!fromPlist.shouldAuthenticate)
        try Data(#"{"remoteAccessConsumerKey": "3MVG9-json", "oauthRedirectURI": "myapp://done"}"#.utf8)
            .write(to: directory.appendingPathComponent("bootconfig.json"))
        #expect(try BootConfig.load(fromDirectory: directory).remoteAccessConsumerKey == "3MVG9-json", "JSON is preferred")
        try Data("<plist><dict><key>oauthRedirectURI</key><integer>3</integer></dict></plist>".utf8)
            .write(to: directory.appendingPathComponent("bad.plist"))
        let wrong = #expect(throws: ConfigError.self) { _ = try BootConfig.load(contentsOf: directory.appendingPathComponent("bad.plist")) }
        #expect(wrong?.file == "bad.plist")
    }

    static func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>remoteAccessConsumerKey</key><string>3MVG9-plist</string>
          <key>oauthRedirectURI</key><string>myapp://done</string>
          \(body)
        </dict></plist>
        """
    }

    @Test(arguments: [
        ("<key>shouldAuthenticate</key><integer>1</integer>", ConfigError.Code.wrongType, "shouldAuthenticate", "expected true or false, found a number"),
        ("<key>oauthScopes</key><array><string>api</string><true/></array>", .wrongType, "oauthScopes[1]", "expected a string, found a Boolean"),
        ("<key>loginHost</key><string>ftp://x</string>", .invalidValue, "loginHost", "'ftp://x' is not an http(s) URL"),
        ("<key>oauthScope</key><array/>", .unknownKey, "oauthScope",
         "unknown key 'oauthScope'; expected one of attemptOfflineLoad, errorPage, isLocal, loginHost, oauthRedirectURI, oauthScopes, remoteAccessConsumerKey, shouldAuthenticate, startPage, unauthenticatedStartPage"),
    ])
    func aPlistBootConfigNamesTheKeyPathWithoutAPosition(_ body: String, _ code: ConfigError.Code, _ keyPath: String, _ reason: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.plist(body).utf8).write(to: directory.appendingPathComponent("bootconfig.plist"))
        let error = #expect(throws: ConfigError.self) { _ = try BootConfig.load(fromDirectory: directory) }
        #expect(error == ConfigError(code: code, file: "bootconfig.plist", keyPath: keyPath, reason: reason))
        #expect(error?.description == "bootconfig.plist: \(keyPath): \(reason)", "property lists give no line or column")
    }

    @Test func aJSONBootConfigNamesTheLineAndColumnOfABadValue() {
        let text = "{\n  \"remoteAccessConsumerKey\": \"k\",\n  \"oauthRedirectURI\": \"a://b\",\n  \"oauthScopes\": [\"api\", \"web\"]\n}"
        #expect(throws: Never.self) { _ = try BootConfig.parse(json: Data(text.utf8)) }
        let wrong = #expect(throws: ConfigError.self) { _ = try BootConfig.parse(json: Data(text.replacingOccurrences(of: "\"web\"", with: "7").utf8)) }
        #expect(wrong?.description == "bootconfig.json:4:26: oauthScopes[1]: expected a string, found a number")
        let invalid = #expect(throws: ConfigError.self) {
            _ = try BootConfig.parse(json: Data(text.replacingOccurrences(of: "\"a://b\"", with: "\"no scheme\"").utf8))
        }
        #expect(invalid?.code == .invalidValue)
        #expect(invalid?.description == "bootconfig.json:3:23: oauthRedirectURI: 'no scheme' is not a URL with a scheme (e.g. myapp://oauth/done)",
                "a check made after parsing still names the value's line and column")
        let unknown = #expect(throws: ConfigError.self) { _ = try BootConfig.parse(json: Data(text.replacingOccurrences(of: "oauthScopes", with: "scopes").utf8)) }
        #expect(unknown?.description == "bootconfig.json:4:13: scopes: unknown key 'scopes'; expected one of attemptOfflineLoad, errorPage, "
                + "isLocal, loginHost, oauthRedirectURI, oauthScopes, remoteAccessConsumerKey, shouldAuthenticate, startPage, unauthenticatedStartPage")
    }
}

struct StoreConfigTests {
    static let soups = """
    {"soups": [
      {"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "full_text"}]},
      {"soupName": "Contact", "indexes": [{"path": "Id", "type": "string"}, {"path": "Age", "type": "integer"}]}
    ]}
    """
    static let syncs = """
    {"syncs": [
      {"syncName": "syncDownAccounts", "syncType": "syncDown", "soupName": "Account",
       "target": {"type": "soql", "query": "SELECT Id, Name FROM Account LIMIT 25"},
       "options": {"fieldlist": ["Id", "Name"], "mergeMode": "LEAVE_IF_CHANGED"}},
      {"syncName": "syncUpContacts", "syncType": "syncUp", "soupName": "Contact",
       "target": {"createFieldlist": ["LastName"]}, "options": {"fieldlist": ["Id", "LastName"], "mergeMode": "OVERWRITE"}}
    ]}
    """

    static let idIndex = #"{"path": "Id", "type": "string"}"#

    @Test func theTemplatesFilesParse() throws {
        let soups = try StoreConfig.parseSoups(Data(Self.soups.utf8))
        #expect(soups == [SoupSpec(name: "Account", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "Name", type: .fullText)]),
                          SoupSpec(name: "Contact", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "Age", type: .integer)])])
        let syncs = try SyncConfig.parseSyncs(Data(Self.syncs.utf8), soupNames: ["Account", "Contact"])
        var syncUp = SyncSpec(name: "syncUpContacts", type: .syncUp, soupName: "Contact", createFieldlist: ["LastName"],
                              fieldlist: ["Id", "LastName"], mergeMode: .overwrite)
        syncUp.target.syncUpKind = .collection   // no implementation named: the default
        #expect(syncs == [SyncSpec(name: "syncDownAccounts", type: .syncDown, soupName: "Account", targetType: .soql,
                                   query: "SELECT Id, Name FROM Account LIMIT 25", fieldlist: ["Id", "Name"], mergeMode: .leaveIfChanged),
                          syncUp])
    }

    @Test(arguments: [
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "text"}]}]}"#, ConfigError.Code.unknownValue, "soups[0].indexes[0].type",
         "unknown index type 'text'; expected one of string, integer, floating, full_text, json1"),
        (#"{"soups": [{"soupName": "A", "indexes": [\#(idIndex)]}, {"soupName": "A", "indexes": [\#(idIndex)]}]}"#, .duplicateName, "soups[1].soupName", "the soup 'A' is defined twice"),
        (#"{"soups": [{"soupName": "A", "indexes": []}]}"#, .invalidValue, "soups[0].indexes", "the soup 'A' needs at least one index (SmartStore refuses a soup without)"),
        (#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "string"}, {"path": "Id", "type": "integer"}]}]}"#, .duplicateName,
         "soups[0].indexes[1].path", "the soup 'A' indexes 'Id' twice"),
        (#"{"soups": [{"indexes": []}]}"#, .missingKey, "soups[0].soupName", "the required key 'soupName' is missing"),
        (#"{"soups": {"soupName": "A"}}"#, .wrongType, "soups", "expected an array, found an object"),
        (#"{"soups": [{"soupName": "", "indexes": []}]}"#, .invalidValue, "soups[0].soupName", "a soup needs a name"),
    ])
    func everySoupProblemNamesItsKeyPath(_ json: String, _ code: ConfigError.Code, _ keyPath: String, _ reason: String) {
        let error = #expect(throws: ConfigError.self) { _ = try StoreConfig.parseSoups(Data(json.utf8)) }
        #expect(error?.code == code)
        #expect(error?.keyPath == keyPath)
        #expect(error?.reason == reason)
        #expect(error?.file == "userstore.json")
    }

    static func sync(_ fields: String) -> String { "{\"syncs\": [\(validSync), \(fields)]}" }
    static let validSync = #"{"syncName": "ok", "syncType": "syncDown", "soupName": "Account", "target": {"type": "mru", "sobjectType": "Account", "fieldlist": ["Id"]}, "options": {"mergeMode": "OVERWRITE"}}"#
    static let mru = #""target": {"type": "mru", "sobjectType": "Account", "fieldlist": ["Id"]}"#
    static let options = #""options": {"mergeMode": "OVERWRITE"}"#

    // Issue 33: no options, empty options and a custom target without androidImpl load now, as
    // on iOS (SFSyncOptions.m, SFSyncDownTarget.m): AppKernelSyncTests' SyncConfigWarningTests.
    @Test(arguments: [
        (sync(#"{"syncName": "s", "syncType": "syncSideways", "soupName": "Account", "target": {}}"#), ConfigError.Code.unknownValue,
         "syncs[1].syncType", "unknown sync type 'syncSideways'; expected one of syncDown, syncUp"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soqll"}}"#), .unknownValue,
         "syncs[1].target.type", "unknown target type 'soqll'; expected one of mru, soql, sosl, refresh, parent_children, custom, metadata, layout, briefcase"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql"}, \#(options)}"#), .missingKey,
         "syncs[1].target.query", "a soql target needs a query"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", \#(mru), "options": {"mergeMode": "MERGE"}}"#),
         .unknownValue, "syncs[1].options.mergeMode", "unknown merge mode 'MERGE'; expected one of OVERWRITE, LEAVE_IF_CHANGED"),
        (sync(#"{"syncName": "ok", "syncType": "syncDown", "soupName": "Account", \#(mru), \#(options)}"#), .duplicateName,
         "syncs[1].syncName", "the sync 'ok' is defined twice"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Lead", \#(mru), \#(options)}"#), .unknownSoup,
         "syncs[1].soupName", "the soup 'Lead' does not exist; define it in userstore.json first"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account"}"#), .missingKey, "syncs[1].target", "the required key 'target' is missing"),
        (sync(#"{"syncName": "s", "syncType": "syncUp", "soupName": "Account", "target": {"createFieldlist": "Name"}, \#(options)}"#), .wrongType,
         "syncs[1].target.createFieldlist", "expected an array, found a string"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "qeury": "x"}, \#(options)}"#), .unknownKey,
         "syncs[1].target.qeury", "unknown key 'qeury'; expected one of androidImpl, iOSImpl, idFieldName, maxBatchSize, modificationDateFieldName, query, type"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "mru", "objectType": "Account", "fieldlist": ["Id"]}, \#(options)}"#),
         .unknownKey, "syncs[1].target.objectType", "unknown key 'objectType'; expected one of androidImpl, fieldlist, iOSImpl, idFieldName, modificationDateFieldName, sobjectType, type"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "mru", "fieldlist": ["Id"]}, \#(options)}"#),
         .missingKey, "syncs[1].target.sobjectType", "a mru target names its object type"),
        (sync(#"{"syncName": "s", "syncType": "syncUp", "soupName": "Account", "target": {"type": "batch"}, \#(options)}"#), .unknownValue,
         "syncs[1].target.type", "unknown sync-up target type 'batch'; expected one of rest"),
        (sync(#"{"syncName": "s", "syncType": "syncDown", "soupName": "Account", "target": {"type": "layout", "sobjectType": "Account", "layoutType": "Tall"}, \#(options)}"#),
         .unknownValue, "syncs[1].target.layoutType", "unknown layout type 'Tall'; expected one of Compact, Full"),
    ])
    func everySyncProblemNamesItsKeyPath(_ json: String, _ code: ConfigError.Code, _ keyPath: String, _ reason: String) {
        let error = #expect(throws: ConfigError.self) { _ = try SyncConfig.parseSyncs(Data(json.utf8), soupNames: ["Account"]) }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.keyPath == keyPath)
        #expect(error?.reason == reason)
        #expect(error?.file == "usersyncs.json")
    }

    @Test func aBadSyncValueNamesItsLineColumnAndKeyPath() {
        let text = "{\"syncs\": [\n  {\"syncName\": \"a\", \"syncType\": \"syncDown\", \"soupName\": \"Account\",\n   \"target\": {\"type\": \"soqll\"}}\n]}"
        let error = #expect(throws: ConfigError.self) { _ = try SyncConfig.parseSyncs(Data(text.utf8), soupNames: ["Account"]) }
        #expect(error?.description == "usersyncs.json:3:23: syncs[0].target.type: unknown target type 'soqll'; expected one of mru, soql, sosl, "
                + "refresh, parent_children, custom, metadata, layout, briefcase")
    }

    @Test func malformedSyncsNameTheLine() {
        let error = #expect(throws: ConfigError.self) {
            _ = try SyncConfig.parseSyncs(Data("{\"syncs\": [\n  {\"syncName\": \"a\",\n   \"syncType\": syncDown}\n]}".utf8), soupNames: [])
        }
        #expect(error?.line == 3)
        #expect(error?.description == "usersyncs.json:3:16: malformed JSON: unexpected character 's'")
    }
}
