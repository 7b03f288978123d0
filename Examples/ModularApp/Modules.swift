import AppKernel
import AppKernelModules
import AppKernelTesting
import Foundation

/// The virtual clock the whole app runs on: service starts "take" time, and the timeline shows it.
@MainActor let clock = TestClock()

/// Prints `text` stamped with the virtual time.
@MainActor func say(_ text: String) {
    let milliseconds = clock.now.offset.components.seconds * 1000 + clock.now.offset.components.attoseconds / 1_000_000_000_000_000
    FileHandle.standardOutput.write(Data((String(format: "[t=%5lld ms] ", milliseconds) + text + "\n").utf8))
}

/// How many services are inside their start's sleep, from just before they call it until it
/// returns. The sleep itself runs off the main actor, so ``ModularApp/runClock(_:)`` waits until
/// the clock holds every one of them (and every woken one is back) before it moves time.
@MainActor var servicesSleeping = 0

/// A service that takes `time` to start (on the virtual clock) and may fail.
@MainActor final class TimedService: Service {
    let name: String
    let time: Duration
    let failure: String?
    init(_ name: String, takes time: Duration, failing failure: String? = nil) {
        self.name = name
        self.time = time
        self.failure = failure
    }
    func didCreate() { say("service \(name): created") }
    func start() async throws {
        say("service \(name): starting (takes \(time))")
        servicesSleeping += 1
        defer { servicesSleeping -= 1 }
        try await clock.sleep(for: time)
        if let failure { throw ModularAppError(description: failure) }
        say("service \(name): started")
    }
    func shutdown() async { say("service \(name): shut down") }
}

struct ModularAppError: Error, CustomStringConvertible { var description: String }

/// A micro-app that tells its life cycle; its root controller names it.
/// `[a: 1, b: 2]` as `a=1 b=2`.
func describe(_ options: [String: String]) -> String {
    options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
}

@MainActor final class LoggingApp: MicroApplicationDelegate {
    let title: String
    init(_ title: String) { self.title = title }
    func rootController(in application: MicroApplication) -> any RootController { PlaceholderController(message: title) }
    func application(_ application: MicroApplication, willStartLaunchingWithOptions options: [String: String]) {
        say("app \(application.name): will start" + (options.isEmpty ? "" : " " + describe(options)))
    }
    func applicationDidFinishLaunching(_ application: MicroApplication) { say("app \(application.name): did finish launching (\(application.launchMode))") }
    func applicationWillPause(_ application: MicroApplication) { say("app \(application.name): will pause") }
    func application(_ application: MicroApplication, willResumeWithOptions options: [String: String]) {
        say("app \(application.name): will resume" + (options.isEmpty ? "" : " " + describe(options)))
    }
    func applicationWillTerminate(_ application: MicroApplication, animated: Bool) { say("app \(application.name): will terminate") }
    func applicationDidReceiveMemoryWarning(_ application: MicroApplication) { say("app \(application.name): memory warning") }
}

/// The classes the manifest names (mPaaS finds them through the Objective-C runtime; here the
/// app lists them).
@MainActor func moduleClasses() -> ModuleClassRegistry {
    var classes = ModuleClassRegistry()
    classes.registerApplication("HomeApp") { LoggingApp("Home") }
    classes.registerApplication("TransferApp") { LoggingApp("Transfer") }
    classes.registerApplication("ReceiptApp") { LoggingApp("Receipt") }
    classes.registerService("KeychainService") { TimedService("keychain", takes: .milliseconds(100)) }
    classes.registerService("NetworkService") { TimedService("network", takes: .milliseconds(200)) }
    classes.registerService("ConfigService") { TimedService("config", takes: .milliseconds(250)) }
    classes.registerService("SessionService") { TimedService("session", takes: .milliseconds(50)) }
    classes.registerService("AnalyticsService") { TimedService("analytics", takes: .milliseconds(30)) }
    classes.registerService("PushService") { TimedService("push", takes: .milliseconds(20)) }
    classes.registerService("AdsService") { TimedService("ads", takes: .milliseconds(10), failing: "no ad server") }
    return classes
}
