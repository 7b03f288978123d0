// An mPaaS-style app, headless: a FrameworkInterface with before / handle / after hooks, a
// BootLoader with an extra phase, micro-apps on a stack started by name, and eager / lazy /
// dependent / grouped services from MobileRuntime.json — on a virtual clock, so the timeline
// is the same on every run. `swift run ModularApp`.
import AppKernel
import AppKernelPOSIX
import AppKernelModules
import AppKernelTesting
import Foundation

/// The framework's hooks around the app delegate (mPaaS's `DTFrameworkInterface`).
@MainActor final class Framework: FrameworkInterface {
    var context: () -> Context? = { nil }

    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {
        say("framework: before didFinishLaunching")
    }
    func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult {
        say("framework: handle didFinishLaunching → continue")
        return .continue
    }
    func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions) {
        say("framework: after didFinishLaunching")
    }
    /// `modular://app/NAME?key=value` starts the micro-app NAME; the delegate never sees it.
    func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                     sourceApplication: String?, annotation: JSONValue?) -> HookResult {
        guard url.scheme == "modular", url.host == "app", let context = context() else { return .continue }
        let name = url.lastPathComponent
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let params = Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        say("framework: handle openURL \(url.absoluteString) → start \(name)")
        return context.startApplication(name, params: params, animated: true) ? .returnYes : .returnNo
    }
    func applicationDidEnterBackground(_ application: Application) -> HookResult {
        say("framework: handle didEnterBackground → continue")
        return .continue
    }
}

@MainActor final class AppDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("delegate: didFinishLaunching")
        return true
    }
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        say("delegate: open \(url.absoluteString)")
        return false
    }
    func applicationWillTerminate(_ application: Application) { say("delegate: willTerminate") }
}

@main
enum ModularApp {
    /// The example's command line: no flags but `--help`; what it answers is what it does.
    static let tool = CommandLineTool(
        name: "ModularApp",
        summary: "an mPaaS-style app, headless: framework hooks, a boot loader's phases, micro-apps and services from MobileRuntime.json",
        exitStatuses: [.init(0, "the tour ran to its end"),
                       .init(1, "a step failed (the error is printed: a missing manifest, a refused micro-app, …)")],
        notes: ["The timeline is the same on every run: time is virtual (a TestClock). It writes nothing."])

    @MainActor
    static func main() async {
        // `--help` and a bad command line end here (AppKernelPOSIX's CommandLineTool).
        _ = tool.parseOrExit()
        do { try await run() } catch {
            say("error: \(error)")
            exit(1)
        }
    }

    @MainActor
    static func run() async throws {
        guard let manifest = Bundle.module.url(forResource: "Resources/MobileRuntime", withExtension: "json")
            ?? Bundle.module.url(forResource: "MobileRuntime", withExtension: "json", subdirectory: "Resources") else {
            throw ModularAppError(description: "MobileRuntime.json is missing from the bundle")
        }
        let loader = ContextBootLoader(servicesDeadline: .seconds(5)) { context in
            try context.loadManifest(at: manifest, classes: moduleClasses())
            say("boot: loaded \(manifest.lastPathComponent) — apps \(context.registeredApplicationNames), services \(context.services.registeredNames)")
        }
        loader.addPhase("loadFeatureFlags", after: ContextBootLoader.loadModulesPhase) { _ in
            say("boot: extra phase loadFeatureFlags (after loadModules)")
        }
        say("boot phases: \(loader.phaseNames.joined(separator: " → "))")
        let framework = Framework()
        framework.context = { [weak loader] in loader?.context }
        let host = SimulatedHost(clock: clock, traceOptions: [])
        let app = try host.launch(delegate: AppDelegate(), interface: framework, bootLoader: loader)
        app.hookErrorHandler = { error in say("launch error: \(error)") }
        guard let context = loader.context else { throw ModularAppError(description: "the BootLoader made no context") }
        context.onStackChange = { stack in say("stack: \(stack.map(\.name).joined(separator: " > "))") }

        // The services start in dependency order, independent ones together; run the clock.
        await runClock { context.currentApplication != nil }
        try await context.servicesReady()
        say("boot: services ready; started in order \(context.services.startOrder.joined(separator: ", "))")
        if case .failed(let reason)? = context.services.state(of: "ads") { say("boot: ads failed, and is optional: the boot went on (\(reason))") }

        // Micro-apps on the stack, started by name and by URL.
        _ = try host.open(URL(string: "modular://app/Transfer?amount=10")!)
        _ = context.startApplication("Receipt", params: ["id": "42"], launchMode: .present)
        _ = context.startApplication("Home", params: ["tab": "2"], animated: false)   // pops Receipt and Transfer

        // A lazy service starts (with its dependencies) on first use.
        say("analytics before lookup: \(context.services.state(of: "analytics").map { "\($0)" } ?? "?")")
        let analytics = Task { _ = try await context.services.service(named: "analytics") }
        await runClock { context.services.state(of: "analytics") == .started }
        try await analytics.value
        say("analytics after lookup: \(context.services.state(of: "analytics").map { "\($0)" } ?? "?")")

        // The process life cycle reaches the micro-apps.
        try host.moveToBackground()
        try host.moveToForeground()
        try host.sendMemoryWarning()
        try host.terminate()
        await context.shutdown?.value
        say("terminated")
    }

    /// Lets the started work reach its next wait, then moves the virtual clock to the next
    /// deadline, until `done`.
    @MainActor
    static func runClock(_ done: () -> Bool) async {
        while !done() {
            await settle()
            guard !done(), let next = clock.nextDeadline else { return }
            await clock.advance(to: next)
        }
    }

    /// Lets the started work reach its next wait. Work on the main actor gets there as the main
    /// actor yields; a service's sleep reaches the clock from another thread (and a woken one comes
    /// back from it), so this also waits until the clock holds exactly the sleeps services are in.
    /// Yields alone were not always enough under a sanitizer's slowdown: time then jumped past a
    /// sleep the clock did not hold yet. Bounded by yields, not by the wall clock.
    @MainActor
    static func settle() async {
        var yields = 0
        while true {
            for _ in 0..<100 { await Task.yield() }
            while clock.sleeperCount != servicesSleeping {
                yields += 1
                guard yields < 1_000_000 else { return say("clock: a service's sleep never reached the clock") }
                await Task.yield()
            }
            // Equal now; once more, in case what just woke started more work.
            for _ in 0..<100 { await Task.yield() }
            if clock.sleeperCount == servicesSleeping { return }
        }
    }
}
