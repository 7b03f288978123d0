import Foundation
import Testing
import AppKernel
import AppKernelTesting

struct Boom: Error, CustomStringConvertible {
    var description: String { "Boom" }
}

/// A hook point of another kind, as the SDK manager's launch phases are.
enum Phase: String, HookPoint {
    case config, auth
    typealias Payload = String
    var hookPointName: String { rawValue }
}

@MainActor
struct HookRegistryTests {
    let log = CallLog()
    let clock = TestClock()

    func launched(_ configuration: ApplicationConfiguration = ApplicationConfiguration()) throws -> (SimulatedHost, Application) {
        let host = SimulatedHost(clock: clock, configuration: configuration)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        log.lines.removeAll()
        return (host, app)
    }

    @Test func handlersRunByPriorityThenRegistrationAndTheFirstStopWins() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched()
        kept.append(app.hooks.handle(.didReceiveMemoryWarning, label: "a") { _ in log.lines.append("a"); return .continue })
        kept.append(app.hooks.handle(.didReceiveMemoryWarning, priority: 10, label: "urgent") { _ in log.lines.append("urgent"); return .continue })
        kept.append(app.hooks.handle(.didReceiveMemoryWarning, label: "b") { _ in log.lines.append("b"); return .return })
        kept.append(app.hooks.handle(.didReceiveMemoryWarning, label: "c") { _ in log.lines.append("c"); return .continue })
        kept.append(app.hooks.before(.didReceiveMemoryWarning, priority: -1, label: "late-before") { _ in log.lines.append("before-2") })
        kept.append(app.hooks.before(.didReceiveMemoryWarning) { _ in log.lines.append("before-1") })
        kept.append(app.hooks.after(.didReceiveMemoryWarning) { _ in log.lines.append("after") })
        #expect(app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: .handle) == ["urgent", "a", "b", "c"])
        try host.sendMemoryWarning()
        #expect(log.take() == ["before-1", "before-2", "urgent", "a", "b"])
        #expect(host.trace.take().last == "hooks(return).didReceiveMemoryWarning")
    }

    @Test func afterHooksRunAfterTheDelegateOnContinue() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched()
        let token = app.addListener(for: .didReceiveMemoryWarning) { [log] _ in log.lines.append("listener") }
        kept.append(app.hooks.before(.didReceiveMemoryWarning) { _ in log.lines.append("before") })
        kept.append(app.hooks.handle(.didReceiveMemoryWarning) { _ in log.lines.append("handle"); return .continue })
        kept.append(app.hooks.after(.didReceiveMemoryWarning) { _ in log.lines.append("after") })
        try host.sendMemoryWarning()
        #expect(log.take() == ["before", "handle", "app.memoryWarning", "listener", "after"])
        withExtendedLifetime(token) {}
    }

    @Test func registeringDuringDispatchAffectsTheNextDispatchOnly() throws {
        let (host, app) = try launched()
        var added: ListenerToken?
        // Unowned: the hook lives in the application's registry (a strong capture is a cycle).
        let adder = app.hooks.handle(.didReceiveMemoryWarning, label: "adder") { [unowned app] _ in
            log.lines.append("adder")
            if added == nil {
                added = app.hooks.handle(.didReceiveMemoryWarning, label: "added") { _ in log.lines.append("added"); return .continue }
            }
            return .continue
        }
        try host.sendMemoryWarning()
        #expect(log.take() == ["adder", "app.memoryWarning"])
        try host.sendMemoryWarning()
        #expect(log.take() == ["adder", "added", "app.memoryWarning"])
        withExtendedLifetime(adder) {}
        added = nil   // the adder's closure holds `added`, which holds the chain: let the cycle go
    }

    @Test func aHookAddedToALaterStageDuringDispatchWaitsForTheNextDispatch() throws {
        let (host, app) = try launched()
        var added: [ListenerToken] = []
        let adder = app.hooks.before(.didReceiveMemoryWarning, label: "adder") { [unowned app] _ in
            log.lines.append("before")
            guard added.isEmpty else { return }
            app.hooks.handle(.didReceiveMemoryWarning, label: "stopper") { _ in log.lines.append("stopper"); return .return }.store(in: &added)
            app.hooks.after(.didReceiveMemoryWarning, label: "after") { _ in log.lines.append("after") }.store(in: &added)
        }
        try host.sendMemoryWarning()
        #expect(log.take() == ["before", "app.memoryWarning"], "the dispatch keeps the snapshot it began with")
        try host.sendMemoryWarning()
        #expect(log.take() == ["before", "stopper"], "the next one sees them")
        withExtendedLifetime(adder) {}
        added.removeAll()   // as above: the closure holds `added`
    }

    @Test func removingDuringDispatchAffectsTheNextDispatchOnly() throws {
        let (host, app) = try launched()
        var second: ListenerToken?
        let first = app.hooks.handle(.didReceiveMemoryWarning) { _ in
            log.lines.append("first")
            second?.cancel()
            return .continue
        }
        second = app.hooks.handle(.didReceiveMemoryWarning) { _ in log.lines.append("second"); return .continue }
        try host.sendMemoryWarning()
        #expect(log.take() == ["first", "second", "app.memoryWarning"], "the current dispatch keeps its snapshot")
        try host.sendMemoryWarning()
        #expect(log.take() == ["first", "app.memoryWarning"])
        #expect(second?.isCancelled == true)
        first.cancel()
        first.cancel()
        try host.sendMemoryWarning()
        #expect(log.take() == ["app.memoryWarning"])
    }

    @Test func aThrowingHookIsReportedWithItsPointAndNameAndTheEventGoesOn() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched()
        var handled: [HookError] = []
        app.hookErrorHandler = { handled.append($0) }
        kept.append(app.hooks.before(.didReceiveMemoryWarning, label: "flushCaches") { _ in throw Boom() })
        kept.append(app.hooks.handle(.didReceiveMemoryWarning) { _ in throw Boom() })
        kept.append(app.hooks.after(.didReceiveMemoryWarning, label: "audit") { _ in throw Boom() })
        try host.sendMemoryWarning()
        #expect(log.take() == ["app.memoryWarning"], "a failing handler counts as .continue")
        #expect(app.state == .active)
        #expect(handled.map(\.stage) == [.before, .handle, .after])
        #expect(handled.map(\.point) == ["didReceiveMemoryWarning", "didReceiveMemoryWarning", "didReceiveMemoryWarning"])
        #expect(handled[0].hook == "flushCaches")
        #expect(handled[1].hook.hasPrefix("HookRegistryTests.swift:"), "an unlabelled hook is named by where it was registered")
        #expect(handled[0].underlyingError is Boom)
        #expect(handled[0].description == "the 'before' hook 'flushCaches' at hook point 'didReceiveMemoryWarning' threw: Boom. Fix the hook or cancel its token.")
        #expect(app.hookErrors.count == 3)
        #expect(app.diagnostics.filter { $0.kind == .hookFailed }.map(\.subject).first == "didReceiveMemoryWarning/flushCaches")
    }

    @Test func aThrowingLaunchHookReachesTheLaunchErrorHandlerAndTheLaunchCompletes() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        final class Failing: FrameworkInterface {}
        let host = SimulatedHost(clock: clock)
        let loader = BootLoader()
        loader.addPhase("record") { _ in self.log.lines.append("bootloader.record") }
        let app = Application(delegate: RecordingApplicationDelegate(log: log), bootLoader: loader, clock: clock)
        var errors: [String] = []
        app.hookErrorHandler = { errors.append("\($0.point)/\($0.hook)") }
        kept.append(app.hooks.before(.didFinishLaunching, label: "loadFlags") { _ in throw Boom() })
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        #expect(errors == ["didFinishLaunching/loadFlags"])
        #expect(app.state == .active)
        #expect(app.isFullyLoaded)
        #expect(log.lines.contains("bootloader.record"))
        _ = host
    }

    @Test func aSlowSynchronousHookIsReportedWithItsNameAndDuration() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched(ApplicationConfiguration(slowHookBudget: .milliseconds(100)))
        kept.append(app.hooks.before(.didEnterBackground, label: "syncToDisk") { _ in clock.simulateWork(for: .milliseconds(250)) })
        kept.append(app.hooks.before(.didEnterBackground, label: "quick") { _ in clock.simulateWork(for: .milliseconds(100)) })
        try host.moveToBackground()
        let slow = app.diagnostics.filter { $0.kind == .slowHook }
        #expect(slow.map(\.subject) == ["didEnterBackground/syncToDisk"])
        #expect(slow.first?.message.contains("0.25 seconds") == true)
    }

    @Test func theBudgetCanBeTurnedOff() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched(ApplicationConfiguration(slowHookBudget: nil))
        kept.append(app.hooks.before(.didEnterBackground) { _ in clock.simulateWork(for: .seconds(3)) })
        try host.moveToBackground()
        #expect(app.diagnostics.isEmpty)
    }

    @Test func aBudgetChangedBetweenDispatchesAppliesToTheNextOne() throws {
        // Dispatches share one snapshot of a point's hooks, budget included, until something
        // changes: turning the budget on or off must still reach the next dispatch.
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched(ApplicationConfiguration(slowHookBudget: nil))
        kept.append(app.hooks.before(.didEnterBackground, label: "syncToDisk") { _ in clock.simulateWork(for: .seconds(3)) })
        try host.moveToBackground()
        #expect(app.diagnostics.isEmpty)
        app.hooks.slowHookBudget = .seconds(1)
        try host.moveToForeground()
        try host.moveToBackground()
        #expect(app.diagnostics.filter { $0.kind == .slowHook }.map(\.subject) == ["didEnterBackground/syncToDisk"])
        app.hooks.slowHookBudget = nil
        try host.moveToForeground()
        try host.moveToBackground()
        #expect(app.diagnostics.filter { $0.kind == .slowHook }.count == 1)
    }

    @Test func sceneEventsAreHookPointsToo() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched()
        kept.append(app.hooks.handle(.sceneWillResignActive) { scene in
            log.lines.append("hook.\(scene.id).willResignActive")
            return .return
        })
        try host.moveToBackground()
        #expect(log.take() == ["hook.scene-1.willResignActive", "scene-1.didEnterBackground"])
        #expect(app.state == .background, "hooks decide deliveries; the system decides states")
    }

    @Test func aHandlerCanAnswerAURLForTheDelegate() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (host, app) = try launched(ApplicationConfiguration(usesScenes: false))
        kept.append(app.hooks.handle(.openURL) { request in request.url.scheme == "blocked" ? .returnNo : .continue })
        #expect(try host.open(URL.literal("blocked://x")) == false)
        #expect(try host.open(sampleURL) == true)
        #expect(log.take() == ["app.open(myapp://item/42)"])
    }

    @Test func theRegistryServesOtherKindsOfHookPoint() throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let registry = HookRegistry(clock: clock)
        var seen: [String] = []
        kept.append(registry.before(point: Phase.config) { seen.append("before:\($0)") })
        kept.append(registry.handle(point: Phase.config) { seen.append("handle:\($0)"); return .return })
        kept.append(registry.after(point: Phase.config) { seen.append("after:\($0)") })
        kept.append(registry.before(point: Phase.auth, label: "guard") { _ in throw Boom() })
        #expect(registry.hasHooks(at: Phase.config))
        try registry.runBefore(Phase.config, "boot.json", onFailure: .abort)
        #expect(try registry.runHandle(Phase.config, "boot.json", onFailure: .abort) == .return)
        try registry.runAfter(Phase.config, "boot.json", onFailure: .abort)
        #expect(seen == ["before:boot.json", "handle:boot.json", "after:boot.json"])
        // An owner that aborts on the first failure (the SDK manager's launch) gets the error.
        let error = #expect(throws: HookError.self) { try registry.runBefore(Phase.auth, "x", onFailure: .abort) }
        #expect(error?.point == "auth")
        #expect(error?.hook == "guard")
    }

    @Test func hookResultsMirrorMPaaSValues() {
        #expect(HookResult.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(HookResult.allCases.map(\.answer) == [nil, true, true, false])
        #expect(HookResult.allCases.map(\.stops) == [false, true, true, true])
        #expect(HookResult.allCases.map(\.description) == ["continue", "return", "returnYes", "returnNo"])
    }
}
