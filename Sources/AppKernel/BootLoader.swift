/// Starts the app's parts in an ordered list of named phases — mPaaS's BootLoader.
///
/// The default phases mirror mPaaS: ``setupWindowPhase``, ``startRunOnceServicesPhase``,
/// ``startNonLazyServicesPhase``, ``startAutoStartServiceGroupsPhase``, ``showWindowPhase``,
/// ``startLauncherPhase``. Each runs the `open` method of the same name, so a subclass can
/// change one; apps also add, replace or remove phases by name:
///
/// ```swift
/// let loader = BootLoader()
/// loader.addPhase("loadFeatureFlags", before: BootLoader.showWindowPhase) { app in try flags.load() }
/// loader.addPhase("warmCache", deadline: .seconds(5)) { app in try await cache.warm() }
/// loader.removePhase(BootLoader.startLauncherPhase)
/// ```
///
/// It runs exactly once per application: during `didFinishLaunching` for a foreground launch
/// (after the delegate, before the `after` hooks), or at the first `didBecomeActive` after a
/// background launch. A launch that a `handle` hook stops skips it. Synchronous phases run
/// inline; an async phase is awaited, and the phases after it (and the launch's `after` hooks)
/// wait for it. An async phase that does not finish within its deadline (default 20 s, the iOS
/// launch watchdog, on the application's clock) fails with a ``HookError`` naming it; a phase
/// that throws fails likewise. A failure stops the remaining phases and reaches the
/// application's ``Application/launchErrorHandler``; the application itself stays in its state.
///
/// The service phases do nothing until a service registry takes them over (AppKernelModules'
/// `ContextBootLoader` does); the window phases make and show ``Application/window`` for apps without
/// scenes (scene apps make their windows in their scene delegates).
@MainActor
open class BootLoader {
    /// Where the BootLoader is in its single run.
    public enum State: Sendable, Hashable {
        /// Not started.
        case idle
        /// Running the named phase (an async one, while the launch goes on).
        case running(String)
        /// Every phase finished.
        case finished
        /// The named phase failed; later phases did not run.
        case failed(String)
    }

    /// A phase's start and end on the application's clock.
    public struct PhaseRecord: Sendable, Hashable {
        /// The phase's name.
        public var name: String
        /// When it started (time since the application was created).
        public var start: Duration
        /// When it ended; `nil` while it runs or if it failed.
        public var end: Duration?
    }

    /// The body of a phase.
    public enum PhaseBody {
        /// A synchronous phase.
        case sync(@MainActor (Application) throws -> Void)
        /// An asynchronous phase, awaited before the next one starts.
        case async(@MainActor (Application) async throws -> Void)
    }

    /// A named phase.
    public struct Phase {
        /// The phase's name, unique within its BootLoader.
        public var name: String
        /// How long an async phase may run; `nil` uses ``defaultPhaseDeadline``.
        public var deadline: Duration?
        /// What the phase does.
        public var body: PhaseBody
    }

    /// mPaaS's first phase: set up the window.
    public static let setupWindowPhase = "setupWindow"
    /// Start the services that run once per installation.
    public static let startRunOnceServicesPhase = "startRunOnceServices"
    /// Start the services that are not lazily loaded.
    public static let startNonLazyServicesPhase = "startNonLazyServices"
    /// Start the auto-start service groups.
    public static let startAutoStartServiceGroupsPhase = "startAutoStartServiceGroups"
    /// Show the window.
    public static let showWindowPhase = "showWindow"
    /// Start the launcher (the root micro-application).
    public static let startLauncherPhase = "startLauncher"

    /// The phases, in the order they run.
    public private(set) var phases: [Phase] = []
    /// How long an async phase may run when it names no deadline. Default 20 s.
    public var defaultPhaseDeadline: Duration = .seconds(20)
    /// Where the BootLoader is.
    public private(set) var state: State = .idle
    /// Each phase run so far, with its times.
    public private(set) var timeline: [PhaseRecord] = []

    /// Creates a BootLoader with mPaaS's default phases (or none).
    public init(includingDefaultPhases: Bool = true) {
        guard includingDefaultPhases else { return }
        phases = [
            Phase(name: Self.setupWindowPhase, body: .sync { [unowned self] in self.setupWindow($0) }),
            Phase(name: Self.startRunOnceServicesPhase, body: .sync { [unowned self] in try self.startRunOnceServices($0) }),
            Phase(name: Self.startNonLazyServicesPhase, body: .sync { [unowned self] in try self.startNonLazyServices($0) }),
            Phase(name: Self.startAutoStartServiceGroupsPhase, body: .sync { [unowned self] in try self.startAutoStartServiceGroups($0) }),
            Phase(name: Self.showWindowPhase, body: .sync { [unowned self] in self.showWindow($0) }),
            Phase(name: Self.startLauncherPhase, body: .sync { [unowned self] in try self.startLauncher($0) }),
        ]
    }

    /// The phases' names, in order.
    public var phaseNames: [String] { phases.map(\.name) }

    // MARK: Editing the phases

    /// Adds a synchronous phase at the end, or before or after the phase named.
    /// - Returns: `false` (and changes nothing) if a phase has that name already, or the
    ///   phase to insert next to does not exist.
    @discardableResult
    public func addPhase(_ name: String, before: String? = nil, after: String? = nil,
                         _ body: @escaping @MainActor (Application) throws -> Void) -> Bool {
        insert(Phase(name: name, deadline: nil, body: .sync(body)), before: before, after: after)
    }

    /// Adds an asynchronous phase at the end, or before or after the phase named.
    /// - Parameter deadline: How long it may run (default ``defaultPhaseDeadline``).
    /// - Returns: `false` (and changes nothing) if a phase has that name already, or the
    ///   phase to insert next to does not exist.
    @discardableResult
    public func addPhase(_ name: String, before: String? = nil, after: String? = nil, deadline: Duration? = nil,
                         _ body: @escaping @MainActor (Application) async throws -> Void) -> Bool {
        insert(Phase(name: name, deadline: deadline, body: .async(body)), before: before, after: after)
    }

    /// Replaces the body of the phase named with a synchronous one. Returns `false` if there is none.
    @discardableResult
    public func replacePhase(_ name: String, with body: @escaping @MainActor (Application) throws -> Void) -> Bool {
        replace(name, deadline: nil, body: .sync(body))
    }

    /// Replaces the body of the phase named with an asynchronous one. Returns `false` if there is none.
    @discardableResult
    public func replacePhase(_ name: String, deadline: Duration? = nil,
                             with body: @escaping @MainActor (Application) async throws -> Void) -> Bool {
        replace(name, deadline: deadline, body: .async(body))
    }

    /// Removes the phase named. Returns `false` if there is none.
    @discardableResult
    public func removePhase(_ name: String) -> Bool {
        guard state == .idle, let index = phases.firstIndex(where: { $0.name == name }) else { return false }
        phases.remove(at: index)
        return true
    }

    private func insert(_ phase: Phase, before: String?, after: String?) -> Bool {
        guard state == .idle, !phases.contains(where: { $0.name == phase.name }) else { return false }
        if let before {
            guard let index = phases.firstIndex(where: { $0.name == before }) else { return false }
            phases.insert(phase, at: index)
        } else if let after {
            guard let index = phases.firstIndex(where: { $0.name == after }) else { return false }
            phases.insert(phase, at: index + 1)
        } else {
            phases.append(phase)
        }
        return true
    }

    private func replace(_ name: String, deadline: Duration?, body: PhaseBody) -> Bool {
        guard state == .idle, let index = phases.firstIndex(where: { $0.name == name }) else { return false }
        phases[index].body = body
        phases[index].deadline = deadline
        return true
    }

    // MARK: The default phases and the run's edges (override in a subclass)

    /// Called once before the first phase.
    open func willStart(_ application: Application) {}
    /// Called once after the last phase finished (not after a failure).
    open func didStart(_ application: Application) {}

    /// Makes ``Application/window`` for apps without scenes, if the delegate did not, with a
    /// ``PlaceholderController`` as its root.
    open func setupWindow(_ application: Application) {
        guard !application.configuration.usesScenes, application.window == nil else { return }
        let window = Window()
        window.rootController = PlaceholderController(message: "Launching…")
        application.window = window
    }

    /// Starts run-once services. Nothing to do until a service registry takes this phase over.
    open func startRunOnceServices(_ application: Application) throws {}
    /// Starts non-lazy services. Nothing to do until a service registry takes this phase over.
    open func startNonLazyServices(_ application: Application) throws {}
    /// Starts auto-start service groups. Nothing to do until a service registry takes this phase over.
    open func startAutoStartServiceGroups(_ application: Application) throws {}

    /// Shows ``Application/window`` for apps without scenes.
    open func showWindow(_ application: Application) {
        guard !application.configuration.usesScenes else { return }
        application.window?.makeKeyAndVisible()
    }

    /// Starts the launcher. Nothing to do until a micro-application registry takes this phase over.
    open func startLauncher(_ application: Application) throws {}

    // MARK: Running

    /// Runs the phases once; calls `finished` after the last one (not after a failure). Later calls do nothing.
    func run(in application: Application, finished: @escaping @MainActor () -> Void) {
        guard state == .idle else { return }
        state = .running(phases.first?.name ?? "")
        willStart(application)
        runPhases(phases[...], in: application, finished: finished)
    }

    private func runPhases(_ remaining: ArraySlice<Phase>, in application: Application,
                           finished: @escaping @MainActor () -> Void) {
        var remaining = remaining
        while let phase = remaining.popFirst() {
            state = .running(phase.name)
            let start = application.uptime
            timeline.append(PhaseRecord(name: phase.name, start: start, end: nil))
            application.observe(.bootLoader, .bootPhase(phase.name))
            switch phase.body {
            case .sync(let body):
                do {
                    try body(application)
                } catch {
                    return fail(phase, .threw(error), in: application)
                }
                endPhase(at: application.uptime)
                application.checkBudget(point: "bootLoader", stage: .bootPhase, hook: phase.name,
                                        duration: application.uptime - start)
            case .async(let body):
                return runAsync(phase, body, then: remaining, in: application, finished: finished)
            }
        }
        state = .finished
        didStart(application)
        finished()
    }

    private func runAsync(_ phase: Phase, _ body: @escaping @MainActor (Application) async throws -> Void,
                          then remaining: ArraySlice<Phase>, in application: Application,
                          finished: @escaping @MainActor () -> Void) {
        let deadline = phase.deadline ?? defaultPhaseDeadline
        let race = DeadlineRace()
        let task = Task { @MainActor [weak application] in
            guard let application else { return }
            let outcome: Result<Void, any Error>
            do {
                try await body(application)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            guard race.settle() else { return }
            switch outcome {
            case .success:
                self.endPhase(at: application.uptime)
                self.runPhases(remaining, in: application, finished: finished)
            case .failure(let error):
                self.fail(phase, .threw(error), in: application)
            }
        }
        race.timer = application.clock.schedule(deadline) { [weak self, weak application] in
            guard let self, let application, race.settle() else { return }
            task.cancel()
            self.fail(phase, .timedOut(deadline: deadline), in: application)
        }
    }

    private func endPhase(at time: Duration) {
        if !timeline.isEmpty { timeline[timeline.count - 1].end = time }
    }

    private func fail(_ phase: Phase, _ failure: HookError.Failure, in application: Application) {
        state = .failed(phase.name)
        application.reportHookError(HookError(point: "bootLoader", stage: .bootPhase, hook: phase.name, failure: failure))
    }
}

