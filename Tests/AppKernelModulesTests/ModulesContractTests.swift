// The acceptance test of the modules issue, as written there.
import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

@MainActor final class NamedApp: MicroApplicationDelegate {
    let name: String; let trace: CallLog
    init(name: String, trace: CallLog) { self.name = name; self.trace = trace }
    func rootController(in application: MicroApplication) -> any RootController { PlaceholderController() }
    func applicationWillPause(_ application: MicroApplication) { trace.lines.append("\(name).willPause") }
    func application(_ application: MicroApplication, willResumeWithOptions options: [String: String]) {
        trace.lines.append("\(name).willResume(\(options["tab"] ?? ""))")
    }
    func applicationWillTerminate(_ application: MicroApplication, animated: Bool) { trace.lines.append("\(name).willTerminate") }
}

@MainActor @Test func contractStartingAnAppOnTheStackPopsAboveItAndResumesIt() throws {
    let trace = CallLog()
    let host = SimulatedHost()
    let app = try host.launch(delegate: DefaultApplicationDelegate())
    let context = Context(application: app)
    for name in ["Home", "Transfer", "Receipt"] {
        context.registerApplication(named: name) { NamedApp(name: name, trace: trace) }
    }
    #expect(context.startApplication("Home", params: [:], animated: false))
    #expect(context.startApplication("Transfer", params: [:], animated: true))
    #expect(context.startApplication("Receipt", params: [:], animated: true))
    #expect(context.currentApplication?.name == "Receipt")
    trace.lines.removeAll()
    #expect(context.startApplication("Home", params: ["tab": "2"], animated: false))
    #expect(context.currentApplication?.name == "Home")
    #expect(context.findApplication(named: "Transfer") == nil)
    #expect(trace.lines == ["Receipt.willTerminate", "Transfer.willTerminate", "Home.willResume(2)"])
}
