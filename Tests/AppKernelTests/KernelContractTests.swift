// The acceptance test of the lifecycle-kernel issue, as written there.
import Testing
import AppKernel
import AppKernelTesting

@MainActor @Test func contractColdLaunchBackgroundForegroundTerminate() throws {
    let trace = CallLog()
    let host = SimulatedHost()
    let app = try host.launch(delegate: RecordingApplicationDelegate(log: trace, identifiesScenes: false))
    #expect(app.state == .active)
    #expect(trace.lines == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting",
                            "scene.willConnect", "scene.willEnterForeground", "scene.didBecomeActive"])
    trace.lines.removeAll()
    try host.moveToBackground()
    #expect(app.state == .background)
    #expect(trace.lines == ["scene.willResignActive", "scene.didEnterBackground"])
    trace.lines.removeAll()
    try host.moveToForeground()
    #expect(app.state == .active)
    #expect(trace.lines == ["scene.willEnterForeground", "scene.didBecomeActive"])
    trace.lines.removeAll()
    try host.sendMemoryWarning()
    try host.terminate()
    #expect(app.state == .terminated)
    #expect(trace.lines == ["app.memoryWarning", "scene.willResignActive", "scene.didEnterBackground",
                            "scene.didDisconnect", "app.willTerminate"])
    #expect(throws: (any Error).self) { try host.moveToForeground() }
}

@MainActor @Test func contractBackgroundTaskExpiresWhenItsAllowanceRunsOut() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: RecordingApplicationDelegate(log: CallLog(), identifiesScenes: false))
    try host.moveToBackground()
    let events = CallLog()
    let task = app.beginBackgroundTask(name: "upload") { events.lines.append("expired") }
    await clock.advance(by: .seconds(29))
    #expect(events.lines.isEmpty)
    #expect(app.state == .background)
    await clock.advance(by: .seconds(1))
    #expect(events.lines == ["expired"])
    app.endBackgroundTask(task)
    #expect(app.state == .suspended)
}

@MainActor @Test func contractBackgroundLaunchConnectsNoForegroundScene() throws {
    let trace = CallLog()
    let host = SimulatedHost()
    let options = LaunchOptions(remoteNotification: ["aps": ["content-available": 1]])
    let app = try host.launch(delegate: RecordingApplicationDelegate(log: trace, identifiesScenes: false), options: options, inBackground: true)
    #expect(app.state == .background)
    #expect(!trace.lines.contains("scene.didBecomeActive"))
}
