public import AppKernel

/// Records the pipeline of an application — delegate and scene-delegate callbacks, publications
/// to listeners, the system's own decisions — as lines, for whole-trace assertions.
///
/// Lines read `<where>.<what>`: `app.didFinishLaunching`, `scene-1.willConnect`,
/// `listeners.didEnterBackground`, `listeners.scene-1.didBecomeActive`, `system.didSuspend`,
/// `hooks(return).willResignActive` (a handler stopped the event),
/// `bootLoader.phase(setupWindow)` … `bootLoader.phaseEnded(setupWindow)` (any phase engine:
/// `sdk.phase(auth)`).
///
/// ```swift
/// let host = SimulatedHost()
/// try host.launch(delegate: AppDelegate())
/// #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
///                               "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
///                               "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
/// ```
@MainActor
public final class TraceRecorder {
    /// Which stages to record.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The options' bits.
        public var rawValue: Int
        /// Creates options from bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Application and scene delegate callbacks.
        public static let delegates = Options(rawValue: 1)
        /// Publications to listeners.
        public static let listeners = Options(rawValue: 2)
        /// The system's own decisions (suspension, task expiry).
        public static let system = Options(rawValue: 4)
        /// Events a `handle` hook stopped (`hooks(return).willResignActive`).
        public static let hookStops = Options(rawValue: 8)
        /// Phase engines' phases, their starts and ends (`bootLoader.phase(setupWindow)`,
        /// `bootLoader.phaseEnded(setupWindow)`, `sdk.phase(auth)`).
        public static let phases = Options(rawValue: 16)
        /// Hooks about to run at a point that has some (`hooks.willResignActive`).
        public static let hookRuns = Options(rawValue: 32)
        /// Everything.
        public static let all: Options = [.delegates, .listeners, .system, .hookStops, .phases, .hookRuns]
    }

    /// One recorded step.
    public struct Entry: Sendable, Hashable {
        /// Where it happened.
        public var stage: PipelineStage
        /// What happened.
        public var event: LifecycleEvent
        /// When, on the application's clock.
        public var time: Duration
    }

    /// Which stages are recorded; change it at any time. With none, the recorder does not
    /// observe its applications at all (benchmarks pay nothing for it).
    public var options: Options {
        didSet { if options.isEmpty != oldValue.isEmpty { observeApplications() } }
    }
    /// Everything recorded since the last ``take()`` or ``clear()``.
    public private(set) var entries: [Entry] = []
    private var tokens: [ListenerToken] = []
    private var applications: [WeakApplication] = []

    /// An attached application, not kept alive by the recorder.
    private struct WeakApplication {
        weak var application: Application?
    }

    /// Creates a recorder of `options` (delegates, system decisions and hook stops by default).
    public init(options: Options = [.delegates, .system, .hookStops]) { self.options = options }

    /// Starts recording `application`. Attach before launching to see the launch.
    public func attach(to application: Application) {
        applications.append(WeakApplication(application: application))
        if !options.isEmpty { tokens.append(observe(application)) }
    }

    private func observe(_ application: Application) -> ListenerToken {
        application.addPipelineObserver { [weak self, weak application] stage, event in
            guard let self, self.records(stage) else { return }
            self.entries.append(Entry(stage: stage, event: event, time: application?.uptime ?? .zero))
        }
    }

    /// Observes every attached application while some stage is recorded; none otherwise.
    private func observeApplications() {
        for token in tokens { token.cancel() }
        tokens = options.isEmpty ? [] : applications.compactMap(\.application).map(observe)
    }

    /// The recorded lines, oldest first.
    public var lines: [String] { entries.map { TraceRecorder.line($0.stage, $0.event) } }

    /// Returns the recorded lines and forgets them, so the next assertion sees only what follows.
    public func take() -> [String] {
        defer { entries.removeAll() }
        return lines
    }

    /// Forgets what was recorded.
    public func clear() { entries.removeAll() }

    /// The line for one step: `<stage>.<event>`, scene events as `<scene id>.<event>` — the
    /// kernel's own text (`PipelineStage.traceLine(for:)`), which the process host's journal
    /// writes too.
    public static func line(_ stage: PipelineStage, _ event: LifecycleEvent) -> String {
        stage.traceLine(for: event)
    }

    private func records(_ stage: PipelineStage) -> Bool {
        switch stage {
        case .listeners: options.contains(.listeners)
        case .applicationDelegate, .sceneDelegate: options.contains(.delegates)
        case .system: options.contains(.system)
        case .hooks: options.contains(.hookRuns)
        case .hookStop: options.contains(.hookStops)
        case .phases: options.contains(.phases)
        }
    }
}
