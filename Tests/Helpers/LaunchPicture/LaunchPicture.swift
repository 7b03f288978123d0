// Writes the page behind Examples/Pictures/launch.png: the launch of a forceios-style app, drawn
// by LaunchTimeline.html(title:) — the page APPKERNEL_TRACE=launch.html writes for a real launch.
//
//   LaunchPicture <output.html>
//
// The launch is real — an Application with mPaaS's BootLoader (AppKernelModules'
// ContextBootLoader starting services), an SDK-manager-like phase engine behind a launch gate,
// hooks, and an optional service that fails — but it runs on a virtual clock (TestClock) on which
// each piece of work takes a fixed time, so the page, and the screenshot of it, are the same byte
// for byte on every run and machine.
import AppKernel
import AppKernelModules
import AppKernelPOSIX
import AppKernelTesting
import Foundation

/// A service whose start takes `duration` on the virtual clock, then succeeds or throws `failure`.
@MainActor
final class ScriptedService: Service {
    struct Refusal: Error, CustomStringConvertible { let description: String }
    let clock: TestClock
    let duration: Duration
    let failure: String?

    init(_ clock: TestClock, milliseconds: Int, failure: String? = nil) {
        self.clock = clock
        self.duration = .milliseconds(milliseconds)
        self.failure = failure
    }

    func start() async throws {
        try await clock.sleep(for: duration)
        if let failure { throw Refusal(description: failure) }
    }
}

@MainActor
func drawLaunch(to path: String) async throws {
    let clock = TestClock()
    let loader = ContextBootLoader { context in
        context.services.register(named: "keychain") { ScriptedService(clock, milliseconds: 18) }
        context.services.register(named: "network") { ScriptedService(clock, milliseconds: 30) }
        context.services.register(named: "session", dependencies: ["keychain", "network"]) { ScriptedService(clock, milliseconds: 12) }
        context.services.register(named: "analytics", failurePolicy: .continueWithout) {
            ScriptedService(clock, milliseconds: 22, failure: "the analytics endpoint refused the key (HTTP 403)")
        }
    }
    let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
    var tokens: [ListenerToken] = []
    app.hooks.before(.didFinishLaunching, label: "restoreState") { _ in clock.simulateWork(for: .milliseconds(4)) }.store(in: &tokens)
    app.hooks.before(BootPhase("setupWindow"), label: "applyTheme") { _ in clock.simulateWork(for: .milliseconds(3)) }.store(in: &tokens)
    app.hooks.after(BootPhase("showWindow"), label: "logStartup") { _ in clock.simulateWork(for: .milliseconds(1)) }.store(in: &tokens)
    // The SDK manager's five launch phases (AppKernelSDK's LaunchPhase), as scripted work.
    let sdkPhases: [(String, Int)] = [("config", 6), ("sdkInit", 9), ("passcode", 4), ("auth", 26), ("rootController", 7)]
    let sdk = PhaseEngine<BootPhase>(name: "sdk", steps: sdkPhases.map { name, milliseconds in
        PhaseEngine.Step(BootPhase(name), body: .async { _ in try await clock.sleep(for: .milliseconds(milliseconds)) })
    })
    app.hooks.before(BootPhase("auth"), label: "refreshToken") { _ in clock.simulateWork(for: .milliseconds(5)) }.store(in: &tokens)
    app.addLaunchGate(named: "sdk launch") { try? await sdk.run(app, hooks: app.hooks, application: app) }.store(in: &tokens)
    let timeline = LaunchTimeline()
    timeline.record(app)
    try app.handle(.launch(LaunchOptions(), inBackground: false))
    var gatesOpen = false
    let gates = Task { @MainActor in
        await app.waitForLaunchGates()
        gatesOpen = true
    }
    for _ in 0..<10_000 where !(gatesOpen && loader.state == .finished) {
        await clock.advance(by: .milliseconds(1))
    }
    await gates.value
    timeline.finish(at: app.uptime)
    withExtendedLifetime(tokens) {}
    try Data(timeline.html(title: "An AppKernel launch: BootLoader, services, SDK phases").utf8)
        .write(to: URL(fileURLWithPath: path), options: .atomic)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
    FileHandle.standardError.write(Data("usage: LaunchPicture <output.html>\n".utf8))
    exit(arguments.contains("--help") ? 0 : 64)
}
do {
    try await drawLaunch(to: path)
} catch {
    FileHandle.standardError.write(Data("LaunchPicture: \(error)\n".utf8))
    exit(1)
}
