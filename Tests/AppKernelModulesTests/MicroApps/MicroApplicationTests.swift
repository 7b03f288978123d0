import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

/// A micro-app delegate that logs every callback and answers the questions as told.
@MainActor final class RecordingApp: MicroApplicationDelegate {
    let name: String
    let trace: CallLog
    var shouldStart = true
    var shouldTerminate = true
    var allowsMultiple = false
    var launchModeOverride: LaunchMode?
    var startsWithoutAnimation = false

    init(name: String, trace: CallLog) {
        self.name = name
        self.trace = trace
    }
    private func log(_ line: String) { trace.lines.append("\(name).\(line)") }
    func rootController(in application: MicroApplication) -> any RootController {
        log("rootController")
        return PlaceholderController()
    }
    func applicationDidCreate(_ application: MicroApplication) { log("didCreate") }
    func application(_ application: MicroApplication, willStartLaunchingWithOptions options: [String: String]) {
        log("willStart(\(options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")))")
    }
    func applicationDidFinishLaunching(_ application: MicroApplication) { log("didFinishLaunching") }
    func applicationWillPause(_ application: MicroApplication) { log("willPause") }
    func application(_ application: MicroApplication, willResumeWithOptions options: [String: String]) {
        log("willResume(\(options["tab"] ?? ""))")
    }
    func applicationDidResume(_ application: MicroApplication) { log("didResume") }
    func application(_ application: MicroApplication, didResumeWithOptions options: [String: String]) {
        log("didResumeWithOptions(\(options["tab"] ?? ""))")
    }
    func applicationWillTerminate(_ application: MicroApplication, animated: Bool) { log("willTerminate(animated: \(animated))") }
    func applicationShouldTerminate(_ application: MicroApplication) -> Bool {
        log("shouldTerminate")
        return shouldTerminate
    }
    func applicationShouldStart(_ application: MicroApplication, options: [String: String]) -> Bool {
        log("shouldStart")
        return shouldStart
    }
    func applicationAllowsMultipleInstances(_ application: MicroApplication) -> Bool { allowsMultiple }
    func application(_ application: MicroApplication, overrideLaunchMode mode: LaunchMode) -> LaunchMode? { launchModeOverride }
    func applicationStartsWithoutAnimation(_ application: MicroApplication) -> Bool { startsWithoutAnimation }
    func applicationDidReceiveMemoryWarning(_ application: MicroApplication) { log("memoryWarning") }
}

/// A context on a launch of `host` with `names` registered, each app's delegate a `RecordingApp`
/// (set up by `configure`) writing to `trace`, made when the app starts.
@MainActor
func recordingContext(host: SimulatedHost, trace: CallLog, names: [String],
                      configure: @escaping @MainActor (RecordingApp) -> Void = { _ in }) throws -> Context {
    let context = Context(application: try host.launch(delegate: DefaultApplicationDelegate()))
    for name in names {
        context.registerApplication(named: name) { [trace] in
            let app = RecordingApp(name: name, trace: trace)
            configure(app)
            return app
        }
    }
    return context
}

@MainActor
struct MicroApplicationTests {
    let trace = CallLog()
    let host = SimulatedHost()
    var delegates: [String: RecordingApp] = [:]

    /// A context with `names` registered; each app's delegate is made (and kept) when it starts.
    func context(_ names: [String], configure: @escaping @MainActor (RecordingApp) -> Void = { _ in }) throws -> Context {
        try recordingContext(host: host, trace: trace, names: names, configure: configure)
    }

    @Test func startingAnAppRunsEveryLaunchCallbackInOrderAndPausesTheOneBelow() throws {
        let context = try context(["Home", "Transfer"])
        #expect(context.startApplication("Home", params: ["from": "launch"], animated: false))
        #expect(trace.lines == ["Home.didCreate", "Home.shouldStart", "Home.willStart(from=launch)", "Home.rootController", "Home.didFinishLaunching"])
        trace.lines.removeAll()
        #expect(context.startApplication("Transfer", params: [:], animated: true))
        #expect(trace.lines == ["Transfer.didCreate", "Transfer.shouldStart", "Transfer.willStart()", "Home.willPause",
                                "Transfer.rootController", "Transfer.didFinishLaunching"])
        #expect(context.applicationStack.map(\.name) == ["Home", "Transfer"])
        #expect(context.applicationStack.map(\.state) == [.paused, .running])
        #expect(context.currentApplication?.rootController is PlaceholderController)
        #expect(context.currentApplication?.params == [:])
        #expect(context.applicationStack[0].params == ["from": "launch"])
    }

    @Test func noDelegateIsMadeBeforeItsAppStartsAndUnknownNamesAreRefused() throws {
        var made = 0
        let context = try context(["Home"]) { _ in made += 1 }
        #expect(made == 0)
        #expect(!context.startApplication("Nope", params: [:], animated: false))
        #expect(context.lastRefusal == "no application named 'Nope' is registered")
        #expect(!context.registerApplication(named: "Home") { RecordingApp(name: "again", trace: CallLog()) })
        #expect(context.lastRefusal == "an application named 'Home' is already registered")
        #expect(context.application?.diagnostics.map(\.description) == ["[moduleRefused] context: no application named 'Nope' is registered",
                                                                      "[moduleRefused] context: an application named 'Home' is already registered"])
        #expect(context.startApplication("Home", params: [:], animated: false))
        #expect(made == 1)
        #expect(context.registeredApplicationNames == ["Home"])
    }

    @Test func anAppThatRefusesToStartIsNotPushed() throws {
        let context = try context(["Home", "Locked"]) { $0.shouldStart = $0.name != "Locked" }
        context.startApplication("Home", params: [:], animated: false)
        trace.lines.removeAll()
        #expect(!context.startApplication("Locked", params: [:], animated: true))
        #expect(context.lastRefusal == "'Locked' refused to start (applicationShouldStart answered false)")
        #expect(trace.lines == ["Locked.didCreate", "Locked.shouldStart"], "Home is not paused")
        #expect(context.applicationStack.map(\.name) == ["Home"])
        #expect(context.currentApplication?.state == .running)
    }

    @Test func startingTheLauncherPopsToTheRoot() throws {
        let context = try context(["Launcher", "A", "B"])
        context.launcherName = "Launcher"
        for name in ["Launcher", "A", "B"] { context.startApplication(name, params: [:], animated: false) }
        trace.lines.removeAll()
        #expect(context.startApplication("Launcher", params: ["tab": "1"], animated: false))
        #expect(trace.lines == ["B.shouldTerminate", "A.shouldTerminate", "B.willTerminate(animated: false)", "A.willTerminate(animated: false)",
                                "Launcher.willResume(1)", "Launcher.didResume", "Launcher.didResumeWithOptions(1)"])
        #expect(context.applicationStack.map(\.name) == ["Launcher"])
    }

    @Test func onlyTheTopAppCanExitItselfAndTheOneBelowResumes() throws {
        let context = try context(["Home", "Transfer"])
        context.startApplication("Home", params: ["tab": "3"], animated: false)
        context.startApplication("Transfer", params: [:], animated: true)
        let home = try #require(context.findApplication(named: "Home"))
        let transfer = try #require(context.currentApplication)
        trace.lines.removeAll()
        #expect(!context.exitApplication(home))
        #expect(context.lastRefusal == "'Home' is not on top; only the top application can exit itself (use forceExitApplication)")
        #expect(trace.lines.isEmpty)
        #expect(context.exitApplication(transfer, animated: true))
        #expect(trace.lines == ["Transfer.shouldTerminate", "Transfer.willTerminate(animated: true)",
                                "Home.willResume(3)", "Home.didResume", "Home.didResumeWithOptions(3)"])
        #expect(transfer.state == .terminated)
        #expect(transfer.rootController == nil)
        #expect(context.currentApplication === home)
        #expect(home.state == .running)
    }

    @Test func anAppThatWillNotTerminateBlocksItsExitAndTheStartThatNeedsItPopped() throws {
        let context = try context(["Home", "Form"]) { $0.shouldTerminate = $0.name != "Form" }
        context.startApplication("Home", params: [:], animated: false)
        context.startApplication("Form", params: [:], animated: true)
        let form = try #require(context.currentApplication)
        trace.lines.removeAll()
        #expect(!context.exitApplication(form))
        #expect(context.lastRefusal == "'Form' refused to terminate (applicationShouldTerminate answered false)")
        #expect(!context.startApplication("Home", params: [:], animated: false))
        #expect(context.lastRefusal == "'Form' refused to terminate (applicationShouldTerminate answered false), so 'Home' cannot be brought back")
        #expect(trace.lines == ["Form.shouldTerminate", "Form.shouldTerminate"])
        #expect(context.applicationStack.map(\.name) == ["Home", "Form"])
        context.forceExitApplication(form)
        #expect(context.applicationStack.map(\.name) == ["Home"])
        #expect(trace.lines.suffix(4) == ["Form.willTerminate(animated: false)", "Home.willResume()", "Home.didResume", "Home.didResumeWithOptions()"])
    }

    @Test func aSecondInstanceOnlyWhenTheDelegateAllowsIt() throws {
        let context = try context(["Chat", "Profile"]) { $0.allowsMultiple = $0.name == "Chat" }
        context.startApplication("Chat", params: ["tab": "a"], animated: false)
        context.startApplication("Profile", params: [:], animated: false)
        context.startApplication("Chat", params: ["tab": "b"], animated: false)
        #expect(context.applicationStack.map(\.name) == ["Chat", "Profile", "Chat"])
        #expect(context.findApplication(named: "Chat")?.params == ["tab": "b"], "the newest match")
        #expect(Set(context.applicationStack.map(\.id)).count == 3)
        context.startApplication("Profile", params: [:], animated: false)
        #expect(context.applicationStack.map(\.name) == ["Chat", "Profile"], "Profile allows one instance: brought back")
    }

    @Test(arguments: LaunchMode.allCases)
    func launchModesAreRecordedForTheRootControllerToRender(mode: LaunchMode) throws {
        let context = try context(["Home"])
        #expect(context.startApplication("Home", params: [:], launchMode: mode))
        #expect(context.currentApplication?.launchMode == mode)
        #expect(mode.isAnimated == ![.pushWithoutAnimation, .presentWithoutAnimation].contains(mode))
    }

    @Test func animatedFlagMapsToPushModesAndTheDelegateMayOverride() throws {
        let context = try context(["A", "B", "Sheet"]) { if $0.name == "Sheet" { $0.launchModeOverride = .present } }
        context.startApplication("A", params: [:], animated: false)
        context.startApplication("B", params: [:], animated: true)
        context.startApplication("Sheet", params: [:], animated: false)
        #expect(context.applicationStack.map(\.launchMode) == [.pushWithoutAnimation, .push, .present])
    }

    @Test func theProcessLifeCycleReachesTheApps() throws {
        let context = try context(["Home", "Transfer"])
        context.startApplication("Home", params: [:], animated: false)
        context.startApplication("Transfer", params: ["tab": "t"], animated: false)
        trace.lines.removeAll()
        try host.moveToBackground()
        #expect(trace.lines == ["Transfer.willPause"], "only the current app pauses")
        #expect(context.currentApplication?.state == .paused)
        try host.sendMemoryWarning()
        try host.moveToForeground()
        #expect(trace.lines == ["Transfer.willPause", "Transfer.memoryWarning", "Home.memoryWarning",
                                "Transfer.willResume(t)", "Transfer.didResume", "Transfer.didResumeWithOptions(t)"])
        trace.lines.removeAll()
        try host.terminate()
        #expect(trace.lines == ["Transfer.willPause", "Transfer.willTerminate(animated: false)", "Home.willTerminate(animated: false)"],
                "termination passes through the background, then terminates top-down")
        #expect(context.applicationStack.isEmpty)
    }

    @Test func anAppStartedInTheBackgroundWaitsPausedUntilForeground() throws {
        let context = try context(["Home"])
        try host.moveToBackground()
        context.startApplication("Home", params: [:], animated: false)
        #expect(context.currentApplication?.state == .paused)
        trace.lines.removeAll()
        try host.moveToForeground()
        #expect(trace.lines == ["Home.willResume()", "Home.didResume", "Home.didResumeWithOptions()"])
        #expect(context.currentApplication?.state == .running)
    }

    @Test func theStackIsObservableAndExitAllEmptiesIt() throws {
        let context = try context(["A", "B"])
        var seen: [[String]] = []
        context.onStackChange = { seen.append($0.map(\.name)) }
        context.startApplication("A", params: [:], animated: false)
        context.startApplication("B", params: [:], animated: false)
        context.startApplication("A", params: [:], animated: false)
        context.startApplication("B", params: [:], animated: false)
        context.exitAllApplications()
        #expect(seen == [["A"], ["A", "B"], ["A"], ["A", "B"], []])
        #expect(trace.lines.suffix(2) == ["B.willTerminate(animated: false)", "A.willTerminate(animated: false)"])
    }
}
