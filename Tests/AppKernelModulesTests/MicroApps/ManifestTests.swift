import Foundation
import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

/// A class, so that each test's temporary directory is removed when the test ends.
@MainActor
final class ManifestTests {
    let hosts = KeptHosts()
    let trace = CallLog()
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var classes: ModuleClassRegistry {
        var classes = ModuleClassRegistry()
        classes.registerApplication("HomeDelegate") { [trace] in RecordingApp(name: "Home", trace: trace) }
        classes.registerApplication("TransferDelegate") { [trace] in RecordingApp(name: "Transfer", trace: trace) }
        for name in ["KeychainService", "SessionService", "FeedService", "GeoService"] {
            classes.registerService(name) { [trace] in LoggingService(name, log: trace) }
        }
        return classes
    }

    func write(_ text: String, to name: String = "MobileRuntime.json") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    func context() throws -> Context {
        try hosts.context()
    }

    static let complete = """
    {
      "launcher": "Home",
      "applications": [{ "name": "Home", "delegate": "HomeDelegate" },
                       { "name": "Transfer", "delegate": "TransferDelegate" }],
      "services": [
        { "name": "session", "class": "SessionService", "dependencies": ["keychain"] },
        { "name": "keychain", "class": "KeychainService", "lazyLoading": false },
        { "name": "geo", "class": "GeoService", "lazyLoading": true },
        { "name": "feed", "class": "FeedService", "dependencies": ["session"], "optional": true }
      ],
      "autoStartGroups": { "home": ["feed"] }
    }
    """

    @Test func aManifestRegistersAppsServicesAndGroupsThatThenBoot() async throws {
        let context = try context()
        try context.loadManifest(at: try write(Self.complete), classes: classes)
        #expect(context.registeredApplicationNames == ["Home", "Transfer"])
        #expect(context.launcherName == "Home")
        #expect(context.autoStartGroups == ["home"])
        #expect(context.services.registeredNames == ["session", "keychain", "geo", "feed"])
        try await context.startServices()
        #expect(context.services.startOrder == ["keychain", "session", "feed"])
        #expect(context.services.state(of: "geo") == .registered, "lazy")
        #expect(context.startLauncher())
        #expect(context.currentApplication?.name == "Home")
    }

    @Test func aPropertyListIsAcceptedToo() throws {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>launcher</key><string>Home</string>
          <key>applications</key><array><dict><key>name</key><string>Home</string><key>delegate</key><string>HomeDelegate</string></dict></array>
          <key>services</key><array><dict><key>name</key><string>geo</string><key>class</key><string>GeoService</string>
            <key>lazyLoading</key><true/></dict></array>
        </dict></plist>
        """
        let manifest = try RuntimeManifest(contentsOf: try write(plist, to: "MobileRuntime.plist"))
        #expect(manifest.launcher == "Home")
        #expect(manifest.applications.map(\.name) == ["Home"])
        #expect(manifest.applications.map(\.delegate) == ["HomeDelegate"])
        #expect(manifest.services.map(\.lazyLoading) == [true])
        let bad = plist.replacingOccurrences(of: "<true/>", with: "<integer>1</integer>")
        #expect(throws: ConfigError(code: .wrongType, file: "MobileRuntime.plist", keyPath: "services[0].lazyLoading",
                                    reason: "expected true or false, found a number")) {
            try RuntimeManifest(contentsOf: try write(bad, to: "MobileRuntime.plist"))
        }
    }

    /// Each broken manifest and the error it gets: file, key path, reason.
    nonisolated static let parseErrors: [(json: String, keyPath: String, reason: String)] = [
        ("{", "", "malformed JSON"),
        ("[]", "", "expected an object, found an array"),
        (#"{"launcher": 3}"#, "launcher", "expected a string, found a number"),
        (#"{"lancher": "Home"}"#, "lancher", "unknown key 'lancher'; expected one of Applications, Launcher, Services, ServicesMap, applications, autoStartGroups, launcher, services"),
        (#"{"launcher": "Home"}"#, "launcher", "'Home' is not among the applications"),
        (#"{"applications": {}}"#, "applications", "expected an array, found an object"),
        (#"{"applications": [{"delegate": "HomeDelegate"}]}"#, "applications[0].name", "the required key 'name' is missing"),
        (#"{"applications": [{"name": "", "delegate": "D"}]}"#, "applications[0].name", "must not be empty"),
        (#"{"applications": [{"name": "A", "delegate": "D", "mode": 1}]}"#, "applications[0].mode", "unknown key 'mode'; expected one of delegate, description, entry, icon, name, title"),
        (#"{"applications": [{"name": "A", "delegate": "D"}, {"name": "A", "delegate": "E"}]}"#, "applications[1].name", "the application 'A' is listed twice"),
        (#"{"services": [{"name": "s"}]}"#, "services[0].class", "the required key 'class' is missing"),
        (#"{"services": [{"name": "s", "class": "C", "lazyLoading": "yes"}]}"#, "services[0].lazyLoading", "expected true or false, found the string 'yes'"),
        (#"{"services": [{"name": "s", "class": "C", "lazyLoading": 1}]}"#, "services[0].lazyLoading", "expected true or false, found a number"),
        (#"{"services": [{"name": "s", "class": "C", "dependencies": [null]}]}"#, "services[0].dependencies[0]", "expected a string, found null"),
        (#"{"services": [{"name": "s", "class": "C"}, {"name": "s", "class": "C"}]}"#, "services[1].name", "the service 's' is listed twice"),
        (#"{"services": [{"name": "s", "class": "C"}], "autoStartGroups": {"g": ["t"]}}"#, "autoStartGroups.g[0]", "'t' is not among the services"),
        (#"{"services": [{"name": "s", "class": "C"}], "autoStartGroups": {"a": ["s"], "b": ["s"]}}"#, "autoStartGroups.b[0]", "'s' is already in the group 'a'"),
        (#"{"autoStartGroups": ["s"]}"#, "autoStartGroups", "expected an object, found an array"),
    ]

    @Test(arguments: parseErrors.indices)
    func everyParseErrorNamesTheFileAndKeyPath(index: Int) throws {
        let (json, keyPath, reason) = Self.parseErrors[index]
        let url = try write(json)
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: url) }
        #expect(error?.file == "MobileRuntime.json")
        #expect(error?.keyPath == keyPath)
        #expect(error?.reason.hasPrefix(reason) == true, "\(error?.reason ?? "")")
    }

    @Test func aBrokenJSONManifestNamesTheLineAndColumn() throws {
        let lazy = Self.complete.replacingOccurrences(of: #""lazyLoading": true"#, with: #""lazyLoading": "yes""#)
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: try write(lazy)) }
        #expect(error == ConfigError(code: .wrongType, file: "MobileRuntime.json", keyPath: "services[2].lazyLoading", line: 8, column: 60,
                                     reason: "expected true or false, found the string 'yes'"))
        #expect(error?.description == "MobileRuntime.json:8:60: services[2].lazyLoading: expected true or false, found the string 'yes'")
        let trailingComma = Self.complete.replacingOccurrences(of: #""dependencies": ["session"], "optional": true }"#,
                                                               with: #""dependencies": ["session"], "optional": true },"#)
        let malformed = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: try write(trailingComma)) }
        #expect(malformed?.description == "MobileRuntime.json:10:3: malformed JSON: unexpected character ']'")
        let launcher = #expect(throws: ConfigError.self) {
            try RuntimeManifest(data: Data(Self.complete.replacingOccurrences(of: #""launcher": "Home""#, with: #""launcher": "Away""#).utf8),
                                file: "MobileRuntime.json")
        }
        #expect(launcher?.description == "MobileRuntime.json:2:15: launcher: 'Away' is not among the applications")
        #expect(launcher?.code == .unknownReference)
    }

    @Test func aPlistManifestWithAWrongTypeNamesTheKeyPath() throws {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>services</key><array><dict><key>name</key><string>geo</string><key>class</key><string>GeoService</string>
            <key>dependencies</key><array><string>keychain</string><integer>2</integer></array></dict></array>
        </dict></plist>
        """
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: try write(plist, to: "MobileRuntime.plist")) }
        #expect(error == ConfigError(code: .wrongType, file: "MobileRuntime.plist", keyPath: "services[0].dependencies[1]",
                                     reason: "expected a string, found a number"))
        #expect(error?.line == nil, "property lists give no positions")
    }

    @Test func anUnknownKeyListsTheAllowedKeys() throws {
        let typo = Self.complete.replacingOccurrences(of: #""lazyLoading": false"#, with: #""lazyLoad": false"#)
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: try write(typo)) }
        #expect(error?.code == .unknownKey)
        #expect(error?.keyPath == "services[1].lazyLoad")
        #expect(error?.reason == "unknown key 'lazyLoad'; expected one of class, dependencies, lazyLoading, name, optional, welcomPageAfterLoading")
        #expect(error?.line == 7)
    }

    @Test func aMissingFileIsNamed() {
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: directory.appendingPathComponent("Absent.json")) }
        #expect(error?.file == "Absent.json")
        #expect(error?.code == .unreadableFile)
        #expect(error?.reason.hasPrefix("cannot be read") == true)
    }

    nonisolated static let loadErrors: [(json: String, keyPath: String, reason: String)] = [
        (#"{"applications": [{"name": "A", "delegate": "NoSuchDelegate"}]}"#, "applications[0].delegate", "no application class named 'NoSuchDelegate' is registered"),
        (#"{"services": [{"name": "s", "class": "NoSuchService"}]}"#, "services[0].class", "no service class named 'NoSuchService' is registered"),
        (#"{"services": [{"name": "s", "class": "GeoService", "dependencies": ["ghost"]}]}"#, "services[0].dependencies[0]",
         "'s' depends on 'ghost', which is not registered (s → ghost)"),
        (#"{"services": [{"name": "a", "class": "GeoService", "dependencies": ["b"]}, {"name": "b", "class": "GeoService", "dependencies": ["a"]}]}"#,
         "services[0].dependencies", "services depend on each other in a cycle: a → b → a"),
        (#"{"applications": [{"name": "Existing", "delegate": "HomeDelegate"}]}"#, "applications[0].name", "an application named 'Existing' is already registered"),
        (#"{"services": [{"name": "existing", "class": "GeoService"}]}"#, "services[0].name", "a service named 'existing' is already registered"),
    ]

    @Test(arguments: loadErrors.indices)
    func aManifestThatCannotLoadRegistersNothing(index: Int) throws {
        let (json, keyPath, reason) = Self.loadErrors[index]
        let context = try context()
        context.registerApplication(named: "Existing") { RecordingApp(name: "Existing", trace: CallLog()) }
        context.services.register(named: "existing") { LoggingService("existing", log: CallLog()) }
        let valid = #"{"name": "Home", "delegate": "HomeDelegate"}, "#
        let withValidApp = json.replacingOccurrences(of: #""applications": ["#, with: #""applications": ["# + valid)
        let error = #expect(throws: ConfigError.self) {
            try context.load(try RuntimeManifest(data: Data(withValidApp.utf8), file: "MobileRuntime.json"), classes: classes)
        }
        let shifted = keyPath.replacingOccurrences(of: "applications[0]", with: "applications[1]")
        #expect(error?.description == "MobileRuntime.json: \(shifted): \(reason)")
        #expect(context.registeredApplicationNames == ["Existing"], "nothing half-registered")
        #expect(context.services.registeredNames == ["existing"])
        #expect(context.launcherName == nil)
    }
}
