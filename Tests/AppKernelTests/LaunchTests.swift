import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// Exhaustive (issue 31): a scene app runs on its `AppKernelTest`'s host and clock. These tests
/// assert the delegates' `CallLog` whole; the host's trace is not taken.
@Suite(.appKernel, .exhaustivity(.ignoring(.traceLines))) @MainActor
struct LaunchTests {
    let log = CallLog()
    let clock = AppKernelTest.current.clock

    /// The test's own host for a scene app; a host of its own for an app without scenes.
    func host(usesScenes: Bool = true) -> SimulatedHost {
        usesScenes ? AppKernelTest.current.host : SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: usesScenes))
    }

    @Test func sceneAppGetsTheLaunchURLInTheFirstScenesConnectionOptionsOnly() throws {
        let host = host()
        let delegate = RecordingApplicationDelegate(log: log)
        let app = try host.launch(delegate: delegate, options: LaunchOptions(url: sampleURL, sourceApplication: "com.example.mail"))
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)",
                               "scene-1.willConnect", "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        let sceneDelegate = try #require(app.connectedScenes.first?.delegate as? RecordingSceneDelegate)
        #expect(sceneDelegate.connectionOptions?.urlContexts == [OpenURLContext(url: sampleURL, options: OpenURLOptions(sourceApplication: "com.example.mail"))])
        #expect(sceneDelegate.connectionOptions?.sourceApplication == "com.example.mail")
        #expect(app.launchOptions.url == sampleURL)
    }

    @Test func sceneAppGetsActivityAndShortcutInConnectionOptions() throws {
        let host = host()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log),
                                  options: LaunchOptions(shortcutItem: sampleShortcut, userActivity: sampleActivity))
        let options = try #require((app.connectedScenes.first?.delegate as? RecordingSceneDelegate)?.connectionOptions)
        #expect(options.shortcutItem == sampleShortcut)
        #expect(options.userActivities == [sampleActivity])
        #expect(!log.lines.contains { $0.contains("performAction") || $0.contains("continue(") })
    }

    @Test func appWithoutScenesGetsTheLaunchURLAfterDidFinishAndBeforeDidBecomeActive() throws {
        let host = host(usesScenes: false)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), options: LaunchOptions(url: sampleURL))
        #expect(app.state == .active)
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.open(myapp://item/42)", "app.didBecomeActive"])
    }

    @Test func appWithoutScenesGetsLaunchActivityAndShortcut() throws {
        let host = host(usesScenes: false)
        try host.launch(delegate: RecordingApplicationDelegate(log: log),
                        options: LaunchOptions(shortcutItem: sampleShortcut, userActivity: sampleActivity))
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.continue(com.example.view)",
                               "app.performAction(com.example.new)", "app.didBecomeActive"])
    }

    @Test func launchCallbackAnsweringFalseRefusesTheLaunchURL() throws {
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.launchAnswer = false
        let app = Application(delegate: delegate, clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        let response = try app.handle(.launch(LaunchOptions(url: sampleURL, shortcutItem: sampleShortcut), inBackground: false))
        guard case .answered(let accepted) = response else { Issue.record("launch answered \(response)"); return }
        #expect(!accepted)
        #expect(app.state == .active)
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.didBecomeActive"])
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func launchOptionsSayWhyTheAppLaunched() throws {
        #expect(LaunchOptions().reasons == [.user])
        #expect(LaunchOptions().isUserLaunch)
        #expect(LaunchOptions(location: true).reasons == [.location])
        #expect(LaunchOptions(url: sampleURL, remoteNotification: samplePayload, backgroundFetch: true).reasons
                == [.url, .remoteNotification, .backgroundFetch])
        let host = host()
        let delegate = RecordingApplicationDelegate(log: log)
        try host.launch(delegate: delegate, options: LaunchOptions(location: true), inBackground: true)
        #expect(delegate.launchOptionsSeen.map(\.location) == [true])
    }

    @Test func backgroundLaunchForASilentPushDeliversItAndSuspendsAfterTheGracePeriod() async throws {
        let host = host()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log),
                                  options: LaunchOptions(remoteNotification: samplePayload), inBackground: true)
        #expect(app.state == .background)
        #expect(app.connectedScenes.isEmpty)
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.didReceiveRemoteNotification"])
        #expect(await app.launchCompletion?.value() == .newData)
        await clock.advance(by: .seconds(4))
        #expect(app.state == .background)
        await clock.advance(by: .seconds(1))
        #expect(app.state == .suspended)
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func backgroundLaunchForAFetchPerformsIt() async throws {
        let host = host()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), options: LaunchOptions(backgroundFetch: true), inBackground: true)
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.performFetch"])
        #expect(await app.launchCompletion?.value() == .newData)
        #expect(app.launchCompletion?.answeredByApp == true)
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func backgroundLaunchRefusedByTheDelegateDeliversNothing() throws {
        let host = host()
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.launchAnswer = false
        let app = try host.launch(delegate: delegate, options: LaunchOptions(remoteNotification: samplePayload), inBackground: true)
        #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching"])
        #expect(app.launchCompletion == nil)
    }

    @Test func firstForegroundAfterABackgroundLaunchConnectsASceneAndPublishesWillEnterForeground() throws {
        let host = host()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), inBackground: true)
        var heard: [String] = []
        let token = app.addListener { heard.append($0.description) }
        log.lines.removeAll()
        try host.moveToForeground()
        #expect(app.state == .active)
        #expect(log.take() == ["app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                               "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        #expect(heard == ["sceneWillConnect", "sceneWillEnterForeground", "willEnterForeground",
                          "sceneDidBecomeActive", "didBecomeActive"])
        token.cancel()
    }

    @Test func launchingARunningAppAgainIsRefused() throws {
        let host = host()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        log.lines.removeAll()
        let error = #expect(throws: ApplicationError.self) { try host.launch(delegate: RecordingApplicationDelegate(log: log)) }
        #expect(error?.code == .alreadyLaunched)
        #expect(host.application === app)
        #expect(log.lines.isEmpty)
    }

    @Test func relaunchAfterTerminationStartsANewApplication() throws {
        let host = host()
        let first = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        try host.terminate()
        let second = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        #expect(first !== second)
        #expect(first.state == .terminated)
        #expect(second.state == .active)
        #expect(second.connectedScenes.map(\.id) == ["scene-1"])
    }

    @Test func eventsBeforeTheFirstLaunchAreRefused() {
        let host = host()
        let error = #expect(throws: ApplicationError.self) { try host.moveToForeground() }
        #expect(error?.code == .notLaunched)
        #expect(error?.description.contains("has not been launched") == true)
    }

    @Test func applicationsSideBySideDoNotInterfere() throws {
        let first = SimulatedHost(traceOptions: .all)
        let second = SimulatedHost(traceOptions: .all)
        let one = try first.launch(delegate: DefaultApplicationDelegate())
        let two = try second.launch(delegate: DefaultApplicationDelegate())
        #expect(first.trace.take() == second.trace.take())
        try first.moveToBackground()
        #expect(one.state == .background)
        #expect(two.state == .active)
        #expect(first.trace.take() == ["listeners.scene-1.willResignActive", "listeners.willResignActive",
                                       "listeners.scene-1.didEnterBackground", "listeners.didEnterBackground"])
        #expect(second.trace.take().isEmpty)
    }
}
