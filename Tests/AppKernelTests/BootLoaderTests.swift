import Foundation
import Testing
import AppKernel
import AppKernelTesting

@MainActor
struct BootLoaderTests {
    let log = CallLog()
    let clock = TestClock()

    @Test func theDefaultPhasesMirrorMPaaS() {
        #expect(BootLoader().phaseNames == ["setupWindow", "startRunOnceServices", "startNonLazyServices",
                                            "startAutoStartServiceGroups", "showWindow", "startLauncher"])
        #expect(BootLoader(includingDefaultPhases: false).phaseNames.isEmpty)
        #expect(BootLoader().defaultPhaseDeadline == .seconds(20))
    }

    @Test func phasesAreAddedReplacedAndRemovedByName() {
        let loader = BootLoader()
        #expect(loader.addPhase("flags", before: BootLoader.showWindowPhase) { _ in })
        #expect(loader.addPhase("metrics", after: BootLoader.setupWindowPhase) { _ in })
        #expect(loader.addPhase("tail") { _ in })
        #expect(!loader.addPhase("flags") { _ in }, "a duplicate name is refused")
        #expect(!loader.addPhase("x", before: "nope") { _ in }, "an unknown anchor is refused")
        #expect(loader.replacePhase(BootLoader.startLauncherPhase) { _ in })
        #expect(!loader.replacePhase("nope") { _ in })
        #expect(loader.removePhase(BootLoader.startRunOnceServicesPhase))
        #expect(!loader.removePhase(BootLoader.startRunOnceServicesPhase))
        #expect(loader.phaseNames == ["setupWindow", "metrics", "startNonLazyServices", "startAutoStartServiceGroups",
                                      "flags", "showWindow", "startLauncher", "tail"])
    }

    @Test func aForegroundLaunchRunsThePhasesOnceInOrderDuringDidFinishLaunching() throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("one") { _ in log.lines.append("one") }
        loader.addPhase("two") { _ in log.lines.append("two") }
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), bootLoader: loader)
        #expect(log.lines.prefix(4) == ["app.willFinishLaunching", "app.didFinishLaunching", "one", "two"])
        #expect(loader.state == .finished)
        #expect(app.isFullyLoaded)
        #expect(loader.timeline.map(\.name) == ["one", "two"])
        log.lines.removeAll()
        try host.moveToBackground()
        try host.moveToForeground()
        #expect(!log.lines.contains("one"), "exactly once per process")
        #expect(!loader.addPhase("late") { _ in }, "a started BootLoader takes no edits")
    }

    @Test func aBackgroundLaunchDefersTheBootLoaderToTheFirstDidBecomeActive() throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("boot") { _ in log.lines.append("boot") }
        let host = SimulatedHost(clock: clock, traceOptions: .all)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), bootLoader: loader, inBackground: true)
        #expect(loader.state == .idle)
        #expect(!app.isFullyLoaded)
        try host.moveToForeground()
        #expect(loader.state == .finished)
        let lines = host.trace.take()
        let active = try #require(lines.firstIndex(of: "listeners.didBecomeActive"))
        let boot = try #require(lines.firstIndex(of: "bootLoader.phase(boot)"))
        #expect(boot < active, "the BootLoader (default work), then listeners, on the first didBecomeActive")
        try host.moveToBackground()
        try host.moveToForeground()
        #expect(log.lines.filter { $0 == "boot" }.count == 1)
    }

    @Test func aDidBecomeActiveThatAHookStopsDoesNotRunTheDeferredBootLoader() throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("boot") { _ in log.lines.append("boot") }
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), bootLoader: loader, inBackground: true)
        let stop = app.hooks.handle(.didBecomeActive) { _ in .return }
        try host.moveToForeground()
        #expect(loader.state == .idle)
        stop.cancel()
        try host.moveToBackground()
        try host.moveToForeground()
        #expect(loader.state == .finished)
    }

    @Test func aStoppedLaunchNeverRunsTheBootLoader() throws {
        final class Refusing: FrameworkInterface {
            func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult { .returnNo }
        }
        let loader = BootLoader()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: Refusing(), bootLoader: loader)
        #expect(app.state == .active, "the system still shows the app")
        try host.moveToBackground()
        try host.moveToForeground()
        #expect(loader.state == .idle)
        #expect(loader.timeline.isEmpty)
    }

    @Test func asyncPhasesAreAwaitedInOrderAndTheLaunchesAfterHooksWaitForThem() async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("sync") { _ in log.lines.append("sync") }
        loader.addPhase("fetchConfig") { _ in
            log.lines.append("fetch.start")
            try await clock.sleep(for: .seconds(3))
            log.lines.append("fetch.end")
        }
        loader.addPhase("afterFetch") { _ in log.lines.append("afterFetch") }
        let host = SimulatedHost(clock: clock)
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        kept.append(app.hooks.after(.didFinishLaunching) { _ in log.lines.append("after") })
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        #expect(app.state == .active, "the launch does not wait for async phases")
        #expect(loader.state == .running("fetchConfig"))
        while clock.pendingCount < 2 { await Task.yield() }   // the phase's sleep and its deadline
        #expect(log.lines == ["sync", "fetch.start"])
        await clock.advance(by: .seconds(3))
        while loader.state != .finished { await Task.yield() }
        #expect(log.lines == ["sync", "fetch.start", "fetch.end", "afterFetch", "after"])
        #expect(loader.timeline.map(\.end) == [.zero, .seconds(3), .seconds(3)])
        try clock.checkNothingPending(ignoringSuspension: app)
        _ = host
    }

    @Test func anAsyncPhaseThatHangsFailsAtItsDeadlineNamingIt() async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("syncRemote") { _ in try await clock.sleep(for: .seconds(3_600)) }
        loader.addPhase("never") { _ in log.lines.append("never") }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        var errors: [HookError] = []
        app.hookErrorHandler = { errors.append($0) }
        kept.append(app.hooks.after(.didFinishLaunching) { _ in log.lines.append("after") })
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        while clock.pendingCount < 2 { await Task.yield() }
        await clock.advance(by: .seconds(19))
        #expect(loader.state == .running("syncRemote"))
        await clock.advance(by: .seconds(1))
        #expect(loader.state == .failed("syncRemote"))
        #expect(errors.map(\.hook) == ["syncRemote"])
        #expect(errors.first?.stage == .phase)
        if case .timedOut(let deadline)? = errors.first?.failure { #expect(deadline == .seconds(20)) } else { Issue.record("not a timeout") }
        #expect(errors.first?.description.contains("did not finish within its deadline of 20.0 seconds") == true)
        #expect(log.lines.isEmpty, "later phases and the launch's after hooks do not run")
        #expect(app.state == .active)
        #expect(!app.isFullyLoaded)
        while clock.pendingCount > 0 { await Task.yield() }   // the cancelled sleeper leaves
    }

    @Test func aPhaseCanHaveItsOwnDeadline() async throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("quick", deadline: .seconds(2)) { _ in try await clock.sleep(for: .seconds(5)) }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        while clock.pendingCount < 2 { await Task.yield() }
        await clock.advance(by: .seconds(2))
        #expect(loader.state == .failed("quick"))
    }

    @Test func aThrowingPhaseStopsTheRestAndIsReported() throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("openDatabase") { _ in throw Boom() }
        loader.addPhase("never") { _ in log.lines.append("never") }
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
        #expect(loader.state == .failed("openDatabase"))
        #expect(app.hookErrors.map(\.description) == ["BootLoader phase 'openDatabase' threw: Boom. The phases after it did not run; fix the phase, or replace or remove it by name."])
        #expect(log.lines.isEmpty)
        #expect(app.state == .active)
        #expect(app.diagnostics.map(\.kind) == [.hookFailed])
    }

    @Test func anAsyncPhaseThatThrowsIsReported() async throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("download") { _ in
            await Task.yield()
            throw Boom()
        }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        while loader.state == .running("download") { await Task.yield() }
        #expect(loader.state == .failed("download"))
        #expect(app.hookErrors.first?.underlyingError is Boom)
        try clock.checkNothingPending(ignoringSuspension: app)
    }

    @Test func aSlowSynchronousPhaseIsReported() throws {
        let loader = BootLoader(includingDefaultPhases: false)
        loader.addPhase("parseManifest") { _ in clock.simulateWork(for: .milliseconds(300)) }
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
        #expect(app.diagnostics.map(\.subject) == ["bootLoader/parseManifest"])
        #expect(app.diagnostics.map(\.kind) == [.slowHook])
    }

    @Test func aSubclassCustomisesDefaultPhasesAndTheRunsEdges() throws {
        final class AppBootLoader: BootLoader {
            var calls: [String] = []
            override func willStart(_ application: Application) { calls.append("willStart") }
            override func startNonLazyServices(_ application: Application) throws { calls.append("services") }
            override func startLauncher(_ application: Application) throws { calls.append("launcher") }
            override func didStart(_ application: Application) { calls.append("didStart") }
        }
        let loader = AppBootLoader()
        try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
        #expect(loader.calls == ["willStart", "services", "launcher", "didStart"])
    }

    @Test func theWindowPhasesKeepAWindowTheDelegateMade() throws {
        final class WindowDelegate: ApplicationDelegate {
            let root = RecordingRootController()
            func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
                let window = Window()
                window.rootController = root
                application.window = window
                return true
            }
        }
        let delegate = WindowDelegate()
        let app = try SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false)).launch(delegate: delegate)
        #expect(app.window?.rootController === delegate.root)
        #expect(delegate.root.appearances == ["willAppear", "didAppear"], "showWindow made it visible")
        let sceneApp = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        #expect(sceneApp.window == nil, "scene apps make their windows in their scene delegates")
    }
}
