// The acceptance test of the lifecycle-kernel issue, as written there.
import Testing
import AppKernel
import AppKernelTesting

@MainActor final class Trace { var lines: [String] = [] }

@MainActor final class ContractAppDelegate: ApplicationDelegate {
    let trace: Trace
    init(trace: Trace) { self.trace = trace }
    func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        trace.lines.append("app.willFinishLaunching"); return true
    }
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        trace.lines.append("app.didFinishLaunching"); return true
    }
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        trace.lines.append("app.configurationForConnecting")
        let trace = self.trace
        return SceneConfiguration(name: "Default") { ContractSceneDelegate(trace: trace) }
    }
    func applicationDidReceiveMemoryWarning(_ application: Application) { trace.lines.append("app.memoryWarning") }
    func applicationWillTerminate(_ application: Application) { trace.lines.append("app.willTerminate") }
}

@MainActor final class ContractSceneDelegate: SceneDelegate {
    let trace: Trace
    var window: Window?
    init(trace: Trace) { self.trace = trace }
    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        trace.lines.append("scene.willConnect")
    }
    func sceneWillEnterForeground(_ scene: Scene) { trace.lines.append("scene.willEnterForeground") }
    func sceneDidBecomeActive(_ scene: Scene) { trace.lines.append("scene.didBecomeActive") }
    func sceneWillResignActive(_ scene: Scene) { trace.lines.append("scene.willResignActive") }
    func sceneDidEnterBackground(_ scene: Scene) { trace.lines.append("scene.didEnterBackground") }
    func sceneDidDisconnect(_ scene: Scene) { trace.lines.append("scene.didDisconnect") }
}

@MainActor @Test func contractColdLaunchBackgroundForegroundTerminate() throws {
    let trace = Trace()
    let host = SimulatedHost()
    let app = try host.launch(delegate: ContractAppDelegate(trace: trace))
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
    let app = try host.launch(delegate: ContractAppDelegate(trace: Trace()))
    try host.moveToBackground()
    let events = Trace()
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
    let trace = Trace()
    let host = SimulatedHost()
    let options = LaunchOptions(remoteNotification: ["aps": ["content-available": 1]])
    let app = try host.launch(delegate: ContractAppDelegate(trace: trace), options: options, inBackground: true)
    #expect(app.state == .background)
    #expect(!trace.lines.contains("scene.didBecomeActive"))
}
