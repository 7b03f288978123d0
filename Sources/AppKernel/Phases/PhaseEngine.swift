
/// A sequence of named phases run in order — the one phase engine of AppKernel. mPaaS's
/// ``BootLoader`` is an engine with six phases; the SDK manager's launch (AppKernelSDK) is an
/// engine with five. Nothing else in the package runs phases.
///
/// ```
///  run ─▶ for each phase, in order:
///         state = .running(phase) · timeline += start · pipeline: <engine>.phase(<name>)
///         ┌ before hooks ─▶ handle hooks ─(a stop: skip body and after)─┐
///         │ body (sync: inline; async: a main-actor task raced against   │   a throw, a failing hook,
///         │       its deadline on the application's clock)               ├─▶ the deadline or a cancel:
///         └ after hooks ◀────────────────────────────────────────────────┘   state = .failed(phase),
///         timeline end · pipeline: <engine>.phaseEnded(<name>)               PhaseError, stop
///  state = .finished
/// ```
///
/// Each phase is a ``HookPoint``: hooks registered on it (in the registry the owner passes) run
/// around its body, and a failing hook fails the phase. Every start and end is published to the
/// application's pipeline observers (stage ``PipelineStage/phases(_:)``), so a trace, a launch
/// timeline or systemd's `STATUS=` read every engine's phases the same way. Synchronous phases
/// run inline — a BootLoader made only of them finishes inside `didFinishLaunching` — while an
/// asynchronous phase is awaited before the next starts. The engine's owner decides what a
/// failure means (the BootLoader reports it to the application; the SDK manager's launch throws).
@MainActor
public final class PhaseEngine<Phase: HookPoint> {
    /// What a phase's body and its hooks receive (the application, the SDK manager).
    public typealias Payload = Phase.Payload

    /// The body of a phase.
    public enum Body {
        /// A synchronous phase, run inline.
        case sync(@MainActor (Payload) throws -> Void)
        /// An asynchronous phase, awaited (within its deadline) before the next one starts.
        case async(@MainActor (Payload) async throws -> Void)
    }

    /// One phase: its identity (the hook point), its deadline and its body.
    public struct Step {
        /// The phase.
        public var phase: Phase
        /// How long an asynchronous phase may run; `nil` uses ``PhaseEngine/defaultDeadline``.
        public var deadline: Duration?
        /// What the phase does.
        public var body: Body

        /// Creates a step.
        public init(_ phase: Phase, deadline: Duration? = nil, body: Body) {
            self.phase = phase
            self.deadline = deadline
            self.body = body
        }
    }

    /// Where the engine is.
    public enum State: Sendable, Hashable {
        /// Not run yet.
        case idle
        /// Running this phase.
        case running(Phase)
        /// The last run finished every phase.
        case finished
        /// The last run failed in this phase; later phases did not run.
        case failed(Phase)

        /// Whether a run is under way.
        public var isRunning: Bool { if case .running = self { true } else { false } }
        /// The phase the last run failed in.
        public var failedPhase: Phase? { if case .failed(let phase) = self { phase } else { nil } }
    }

    /// One phase's run, on the application's clock.
    public struct Record: Sendable, Hashable {
        /// The phase.
        public var phase: Phase
        /// When it started.
        public var start: Duration
        /// When it ended; `nil` while it runs or if it failed.
        public var end: Duration?
        /// The phase's name.
        public var name: String { phase.hookPointName }
        /// How long it took; `nil` while it runs or if it failed.
        public var duration: Duration? { end.map { $0 - start } }
    }

    /// The engine's name: the prefix of its trace lines and errors (`bootLoader`, `sdk`).
    public let name: String
    /// The phases, in the order they run.
    public private(set) var steps: [Step]
    /// How long an asynchronous phase may run when it names no deadline; `nil`: no deadline.
    /// Deadlines need the application's clock: a run without an application has none.
    public var defaultDeadline: Duration?
    /// Where the engine is.
    public private(set) var state: State = .idle
    /// The failure of the last run, set with ``state`` when a phase fails (the run's caller
    /// hears it a main-actor turn later); cleared when a run starts.
    package private(set) var lastFailure: PhaseError?
    /// Each phase of the last run, with its times.
    public private(set) var timeline: [Record] = []
    /// Runs in place of each phase's hooks and body when set — the SDK manager's overridable
    /// `run(_:)`, which calls ``perform(_:_:hooks:)`` for the default. Every phase is then
    /// asynchronous.
    package var stepRunner: (@MainActor (Phase) async throws -> Void)?

    private var run: Run?

    /// Creates an engine.
    /// - Parameters:
    ///   - name: The engine's name in traces and errors.
    ///   - steps: The phases, in order.
    ///   - defaultDeadline: How long an asynchronous phase may run (`nil`: no limit).
    public init(name: String, steps: [Step] = [], defaultDeadline: Duration? = .seconds(20)) {
        self.name = name
        self.steps = steps
        self.defaultDeadline = defaultDeadline
    }

    // MARK: Editing

    /// Inserts `step` at the end, or before or after the phase named.
    /// - Returns: `false` (and changes nothing) while running, when the phase exists already, or
    ///   when the phase to insert next to does not exist.
    @discardableResult
    public func insert(_ step: Step, before: Phase? = nil, after: Phase? = nil) -> Bool {
        guard !state.isRunning, index(of: step.phase) == nil else { return false }
        if let anchor = before ?? after {
            guard let index = index(of: anchor) else { return false }
            steps.insert(step, at: before == nil ? index + 1 : index)
        } else {
            steps.append(step)
        }
        return true
    }

    /// Replaces the body and deadline of `phase`. Returns `false` while running or if there is none.
    @discardableResult
    public func replace(_ phase: Phase, deadline: Duration? = nil, body: Body) -> Bool {
        guard !state.isRunning, let index = index(of: phase) else { return false }
        steps[index].body = body
        steps[index].deadline = deadline
        return true
    }

    /// Removes `phase`. Returns `false` while running or if there is none.
    @discardableResult
    public func remove(_ phase: Phase) -> Bool {
        guard !state.isRunning, let index = index(of: phase) else { return false }
        steps.remove(at: index)
        return true
    }

    private func index(of phase: Phase) -> Int? { steps.firstIndex { $0.phase == phase } }

    // MARK: Running

    /// Runs the phases (all, or those of `only`, in the engine's order) and calls `completion`
    /// with `nil` after the last one, or with the failure. Synchronous phases run before this
    /// returns. A run already under way makes this fail at once with
    /// ``PhaseError/Cause/alreadyRunning``.
    /// - Parameters:
    ///   - payload: What the phases and their hooks receive.
    ///   - hooks: Where the phases' hooks are registered.
    ///   - application: Whose clock measures and bounds the phases and whose pipeline observers
    ///     hear them; `nil`: no deadlines, times from `now`.
    ///   - now: The time without an application.
    package func start(_ payload: Payload, hooks: HookRegistry, application: Application?, only: Set<Phase>? = nil,
                       now: @escaping @MainActor () -> Duration = { .zero },
                       completion: @escaping @MainActor (PhaseError?) -> Void) {
        guard !state.isRunning else {
            return completion(PhaseError(engine: name, phase: nil, cause: .alreadyRunning))
        }
        let selected = only.map { only in steps.filter { only.contains($0.phase) } } ?? steps
        // The phases' hooks are reported to the activity observers of the application they run
        // under, whoever owns the registry (the SDK manager has its own).
        if let application { hooks.activities = application.activities }
        let run = Run(payload: payload, hooks: hooks, application: application, now: now, completion: completion)
        self.run = run
        timeline = []
        lastFailure = nil
        state = selected.first.map { .running($0.phase) } ?? .finished
        advance(run, selected[...])
    }

    /// Runs the phases and returns when they have finished; cancelling the calling task cancels
    /// the running phase (which then fails with ``PhaseError/Cause/cancelled``).
    /// - Throws: ``PhaseError`` naming the phase that failed.
    package func run(_ payload: Payload, hooks: HookRegistry, application: Application?, only: Set<Phase>? = nil,
                     now: @escaping @MainActor () -> Duration = { .zero }) async throws(PhaseError) {
        let cancellation = CancellationRelay()
        let failure = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PhaseError?, Never>) in
                start(payload, hooks: hooks, application: application, only: only, now: now) { continuation.resume(returning: $0) }
                cancellation.set { Task { @MainActor [weak self] in self?.cancel() } }
            }
        } onCancel: {
            cancellation.fire()
        }
        if let failure { throw failure }
    }

    /// Cancels the running phase: its task is cancelled and the run fails in that phase.
    public func cancel() {
        guard let run, case .running = state else { return }
        run.cancelled = true
        run.task?.cancel()
    }

    /// One phase's default: its `before` hooks, its `handle` hooks (a stop skips the body and the
    /// `after` hooks), its body, its `after` hooks. A failing hook throws its ``HookError``. For
    /// a `stepRunner` to call.
    public func perform(_ phase: Phase, _ payload: Payload, hooks: HookRegistry) async throws {
        guard let step = steps.first(where: { $0.phase == phase }) else { return }
        guard try runHooks(before: step, payload, hooks) else { return }
        switch step.body {
        case .sync(let body): try body(payload)
        case .async(let body): try await body(payload)
        }
        try hooks.runAfter(phase, payload, onFailure: .abort)
    }

    /// The `before` and `handle` hooks; `false` when a handler stopped the phase.
    private func runHooks(before step: Step, _ payload: Payload, _ hooks: HookRegistry) throws(HookError) -> Bool {
        try hooks.runBefore(step.phase, payload, onFailure: .abort)
        return try hooks.runHandle(step.phase, payload, onFailure: .abort) == .continue
    }

    private func advance(_ run: Run, _ remaining: ArraySlice<Step>) {
        var remaining = remaining
        while let step = remaining.popFirst() {
            begin(step, run)
            if stepRunner == nil, case .sync(let body) = step.body {
                let start = run.time()
                do {
                    if try runHooks(before: step, run.payload, run.hooks) {
                        try body(run.payload)
                        try run.hooks.runAfter(step.phase, run.payload, onFailure: .abort)
                    }
                } catch {
                    return fail(step, cause(of: error), run)
                }
                run.application?.checkBudget(point: name, stage: .phase, hook: step.phase.hookPointName,
                                             duration: run.time() - start)
                end(step, run)
            } else {
                return runAsync(step, then: remaining, run)
            }
        }
        finish(run)
    }

    private func runAsync(_ step: Step, then remaining: ArraySlice<Step>, _ run: Run) {
        let race = DeadlineRace()
        let payload = run.payload
        let work: @MainActor () async throws -> Void = if let stepRunner {
            { try await stepRunner(step.phase) }
        } else {
            { [unowned self] in try await self.perform(step.phase, payload, hooks: run.hooks) }
        }
        // Released with a phase running (its owner gone), the engine still answers the run: a
        // caller awaiting `run(_:…)` is never left suspended.
        let engineName = name
        let orphaned = { PhaseError(engine: engineName, phase: step.phase.hookPointName, cause: .cancelled) }
        run.task = Task { @MainActor [weak self] in
            let outcome: Result<Void, any Error>
            do {
                try await work()
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            guard race.settle() else { return }
            guard let self else { return run.completion(orphaned()) }
            switch outcome {
            case .success where run.cancelled: self.fail(step, .cancelled, run)
            case .success:
                self.end(step, run)
                self.advance(run, remaining)
            case .failure(let error):
                self.fail(step, run.cancelled ? .cancelled : self.cause(of: error), run)
            }
        }
        guard let application = run.application, let deadline = step.deadline ?? defaultDeadline else { return }
        race.timer = application.scheduleTimer(after: deadline) { [weak self] in
            guard race.settle() else { return }
            guard let self else { return run.completion(orphaned()) }
            run.task?.cancel()
            self.fail(step, .timedOut(deadline), run)
        }
    }

    private func cause(of error: any Error) -> PhaseError.Cause {
        switch error {
        case let error as HookError: .hookFailed(error)
        case let error as PhaseError: error.cause
        default: .threw(error)
        }
    }

    private func begin(_ step: Step, _ run: Run) {
        state = .running(step.phase)
        timeline.append(Record(phase: step.phase, start: run.time(), end: nil))
        run.application?.observe(.phases(name), .phase(step.phase.hookPointName))
    }

    private func end(_ step: Step, _ run: Run) {
        if !timeline.isEmpty { timeline[timeline.count - 1].end = run.time() }
        run.application?.observe(.phases(name), .phaseEnded(step.phase.hookPointName))
    }

    private func fail(_ step: Step, _ cause: PhaseError.Cause, _ run: Run) {
        let failure = PhaseError(engine: name, phase: step.phase.hookPointName, cause: cause)
        state = .failed(step.phase)
        lastFailure = failure
        if let activities = run.application?.activities, activities.isObserved {
            activities.report(.failed(Activity(kind: .phase, name: "\(name).\(step.phase.hookPointName)"), message: failure.description))
        }
        run.application?.observe(.phases(name), .phaseEnded(step.phase.hookPointName))
        complete(run, failure)
    }

    private func finish(_ run: Run) {
        state = .finished
        complete(run, nil)
    }

    private func complete(_ run: Run, _ failure: PhaseError?) {
        if self.run === run { self.run = nil }
        run.task = nil
        run.completion(failure)
    }

    /// One run's context.
    @MainActor
    private final class Run {
        let payload: Payload
        let hooks: HookRegistry
        weak var application: Application?
        let now: @MainActor () -> Duration
        let completion: @MainActor (PhaseError?) -> Void
        var task: Task<Void, Never>?
        var cancelled = false

        init(payload: Payload, hooks: HookRegistry, application: Application?, now: @escaping @MainActor () -> Duration,
             completion: @escaping @MainActor (PhaseError?) -> Void) {
            self.payload = payload
            self.hooks = hooks
            self.application = application
            self.now = now
            self.completion = completion
        }

        func time() -> Duration { application?.uptime ?? now() }
    }
}

/// A phase of a ``PhaseEngine`` failed (or a second run was refused): the engine, the phase,
/// the cause. The phases after it did not run.
public struct PhaseError: Error, CustomStringConvertible {
    /// Why the phase failed.
    public enum Cause: Sendable {
        /// The phase's body threw.
        case threw(any Error)
        /// One of the phase's hooks threw.
        case hookFailed(HookError)
        /// The phase did not finish within its deadline on the application's clock.
        case timedOut(Duration)
        /// The run was cancelled while the phase ran.
        case cancelled
        /// A run was already under way; this one was refused.
        case alreadyRunning
    }

    /// The engine's name (`bootLoader`, `sdk`).
    public var engine: String
    /// The phase's name (`nil` when a second run was refused).
    public var phase: String?
    /// The cause.
    public var cause: Cause

    /// Creates an error.
    public init(engine: String, phase: String?, cause: Cause) {
        self.engine = engine
        self.phase = phase
        self.cause = cause
    }

    /// The underlying error, where there is one.
    public var underlyingError: (any Error)? {
        switch cause {
        case .threw(let error): error
        case .hookFailed(let error): error.underlyingError
        case .cancelled: CancellationError()
        case .timedOut, .alreadyRunning: nil
        }
    }

    /// What failed, where, and what to do.
    public var description: String {
        let place = "the \(engine) phase '\(phase ?? "")'"
        switch cause {
        case .threw(let error): return "\(place) threw: \(error). The phases after it did not run."
        case .hookFailed(let error): return "\(place) failed in its \(error.stage.rawValue) hook '\(error.hook)': \(error.underlyingError.map { "\($0)" } ?? "\(error)")."
        case .timedOut(let deadline): return "\(place) did not finish within its deadline of \(deadline)."
        case .cancelled: return "\(place) was cancelled."
        case .alreadyRunning: return "the \(engine) phases are already running; wait for them instead of starting another run."
        }
    }
}
