import AppKernel
import AppKernelModules
public import AppKernelPOSIX
import AppKernelTesting

/// A forceios-style launch on a virtual clock, recorded into a ``LaunchTimeline``: a real
/// `Application` with mPaaS's BootLoader (AppKernelModules' `ContextBootLoader` starting
/// services), an SDK-manager-like phase engine behind a launch gate, and hooks — where each piece
/// of work takes the time the script gives it, so the recording is the same on every run and
/// machine. README's launch picture (`LaunchPicture`) and the timeline's tests both draw one.
public struct ScriptedLaunch: Sendable {
    /// A service the BootLoader starts.
    public struct ScriptedService: Sendable {
        /// Its name in the registry.
        public var name: String
        /// How long its start takes.
        public var milliseconds: Int
        /// The services it needs started first.
        public var dependencies: [String]
        /// The message its start throws after `milliseconds`, or nil when it succeeds; a failing
        /// service is registered `.continueWithout`, so the launch goes on.
        public var failure: String?

        /// A service taking `milliseconds` to start.
        public init(_ name: String, milliseconds: Int, dependencies: [String] = [], failure: String? = nil) {
            self.name = name
            self.milliseconds = milliseconds
            self.dependencies = dependencies
            self.failure = failure
        }
    }

    /// A hook that works for a while, before or after a stage of the launch.
    public struct ScriptedHook: Sendable {
        /// Where a hook runs.
        public enum Stage: Sendable {
            /// The application event `didFinishLaunching`.
            case didFinishLaunching
            /// A BootLoader phase or an SDK phase, by name.
            case phase(String)
        }

        /// Where it runs.
        public var stage: Stage
        /// Its label.
        public var label: String
        /// How long it works.
        public var milliseconds: Int
        /// Runs after the stage instead of before it.
        public var after: Bool

        /// A hook taking `milliseconds`.
        public init(_ stage: Stage, _ label: String, milliseconds: Int, after: Bool = false) {
            self.stage = stage
            self.label = label
            self.milliseconds = milliseconds
            self.after = after
        }
    }

    /// The BootLoader's phases, in order (what the recording holds for it).
    public static let bootLoaderPhases = ["loadModules", "setupWindow", "startRunOnceServices", "startNonLazyServices",
                                          "startAutoStartServiceGroups", "showWindow", "startLauncher"]

    /// The services.
    public var services: [ScriptedService]
    /// The hooks.
    public var hooks: [ScriptedHook]
    /// The SDK manager's launch phases (AppKernelSDK's `LaunchPhase`) with their durations.
    public var sdkPhases: [(name: String, milliseconds: Int)]

    /// A launch of `services`, `hooks` and `sdkPhases`.
    public init(services: [ScriptedService], hooks: [ScriptedHook], sdkPhases: [(name: String, milliseconds: Int)]) {
        self.services = services
        self.hooks = hooks
        self.sdkPhases = sdkPhases
    }

    /// Runs the launch until every gate is open and the BootLoader finished, and returns its
    /// timeline.
    @MainActor
    public func record() async throws -> LaunchTimeline {
        let clock = TestClock()
        let services = services
        let loader = ContextBootLoader { context in
            for service in services {
                context.services.register(named: service.name, dependencies: service.dependencies,
                                          failurePolicy: service.failure == nil ? .failLaunch : .continueWithout) {
                    TimedService(clock, .milliseconds(service.milliseconds), failure: service.failure)
                }
            }
        }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        var tokens: [ListenerToken] = []
        for hook in hooks {
            let work = { clock.simulateWork(for: .milliseconds(hook.milliseconds)) }
            switch (hook.stage, hook.after) {
            case (.didFinishLaunching, false): app.hooks.before(.didFinishLaunching, label: hook.label) { _ in work() }.store(in: &tokens)
            case (.didFinishLaunching, true): app.hooks.after(.didFinishLaunching, label: hook.label) { _ in work() }.store(in: &tokens)
            case (.phase(let name), false): app.hooks.before(BootPhase(name), label: hook.label) { _ in work() }.store(in: &tokens)
            case (.phase(let name), true): app.hooks.after(BootPhase(name), label: hook.label) { _ in work() }.store(in: &tokens)
            }
        }
        let sdk = PhaseEngine<BootPhase>(name: "sdk", steps: sdkPhases.map { phase in
            PhaseEngine.Step(BootPhase(phase.name), body: .async { _ in try await clock.sleep(for: .milliseconds(phase.milliseconds)) })
        })
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
        return timeline
    }
}

/// A service whose start takes `duration` on `clock`, then succeeds or throws `failure`.
@MainActor
private final class TimedService: Service {
    struct Refusal: Error, CustomStringConvertible { let description: String }
    let clock: TestClock
    let duration: Duration
    let failure: String?

    init(_ clock: TestClock, _ duration: Duration, failure: String?) {
        self.clock = clock
        self.duration = duration
        self.failure = failure
    }

    func start() async throws {
        try await clock.sleep(for: duration)
        if let failure { throw Refusal(description: failure) }
    }
}
