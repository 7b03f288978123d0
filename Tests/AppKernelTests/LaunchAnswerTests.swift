import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// The launch's YES/NO, what a host prepares before a launch, and failures heard by a handler
/// set after the launch — the orders a test naturally writes.
@MainActor
struct LaunchAnswerTests {
    @MainActor final class Answering: ApplicationDelegate {
        let will: Bool, did: Bool
        init(will: Bool = true, did: Bool) { self.will = will; self.did = did }
        func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool { will }
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool { did }
    }

    @Test(arguments: [(true, true, true), (true, false, false), (false, true, false), (false, false, false)])
    func theLaunchAnswerIsBothLaunchMethodsAnswers(will: Bool, did: Bool, answer: Bool) throws {
        let host = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: false))
        let app = try host.launch(delegate: Answering(will: will, did: did))
        #expect(app.launchAnswer == answer)
    }

    @Test func aHandleHookThatStopsTheLaunchAnswersForIt() throws {
        final class RefusingInterface: FrameworkInterface {
            func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult { .returnNo }
        }
        let host = SimulatedHost()
        let app = try host.launch(delegate: Answering(did: true), interface: RefusingInterface())
        #expect(app.launchAnswer == false)
    }

    @Test func theAnswerIsNilUntilTheLaunchReturns() throws {
        var seen: [Bool?] = []
        let host = SimulatedHost()
        host.beforeEachLaunch { app in seen.append(app.launchAnswer) }
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        #expect(seen == [nil])
        #expect(app.launchAnswer == true)
    }

    @Test func preparationsRunBeforeEveryLaunchInOrder() throws {
        let log = CallLog()
        var tokens: [ListenerToken] = []   // listeners live as long as their tokens
        let host = SimulatedHost()
        host.beforeEachLaunch { app in
            log.lines.append("prepare.1.\(app.state)")
            app.addListener(for: .didFinishLaunching) { _ in log.lines.append("heard didFinishLaunching") }.store(in: &tokens)
        }
        host.beforeEachLaunch { _ in log.lines.append("prepare.2") }
        try host.launch(delegate: DefaultApplicationDelegate())
        try host.terminate()
        try host.launch(delegate: DefaultApplicationDelegate())
        #expect(log.lines == ["prepare.1.notRunning", "prepare.2", "heard didFinishLaunching",
                              "prepare.1.notRunning", "prepare.2", "heard didFinishLaunching"])
    }

    @Test func aHookErrorHandlerSetAfterTheLaunchHearsTheBootPhaseThatFailed() throws {
        struct Broken: Error {}
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("loadFlags") { _ in throw Broken() }
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
        var heard: [String] = []
        app.hookErrorHandler = { error in heard.append("\(error.point)/\(error.hook)") }
        #expect(heard == ["bootLoader/loadFlags"], "the failure before the handler was set is delivered at once")
        app.hookErrorHandler = { error in heard.append("again \(error.hook)") }
        #expect(heard == ["bootLoader/loadFlags"], "a failure is delivered once, to one handler")
    }
}
