import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// Exhaustive (issue 31): each test's host is its `AppKernelTest`'s. These tests assert the
/// delegates' `CallLog` whole; the host's trace (every stage) is read, not taken.
@Suite(.appKernel(traceOptions: .all), .exhaustivity(.ignoring(.traceLines))) @MainActor
struct SceneTests {
    let log = CallLog()
    let host = AppKernelTest.current.host

    /// Launches with one scene and connects a second; both active.
    func twoScenes() throws -> (Application, Scene, Scene) {
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        let second = try #require(try host.connectScene())
        log.lines.removeAll()
        host.trace.clear()
        return (app, try #require(app.scene(withID: "scene-1")), second)
    }

    @Test func aSecondSceneConnectsActiveAlongsideTheFirst() throws {
        let (app, first, second) = try twoScenes()
        #expect(app.connectedScenes.map(\.id) == ["scene-1", "scene-2"])
        #expect(app.openSessions.map(\.persistentIdentifier) == ["scene-1", "scene-2"])
        #expect(first.activationState == .foregroundActive)
        #expect(second.activationState == .foregroundActive)
        #expect(second.session.scene === second)
        #expect(second.session.configuration.name == "Default")
        #expect(second.application === app)
    }

    @Test func backgroundingOneSceneKeepsTheAppActive() throws {
        let (app, first, second) = try twoScenes()
        try host.moveToBackground(second)
        #expect(app.state == .active)
        #expect(first.activationState == .foregroundActive)
        #expect(second.activationState == .background)
        #expect(log.take() == ["scene-2.willResignActive", "scene-2.didEnterBackground"])
        #expect(!host.trace.lines.contains("listeners.didEnterBackground"))
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func backgroundingEverySceneResignsAllBeforeAnyEntersTheBackground() throws {
        let (app, _, _) = try twoScenes()
        try host.moveToBackground()
        #expect(app.state == .background)
        #expect(log.take() == ["scene-1.willResignActive", "scene-2.willResignActive",
                               "scene-1.didEnterBackground", "scene-2.didEnterBackground"])
        // The application-level events come when the last scene's step changes the app's state.
        #expect(host.trace.take() == [
            "scene-1.willResignActive", "listeners.scene-1.willResignActive",
            "scene-2.willResignActive", "listeners.scene-2.willResignActive", "listeners.willResignActive",
            "scene-1.didEnterBackground", "listeners.scene-1.didEnterBackground",
            "scene-2.didEnterBackground", "listeners.scene-2.didEnterBackground", "listeners.didEnterBackground",
        ])
    }

    @Test func foregroundBringsBackEveryBackgroundScene() throws {
        let (app, first, second) = try twoScenes()
        try host.moveToBackground()
        log.lines.removeAll()
        try host.moveToForeground()
        #expect(app.state == .active)
        #expect([first.activationState, second.activationState] == [.foregroundActive, .foregroundActive])
        #expect(log.take() == ["scene-1.willEnterForeground", "scene-2.willEnterForeground",
                               "scene-1.didBecomeActive", "scene-2.didBecomeActive"])
    }

    @Test func foregroundingOneSceneFromTheBackgroundLeavesTheOtherThere() throws {
        let (app, first, second) = try twoScenes()
        try host.moveToBackground()
        log.lines.removeAll()
        try host.moveToForeground(second)
        #expect(app.state == .active)
        #expect(first.activationState == .background)
        #expect(second.activationState == .foregroundActive)
        #expect(log.take() == ["scene-2.willEnterForeground", "scene-2.didBecomeActive"])
    }

    @Test func interruptingOneSceneKeepsTheAppActiveAndBothMakeItInactive() throws {
        let (app, first, second) = try twoScenes()
        try host.deactivate(first)
        #expect(app.state == .active)
        try host.deactivate(second)
        #expect(app.state == .inactive)
        try host.activate(first)
        #expect(app.state == .active)
        #expect(second.activationState == .foregroundInactive)
        #expect(log.take() == ["scene-1.willResignActive", "scene-2.willResignActive", "scene-1.didBecomeActive"])
    }

    @Test func aTransitionNamingASceneInTheWrongStateIsRefused() throws {
        let (app, first, _) = try twoScenes()
        let error = #expect(throws: ApplicationError.self) { try host.activate(first) }
        #expect(error?.code == .sceneInWrongState)
        #expect(error?.subject == "scene-1")
        #expect(error?.description.contains("scene 'scene-1'") == true)
        #expect(app.state == .active)
        #expect(log.lines.isEmpty)
    }

    @Test func disconnectingKeepsTheSessionAndReconnectingReusesIt() throws {
        let (app, first, _) = try twoScenes()
        let session = first.session
        try host.disconnectScene(first)
        #expect(log.take() == ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect"])
        #expect(app.connectedScenes.map(\.id) == ["scene-2"])
        #expect(app.openSessions.map(\.persistentIdentifier) == ["scene-1", "scene-2"])
        #expect(session.scene == nil)
        #expect(first.activationState == .unattached)
        #expect(first.delegate == nil)
        let again = try #require(try host.connectScene(session: session))
        #expect(again !== first)
        #expect(again.session === session)
        #expect(log.take() == ["app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                               "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        let error = #expect(throws: ApplicationError.self) { try host.connectScene(session: session) }
        #expect(error?.code == .sceneInWrongState)
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func discardingSessionsDisconnectsThemAndTellsTheDelegateOnce() throws {
        let (app, first, second) = try twoScenes()
        try host.disconnectScene(second)
        log.lines.removeAll()
        try host.discardSessions([first.session, second.session])
        #expect(log.take() == ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect",
                               "app.didDiscard(scene-1,scene-2)"])
        #expect(app.openSessions.isEmpty)
        #expect(app.state == .background)
        let error = #expect(throws: ApplicationError.self) { try host.discardSessions([first.session]) }
        #expect(error?.code == .unknownSession)
    }

    // Ends with the app in the background: its suspension grace period is still pending.
    @Test(.exhaustivity(.ignoring(.traceLines, .pendingTimers))) func backgroundConnectionLeavesTheSceneInTheBackground() throws {
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), inBackground: true)
        log.lines.removeAll()
        let scene = try #require(try host.connectScene(inForeground: false))
        #expect(scene.activationState == .background)
        #expect(app.state == .background)
        #expect(log.take() == ["app.configurationForConnecting(scene-1)", "scene-1.willConnect"])
    }

    @Test func anAppWithOneSceneRefusesASecond() throws {
        let host = SimulatedHost(configuration: ApplicationConfiguration(supportsMultipleScenes: false))
        try host.launch(delegate: RecordingApplicationDelegate(log: log))
        let error = #expect(throws: ApplicationError.self) { try host.connectScene() }
        #expect(error?.code == .multipleScenesNotSupported)
    }

    @Test func anAppWithoutScenesRefusesSceneEvents() throws {
        let host = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: false))
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        #expect(app.connectedScenes.isEmpty)
        let error = #expect(throws: ApplicationError.self) { try host.connectScene() }
        #expect(error?.code == .scenesNotSupported)
        #expect(throws: ApplicationError.self) { try host.send(.enterBackground(scene: "scene-1")) }
    }

    @Test func aSceneWithoutADelegateStillConnectsAndMovesThroughItsStates() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let scene = try #require(app.connectedScenes.first)
        #expect(scene.delegate == nil)
        #expect(scene.session.configuration.name == "Default Configuration")
        try host.moveToBackground()
        #expect(scene.activationState == .background)
        #expect(try host.open(sampleURL) == false)  // nobody to handle it
    }

    @Test func urlsGoToTheActiveSceneOrTheNamedOne() throws {
        let (_, first, _) = try twoScenes()
        try host.deactivate(first)
        log.lines.removeAll()
        #expect(try host.open(sampleURL))
        try host.open(URL.literal("myapp://two"), in: first)
        #expect(log.take() == ["scene-2.openURLContexts(myapp://item/42)", "scene-1.openURLContexts(myapp://two)"])
    }

    @Test func aURLForABackgroundSceneBringsItForwardAroundTheDelivery() throws {
        let (app, first, _) = try twoScenes()
        try host.moveToBackground()
        log.lines.removeAll()
        try host.open(sampleURL, in: first)
        #expect(log.take() == ["scene-1.willEnterForeground", "scene-1.openURLContexts(myapp://item/42)", "scene-1.didBecomeActive"])
        #expect(app.state == .active)
    }

    @Test func aURLWithNoSceneConnectsOneWithTheURLInItsOptions() throws {
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), inBackground: true)
        log.lines.removeAll()
        #expect(try host.open(sampleURL, options: OpenURLOptions(sourceApplication: "com.example.web")))
        #expect(log.take() == ["app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                               "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        let options = try #require((app.connectedScenes.first?.delegate as? RecordingSceneDelegate)?.connectionOptions)
        #expect(options.urlContexts.map(\.url) == [sampleURL])
        #expect(options.sourceApplication == "com.example.web")
    }

    @Test func activitiesAndShortcutsWithNoSceneConnectOne() async throws {
        _ = try host.launch(delegate: RecordingApplicationDelegate(log: log), inBackground: true)
        #expect(try host.continueUserActivity(sampleActivity))
        let again = SimulatedHost()
        _ = try again.launch(delegate: RecordingApplicationDelegate(log: log), inBackground: true)
        #expect(try await again.performShortcutItem(sampleShortcut))
        #expect(again.application?.connectedScenes.count == 1)
    }

    @Test func terminationDisconnectsEverySceneInOrder() throws {
        _ = try twoScenes()
        try host.terminate()
        #expect(log.take() == ["scene-1.willResignActive", "scene-2.willResignActive",
                               "scene-1.didEnterBackground", "scene-2.didEnterBackground",
                               "scene-1.didDisconnect", "scene-2.didDisconnect", "app.willTerminate"])
    }

    @Test func terminatingASuspendedAppEndsItSilently() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        try host.moveToBackground()
        await clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
        log.lines.removeAll()
        let scene = try #require(app.connectedScenes.first)
        try host.terminate()
        #expect(app.state == .terminated)
        #expect(log.lines.isEmpty)
        #expect(app.connectedScenes.isEmpty)
        #expect(scene.activationState == .unattached)
        try clock.checkNothingPending()
    }
}

@MainActor
struct WindowTests {
    @Test func theRootControllerAppearsWhenTheWindowIsShownAndDisappearsWithTheScene() throws {
        let log = CallLog()
        let host = SimulatedHost()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        let scene = try #require(app.connectedScenes.first)
        let delegate = try #require(scene.delegate as? RecordingSceneDelegate)
        let window = try #require(delegate.window)
        #expect(scene.windows.count == 1)
        #expect(scene.keyWindow === window)
        #expect(!window.isHidden)
        #expect(delegate.root.appearances == ["willAppear", "didAppear"])
        try host.moveToBackground()
        #expect(delegate.root.appearances == ["willAppear", "didAppear"], "going to the background is not a disappearance")
        try host.disconnectScene(scene)
        #expect(delegate.root.appearances == ["willAppear", "didAppear", "willDisappear", "didDisappear"])
        #expect(window.windowScene == nil)
        #expect(window.isHidden)
        #expect(scene.windows.isEmpty)
    }

    @Test func replacingTheRootOfAVisibleWindowSwapsAppearances() {
        let window = Window()
        let placeholder = PlaceholderController(message: "Loading…")
        window.rootController = placeholder
        #expect(!placeholder.isVisible, "a hidden window shows nothing")
        window.makeKeyAndVisible()
        #expect(placeholder.isVisible)
        #expect(window.isKeyWindow)
        let content = RecordingRootController()
        window.rootController = content
        #expect(!placeholder.isVisible)
        #expect(content.appearances == ["willAppear", "didAppear"])
        window.rootController = content
        #expect(content.appearances == ["willAppear", "didAppear"], "setting the same root again changes nothing")
        window.hide()
        #expect(content.appearances == ["willAppear", "didAppear", "willDisappear", "didDisappear"])
        #expect(!window.isKeyWindow)
        window.hide()
        #expect(content.appearances.count == 4)
        #expect(placeholder.message == "Loading…")
    }

    @Test func makingAnotherWindowKeyTakesKeyFromTheFirst() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let scene = try #require(app.connectedScenes.first)
        let first = Window(windowScene: scene)
        let second = Window(windowScene: scene)
        first.makeKeyAndVisible()
        second.makeKeyAndVisible()
        #expect(!first.isKeyWindow)
        #expect(scene.keyWindow === second)
        #expect(!first.isHidden)
    }
}
