import AppKernel
import AppKernelTesting
import Testing

/// `Application.addActivityObserver(_:)`: hooks, launch gates and failed phases, reported as they
/// run; nothing once the token has gone.
@MainActor
struct ActivityObserverTests {
    struct Broken: Error, CustomStringConvertible { var description: String { "the cache is broken" } }

    @Test func hooksGatesAndAFailedPhaseAreReportedInOrder() async throws {
        let bootLoader = BootLoader(includingDefaultPhases: false)
        bootLoader.addPhase("prepare") { _ in throw Broken() }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: bootLoader, clock: TestClock())
        var tokens: [ListenerToken] = []
        app.hooks.before(.didFinishLaunching, label: "warm") { _ in }.store(in: &tokens)
        app.hooks.before(.didFinishLaunching, label: "fail") { _ in throw Broken() }.store(in: &tokens)
        app.addLaunchGate(named: "ready") {}.store(in: &tokens)
        var heard: [ActivityEvent] = []
        let token = app.addActivityObserver { heard.append($0) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        await app.waitForLaunchGates()
        let warm = Activity(kind: .hook, name: "didFinishLaunching.before:warm")
        let fail = Activity(kind: .hook, name: "didFinishLaunching.before:fail")
        let gate = Activity(kind: .gate, name: "ready")
        #expect(heard.count == 7, "\(heard)")
        #expect(Array(heard.prefix(3)) == [.started(warm), .ended(warm), .started(fail)])
        guard heard.count == 7, case .failed(fail, let hookMessage) = heard[3], case .failed(let phase, let phaseMessage) = heard[4] else {
            Issue.record("a failed hook, then a failed phase: \(heard)")
            return
        }
        #expect(hookMessage.contains("the cache is broken"))
        #expect(phase == Activity(kind: .phase, name: "bootLoader.prepare") && phaseMessage.contains("the cache is broken"))
        #expect(Array(heard.suffix(2)) == [.started(gate), .ended(gate)])
        token.cancel()
        heard.removeAll()
        app.addLaunchGate(named: "later") {}.store(in: &tokens)
        await app.waitForLaunchGates()
        #expect(heard.isEmpty, "a cancelled observer hears nothing")
        withExtendedLifetime(tokens) {}
    }

    /// An event's hooks are dispatched from a snapshot that carries the observed sink, as it
    /// carries the budget: an observer added after a snapshot was taken hears the next dispatch,
    /// and once the last observer goes the hooks are run unobserved again.
    @Test func observersComingAndGoingReachSnapshotsAlreadyTaken() throws {
        let host = SimulatedHost(clock: TestClock())
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var tokens: [ListenerToken] = []
        app.hooks.before(.didEnterBackground, label: "flush") { _ in }.store(in: &tokens)
        try host.moveToBackground()   // the snapshot is taken, nobody observing
        try host.moveToForeground()
        var heard: [ActivityEvent] = []
        let token = app.addActivityObserver { heard.append($0) }
        try host.moveToBackground()
        let flush = Activity(kind: .hook, name: "didEnterBackground.before:flush")
        #expect(heard == [.started(flush), .ended(flush)])
        token.cancel()
        heard.removeAll()
        try host.moveToForeground()
        try host.moveToBackground()
        #expect(heard.isEmpty)
        withExtendedLifetime(tokens) {}
    }
}
