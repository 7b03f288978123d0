import Foundation
import Testing
import AppKernelCore
@testable import AppKernel
import AppKernelTesting

@MainActor
final class URLSceneDelegate: SceneDelegate {
    func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {}
}

@MainActor
final class URLAppDelegate: ApplicationDelegate {
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "URL") { URLSceneDelegate() }
    }
}

@MainActor
struct TraceRecorderTests {
    @Test(.appKernel) func theDefaultTraceHasDelegatesAndSystemDecisions() async throws {
        let clock = AppKernelTest.current.clock
        let host = AppKernelTest.current.host
        try host.launch(delegate: URLAppDelegate())
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)",
                                      "scene-1.willConnect", "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        try host.open(URL(string: "myapp://a")!)
        try host.moveToBackground()
        await clock.advance(by: .seconds(5))
        #expect(host.trace.take() == ["scene-1.openURL(myapp://a)", "scene-1.willResignActive", "scene-1.didEnterBackground",
                                      "system.didSuspend"])
        #expect(host.trace.lines.isEmpty)
    }

    @Test func listenerPublicationsAreRecordedOnRequest() throws {
        let host = SimulatedHost(traceOptions: [.listeners])
        try host.launch(delegate: URLAppDelegate())
        #expect(host.trace.take() == ["listeners.didFinishLaunching", "listeners.scene-1.willConnect",
                                      "listeners.scene-1.willEnterForeground", "listeners.scene-1.didBecomeActive",
                                      "listeners.didBecomeActive"])
        host.trace.options = .all
        try host.sendMemoryWarning()
        #expect(host.trace.take() == ["app.didReceiveMemoryWarning", "listeners.didReceiveMemoryWarning"])
    }

    @Test func entriesCarryTheirTimeOnTheApplicationsClock() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: URLAppDelegate())
        host.trace.clear()
        await clock.advance(by: .seconds(7))
        try host.moveToBackground()
        #expect(host.trace.entries.map(\.time) == [.seconds(7), .seconds(7)])
        #expect(host.trace.entries.first?.stage == .sceneDelegate("scene-1"))
        #expect(host.trace.entries.first?.event == .sceneWillResignActive(scene: "scene-1"))
        _ = app
    }

    @Test func linesNameTheStageAndTheEvent() {
        #expect(TraceRecorder.line(.applicationDelegate, .didFinishLaunching(LaunchOptions())) == "app.didFinishLaunching")
        #expect(TraceRecorder.line(.sceneDelegate("scene-2"), .sceneDidBecomeActive(scene: "scene-2")) == "scene-2.didBecomeActive")
        #expect(TraceRecorder.line(.listeners, .sceneDidDisconnect(scene: "scene-1")) == "listeners.scene-1.didDisconnect")
        #expect(TraceRecorder.line(.system, .backgroundTaskExpired("upload")) == "system.backgroundTaskExpired(upload)")
        #expect(TraceRecorder.line(.applicationDelegate, .didDiscardSceneSessions(["scene-1", "scene-2"]))
                == "app.didDiscardSceneSessions(scene-1,scene-2)")
    }

    @Test func aRecorderCanFollowAnApplicationItDidNotLaunch() throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: TestClock(),
                              configuration: ApplicationConfiguration(usesScenes: false))
        let recorder = TraceRecorder(options: .all)
        recorder.attach(to: app)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        let bootPhases = BootLoader().phaseNames.flatMap { ["bootLoader.phase(\($0))", "bootLoader.phaseEnded(\($0))"] }
        #expect(bootPhases.count == 12)
        #expect(recorder.take() == ["app.willFinishLaunching", "app.didFinishLaunching"]
                + bootPhases + ["listeners.didFinishLaunching", "app.didBecomeActive", "listeners.didBecomeActive"])
        #expect(app.window?.isKeyWindow == true, "the default phases make and show the window of an app without scenes")
        #expect((app.window?.rootController as? PlaceholderController)?.isVisible == true)
    }
}

@MainActor @Test func aRecorderWithNoOptionsDoesNotObserveAndStartsWhenGivenSome() throws {
    let host = SimulatedHost(traceOptions: [])
    let app = try host.launch(delegate: DefaultApplicationDelegate())
    #expect(app.pipelineObservers.isEmpty, "nothing recorded: no observer in the pipeline")
    try host.sendMemoryWarning()
    #expect(host.trace.lines.isEmpty)
    host.trace.options = [.listeners]
    #expect(app.pipelineObservers.count == 1)
    try host.moveToBackground()
    #expect(host.trace.take() == ["listeners.scene-1.willResignActive", "listeners.willResignActive",
                                  "listeners.scene-1.didEnterBackground", "listeners.didEnterBackground"])
    host.trace.options = []
    #expect(app.pipelineObservers.isEmpty)
}
