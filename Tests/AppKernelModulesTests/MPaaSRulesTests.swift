import Foundation
import Testing
import AppKernel
import AppKernelCore
import AppKernelModules
import AppKernelTesting

/// mPaaS's documented rules, one test each, written from its framework headers (`DTContext.h`,
/// `DTFrameworkInterface.h`, `DTBootLoader.h`, `DTMicroApplication.h`) and its guides ("Create a
/// micro application", "Create a service", "Manage the micro application and service"). The
/// runtime file is ours, written with every key those documents (and mPaaS's own default runtime
/// file) use.
@MainActor
final class MPaaSRulesTests {
    let hosts = KeptHosts()
    let trace = CallLog()
    let clock = TestClock()
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mpaas-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A `MobileRuntime.plist` in mPaaS's own shape: `Launcher`, `Applications`, `Services` (a
    /// boolean and a string `lazyLoading`), and a `ServicesMap` with a run-once group, a
    /// synchronous and an asynchronous auto-start group, and a group nobody auto-starts.
    static let mobileRuntime = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
      <key>Launcher</key><string>Launcher</string>
      <key>Applications</key>
      <array>
        <dict>
          <key>name</key><string>Launcher</string>
          <key>delegate</key><string>LauncherDelegate</string>
          <key>description</key><string>the tab bar the app opens on</string>
        </dict>
        <dict>
          <key>name</key><string>20000050</string>
          <key>delegate</key><string>TransferDelegate</string>
          <key>description</key><string>money transfer</string>
        </dict>
      </array>
      <key>Services</key>
      <array>
        <dict>
          <key>name</key><string>KeychainService</string>
          <key>class</key><string>KeychainServiceImpl</string>
          <key>lazyLoading</key><false/>
        </dict>
        <dict>
          <key>name</key><string>ConfigService</string>
          <key>class</key><string>ConfigServiceImpl</string>
          <key>lazyLoading</key><string>true</string>
          <key>welcomPageAfterLoading</key><string>false</string>
        </dict>
      </array>
      <key>ServicesMap</key>
      <dict>
        <key>[AUTOSTART]</key>
        <array>
          <dict><key>name</key><string>AnalyticsGroup</string><key>asynchronous</key><true/></dict>
          <dict><key>name</key><string>HomeGroup</string><key>asynchronous</key><false/></dict>
        </array>
        <key>RunOnceServices</key>
        <array><dict><key>class</key><string>MigrationServiceImpl</string><key>name</key><string>MigrationService</string></dict></array>
        <key>HomeGroup</key>
        <array><dict><key>class</key><string>FeedServiceImpl</string><key>name</key><string>FeedService</string></dict></array>
        <key>AnalyticsGroup</key>
        <array><dict><key>class</key><string>AnalyticsServiceImpl</string><key>name</key><string>AnalyticsService</string></dict></array>
        <key>OnDemandGroup</key>
        <array><dict><key>class</key><string>MapServiceImpl</string><key>name</key><string>MapService</string></dict></array>
      </dict>
    </dict>
    </plist>
    """

    var classes: ModuleClassRegistry {
        var classes = ModuleClassRegistry()
        classes.registerApplication("LauncherDelegate") { [trace] in RecordingApp(name: "Launcher", trace: trace) }
        classes.registerApplication("TransferDelegate") { [trace] in RecordingApp(name: "Transfer", trace: trace) }
        for service in ["Keychain", "Config", "Migration", "Feed", "Map"] {
            classes.registerService("\(service)ServiceImpl") { [trace] in LoggingService(service, log: trace) }
        }
        classes.registerService("AnalyticsServiceImpl") { [trace, clock] in LoggingService("Analytics", log: trace, delay: .seconds(1), clock: clock) }
        return classes
    }

    func write(_ text: String, to name: String = "MobileRuntime.plist") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    // MARK: MobileRuntime

    @Test func mPaaSsOwnRuntimeFileLoadsWithEveryDocumentedKey() throws {
        let manifest = try RuntimeManifest(contentsOf: try write(Self.mobileRuntime))
        #expect(manifest.launcher == "Launcher")
        #expect(manifest.applications.map(\.name) == ["Launcher", "20000050"])
        #expect(manifest.applications.map(\.description) == ["the tab bar the app opens on", "money transfer"])
        // `Services` in the file's order, then the groups' (a property list's keys come sorted).
        #expect(manifest.services.map(\.name) == ["KeychainService", "ConfigService", "AnalyticsService", "FeedService", "MapService", "MigrationService"])
        #expect(manifest.services.first { $0.name == "ConfigService" }?.lazyLoading == true, "the string \"true\" is a flag")
        #expect(manifest.services.first { $0.name == "KeychainService" }?.lazyLoading == false)
        // The synchronous auto-start set, then the asynchronous one, then the rest.
        #expect(manifest.serviceGroups.map(\.name) == ["HomeGroup", "AnalyticsGroup", "OnDemandGroup", "RunOnceServices"])
        #expect(manifest.autoStartGroups.map(\.name) == ["HomeGroup", "AnalyticsGroup"])
        #expect(manifest.autoStartGroups.map(\.asynchronous) == [false, true])
    }

    @Test func theBootStartsRunOnceThenNonLazyThenGroupsThenTheLauncherAndLeavesTheAsynchronousGroupRunning() async throws {
        let url = try write(Self.mobileRuntime)
        let loader = ContextBootLoader { [classes] in try $0.loadManifest(at: url, classes: classes) }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        let context = try #require(loader.context)
        try await context.servicesReady()
        #expect(loader.state == .finished)
        #expect(context.currentApplication?.name == "Launcher")
        try await clock.waitForSleepers(1)
        #expect(trace.take() == [
            "Migration.created", "Migration.start", "Migration.started",
            "Keychain.created", "Keychain.start", "Keychain.started",
            "Feed.created", "Feed.start", "Feed.started",
            "Launcher.didCreate", "Launcher.shouldStart", "Launcher.willStart()", "Launcher.rootController", "Launcher.didFinishLaunching",
            "Analytics.created", "Analytics.start",
        ], "the launcher does not wait for the asynchronous group")
        #expect(context.services.state(of: "AnalyticsService") == .starting)
        #expect(context.services.state(of: "ConfigService") == .registered, "lazy")
        #expect(context.services.state(of: "MapService") == .registered, "a group nobody auto-starts")
        await clock.advance(by: .seconds(1))
        await context.asynchronousStart?.value
        #expect(trace.take() == ["Analytics.started"])
    }

    nonisolated static let mapErrors: [(body: String, keyPath: String, reason: String)] = [
        ("<key>[AUTOSTART]</key><array><dict><key>name</key><string>RunOnceServices</string></dict></array><key>RunOnceServices</key><array/>",
         "ServicesMap.[AUTOSTART][0].name", "'RunOnceServices' starts before every other service by itself; it must not be listed in [AUTOSTART]"),
        ("<key>[AUTOSTART]</key><array><dict><key>name</key><string>Nowhere</string></dict></array>",
         "ServicesMap.[AUTOSTART][0].name", "'Nowhere' is not among the ServicesMap's groups"),
        ("<key>G</key><array><dict><key>class</key><string>C</string><key>name</key><string>S</string><key>lazyLoading</key><true/></dict></array>",
         "ServicesMap.G[0].lazyLoading", "unknown key 'lazyLoading'"),
        ("<key>G</key><array><dict><key>class</key><string>C</string></dict></array>", "ServicesMap.G[0].name", "the required key 'name' is missing"),
        ("<key>[AUTOSTART]</key><array><dict><key>name</key><string>G</string><key>asynchronous</key><string>maybe</string></dict></array><key>G</key><array/>",
         "ServicesMap.[AUTOSTART][0].asynchronous", "expected true or false, found the string 'maybe'"),
    ]

    @Test(arguments: mapErrors.indices)
    func aBrokenServicesMapNamesItsKeyPath(index: Int) throws {
        let (body, keyPath, reason) = Self.mapErrors[index]
        let plist = "<plist version=\"1.0\"><dict><key>ServicesMap</key><dict>\(body)</dict></dict></plist>"
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(contentsOf: try self.write(plist)) }
        #expect(error?.file == "MobileRuntime.plist")
        #expect(error?.keyPath == keyPath)
        #expect(error?.reason.hasPrefix(reason) == true, "\(error?.reason ?? "")")
    }

    @Test func bothSpellingsOfOneKeyAreRefused() {
        let json = #"{"launcher": "A", "Launcher": "A", "applications": [{"name": "A", "delegate": "D"}]}"#
        let error = #expect(throws: ConfigError.self) { try RuntimeManifest(data: Data(json.utf8), file: "MobileRuntime.json") }
        #expect(error?.code == .duplicateName)
        #expect(error?.keyPath == "launcher")
    }

    @Test func aServiceOfAServicesMapGroupThatCannotLoadIsNamedWhereTheFileListsIt() throws {
        let context = try hosts.context()
        let plist = "<plist version=\"1.0\"><dict><key>ServicesMap</key><dict><key>G</key><array><dict><key>class</key><string>Missing</string><key>name</key><string>S</string></dict></array></dict></dict></plist>"
        let error = #expect(throws: ConfigError.self) { try context.loadManifest(at: try self.write(plist), classes: self.classes) }
        #expect(error?.keyPath == "ServicesMap.G[0].class")
        #expect(context.services.registeredNames.isEmpty)
    }

    // MARK: The app stack

    func stack(_ names: [String], configure: @escaping @MainActor (RecordingApp) -> Void = { _ in }) throws -> Context {
        try recordingContext(host: hosts.host(), trace: trace, names: names, configure: configure)
    }

    @Test func startingAnAppOnTheStackClearsWhatIsAboveItByDefault() throws {
        let context = try stack(["A", "B"])
        context.startApplication("A", params: [:], animated: false)
        let first = try #require(context.currentApplication)
        context.startApplication("B", params: [:], animated: false)
        _ = trace.take()
        #expect(context.startApplication("A", params: ["tab": "2"], launchMode: .push))
        #expect(context.applicationStack.map(\.name) == ["A"])
        #expect(context.currentApplication === first, "the same A, resumed")
        #expect(trace.take() == ["B.shouldTerminate", "B.willTerminate(animated: false)", "A.willResume(2)", "A.didResume", "A.didResumeWithOptions(2)"])
    }

    @Test func withoutClearTopTheOldInstanceExitsAndANewOneStartsOnTop() throws {
        let context = try stack(["A", "B"])
        context.startApplication("A", params: [:], animated: false)
        let first = try #require(context.currentApplication)
        context.startApplication("B", params: [:], animated: false)
        _ = trace.take()
        #expect(context.startApplication("A", params: ["tab": "2"], appClearTop: false, launchMode: .push))
        #expect(context.applicationStack.map(\.name) == ["B", "A"])
        #expect(context.currentApplication !== first, "a new A")
        #expect(first.state == .terminated)
        #expect(context.currentApplication?.sourceID == "B", "mPaaS's sourceId: the app on top when it started")
        #expect(trace.take() == ["A.shouldTerminate", "A.willTerminate(animated: false)",
                                 "A.didCreate", "A.shouldStart", "A.willStart(tab=2)", "B.willPause", "A.rootController", "A.didFinishLaunching"])
    }

    @Test func anAppThatAllowsSeveralInstancesGetsANewOneEitherWay() throws {
        let context = try stack(["A", "B"]) { $0.allowsMultiple = true }
        context.startApplication("A", params: [:], animated: false)
        context.startApplication("B", params: [:], animated: false)
        context.startApplication("A", params: [:], launchMode: .present)
        #expect(context.applicationStack.map(\.name) == ["A", "B", "A"])
        #expect(context.findApplications(named: "A").count == 2)
        #expect(context.findApplication(named: "A") === context.currentApplication, "the newest")
    }

    @Test func startingTheLauncherAtTheRootExitsEverythingAboveIt() throws {
        let context = try stack(["Home", "A", "B"])
        context.launcherName = "Home"
        context.startLauncher()
        context.startApplication("A", params: [:], animated: true)
        context.startApplication("B", params: [:], animated: true)
        #expect(context.startApplication("Home", params: [:], appClearTop: false, launchMode: .push))
        #expect(context.applicationStack.map(\.name) == ["Home"], "back to home, whatever appClearTop says")
    }

    @Test(arguments: LaunchMode.allCases)
    func everyLaunchModeIsKeptOrMadeStillByTheDelegate(mode: LaunchMode) throws {
        let kept = try stack(["A"])
        kept.startApplication("A", params: [:], launchMode: mode)
        #expect(kept.currentApplication?.launchMode == mode)
        let still = try stack(["A"]) { $0.startsWithoutAnimation = true }
        still.startApplication("A", params: [:], launchMode: mode)
        #expect(still.currentApplication?.launchMode == mode.withoutAnimation)
        #expect(still.currentApplication?.launchMode.isAnimated == (mode == .flipFromLeft || mode == .flipFromRight))
        let overridden = try stack(["A"]) { $0.launchModeOverride = .presentWithoutAnimation }
        overridden.startApplication("A", params: [:], launchMode: mode)
        #expect(overridden.currentApplication?.launchMode == .presentWithoutAnimation)
    }

    @Test func onlyTheTopAppExitsItselfAndAForcedExitRemovesAnyApp() throws {
        let context = try stack(["A", "B"])
        context.startApplication("A", params: [:], animated: false)
        context.startApplication("B", params: [:], animated: false)
        let a = try #require(context.findApplication(named: "A"))
        #expect(!context.exitApplication(a))
        #expect(context.lastRefusal == "'A' is not on top; only the top application can exit itself (use forceExitApplication)")
        context.forceExitApplication(a)
        #expect(context.applicationStack.map(\.name) == ["B"])
    }

    // MARK: DTContext's service rules

    @Test func aLazyServiceIsMadeAndStartedOnItsFirstUse() async throws {
        let context = try hosts.context(clock: clock)
        context.services.register(named: "GeoService", startMode: .lazy) { [trace] in LoggingService("Geo", log: trace) }
        try await context.startServices()
        #expect(trace.take().isEmpty, "lazy: nothing at boot")
        let geo = try #require(context.findService(named: "GeoService"), "found on the first lookup")
        #expect(trace.take() == ["Geo.created"])
        _ = try await context.services.service(named: "GeoService")
        #expect(trace.take() == ["Geo.start", "Geo.started"])
        #expect(context.findService(named: "GeoService") === geo, "the same instance, started once")
    }

    @Test func aServiceRegisteredAfterBootIsFoundAndStartedAtOnce() async throws {
        let context = try hosts.context(clock: clock)
        try await context.startServices()
        let push = LoggingService("Push", log: trace)
        #expect(context.registerService(push, forName: "PushService"))
        #expect(context.findService(named: "PushService") === push, "found at once")
        _ = try await context.services.service(named: "PushService")
        #expect(trace.take() == ["Push.start", "Push.started"], "started, and not told didCreate: the app made it")
        #expect(context.services.state(of: "PushService") == .started)
    }

    @Test func anUnregisteredServiceIsDestroyedAndNoLongerFound() async throws {
        let context = try hosts.context(clock: clock)
        context.services.register(named: "KeychainService") { [trace] in LoggingService("Keychain", log: trace) }
        try await context.startServices()
        #expect(context.findService(named: "KeychainService") != nil)
        _ = trace.take()
        context.unregisterService(forName: "KeychainService")
        #expect(trace.take() == ["Keychain.destroy"])
        #expect(context.findService(named: "KeychainService") == nil)
        #expect(context.registerService(LoggingService("Keychain2", log: trace), forName: "KeychainService"), "the name is free again")
    }
}
