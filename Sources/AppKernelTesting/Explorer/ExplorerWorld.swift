public import AppKernel
import Foundation

/// One app under exploration: a fresh ``SimulatedHost`` on a fresh ``TestClock``, how to make
/// the app's delegate, and what the ``LifecycleExplorer``'s invariants observe of the run.
///
/// The explorer's *world* closure makes one for every schedule, inside a fresh `SharedScope`, so
/// nothing of one schedule reaches the next. Subclass it to add the parts of an app the system
/// steps do not know (the SDK testing kit's `SDKWorld`: an SDK manager, accounts, passcodes).
///
/// ```swift
/// let world = ExplorerWorld(expression: "ExplorerWorld { _ in AppDelegate() }") { _ in AppDelegate() }
/// try world.launch()
/// try world.host.moveToBackground()
/// await world.advance(by: .seconds(10))
/// #expect(world.application?.state == .suspended)
/// ```
@MainActor
open class ExplorerWorld {
    /// The host the app runs on.
    public let host: SimulatedHost
    /// The host's clock: time moves only when a step moves it.
    public let clock: TestClock
    /// The Swift expression that makes this world, as a printed test writes it.
    public let expression: String
    /// Makes the app's delegate for every launch (a relaunch gets a new one, as a new process),
    /// given the world (to track the work it starts, say).
    public let makeDelegate: @MainActor (ExplorerWorld) -> any ApplicationDelegate
    /// An mPaaS-style framework interface to install at every launch.
    public var makeInterface: (@MainActor () -> (any FrameworkInterface)?)?
    /// What each signal a `ProcessHost`-style host handles does here, as a step (`SIGTERM` →
    /// `terminate`): the `signal(<name>)` steps' table. `ProcessHost`'s defaults unless changed.
    public var signalSteps: [String: ExplorerStep] = [
        "SIGTERM": ExplorerStep("terminate"), "SIGINT": ExplorerStep("terminate"), "SIGTSTP": ExplorerStep("background"),
        "SIGCONT": ExplorerStep("foreground"), "SIGHUP": ExplorerStep("reload"), "SIGUSR1": ExplorerStep("memoryWarning"),
    ]
    /// More of the observable state the explorer prunes equal states by: each closure answers a
    /// line (what your app shows, a counter of your own). Two runs that end in the same
    /// fingerprint are explored once.
    public var fingerprintParts: [@MainActor () -> String] = []
    /// At most how many times ``settle()`` yields the main actor after each step — for work the
    /// app hands to tasks (an SDK manager's launch phases). It stops earlier, after a yield in
    /// which nothing observable (``activity``) changed. A world whose app does all its work in
    /// its callbacks can set it to 0, which makes exploring it several times faster.
    public var settleYields = 256
    /// Every completion a step handed the app (a push, a fetch, a quick action), oldest first.
    public private(set) var completions: [PendingCompletion] = []
    /// The tasks given to ``track(_:named:)``, oldest first.
    public private(set) var trackedWork: [TrackedWork] = []
    /// Services that stopped while a service depending on them still ran, as messages.
    public private(set) var servicesStoppedEarly: [String] = []
    /// Delegate and scene callbacks that reached an app after its termination, as trace lines.
    public private(set) var callbacksAfterTermination: [String] = []
    /// The steps the explorer runs this world with (`signal(…)` steps look up theirs here).
    public internal(set) var steps: StepSet?
    /// Whether ``finish()`` ran.
    public private(set) var isFinished = false
    private var observations: [ListenerToken] = []
    private var tearDowns: [@MainActor () -> Void] = []
    /// The applications that heard `willTerminate`.
    private var toldToTerminate: Set<ObjectIdentifier> = []
    /// How many pipeline steps the apps of this world took.
    private var pipelineSteps = 0

    /// A completion a step handed the app.
    public struct PendingCompletion {
        /// The event it answers (`remoteNotification`, `backgroundFetch`, `performShortcutItem`).
        public var event: String
        /// Whether it has been answered, by the app or by the system.
        public var isCompleted: @MainActor () -> Bool
        /// Whether the app answered it more than once (the first answer the app's own).
        public var answeredTwiceByApp: @MainActor () -> Bool
    }

    /// Work the app started, given to ``track(_:named:)``.
    public final class TrackedWork {
        /// The name the app gave it.
        public let name: String
        /// Whether the work ended.
        public internal(set) var isDone = false
        /// The names of the services it depends on (a service's).
        public internal(set) var dependencies: [String] = []
        /// The services it depends on, as tracked when it was: a dependency's name means the work of
        /// that name tracked last before it — a relaunch's services are not an earlier launch's.
        var dependencyWorks: [String: TrackedWork] = [:]
        /// Whether it was still running when the app that started it was suspended.
        public internal(set) var ranWhileSuspended = false
        /// Whether it is a service — work that lives as long as the app (a sync loop), exempt from
        /// the background check — rather than work that must end (an upload).
        public let isService: Bool
        /// The application that started it.
        weak var application: Application?
        init(name: String, isService: Bool, application: Application?) {
            self.name = name
            self.isService = isService
            self.application = application
        }
    }

    /// Creates a world.
    /// - Parameters:
    ///   - expression: The Swift expression that makes it, for printed tests
    ///     (`"MyApp.makeWorld()"`); a placeholder by default.
    ///   - configuration: The configuration the host's applications get.
    ///   - delegate: Makes the app's delegate, once per launch, given the world.
    public init(expression: String = "<#world#>", configuration: ApplicationConfiguration = ApplicationConfiguration(),
                delegate: @escaping @MainActor (ExplorerWorld) -> any ApplicationDelegate) {
        let clock = TestClock()
        self.clock = clock
        self.host = SimulatedHost(clock: clock, configuration: configuration, traceOptions: [])
        self.expression = expression
        self.makeDelegate = delegate
        host.beforeEachLaunch { [weak self] application in self?.observe(application) }
        #if canImport(Testing)
        // Made inside an `appKernel` test (a printed test), it lives until the test ends and ends
        // with it: its app's work may still wait on it (a held login) when the test's last line
        // ran. (The explorer's own worlds are made outside: it ends each itself.)
        AppKernelTest.running?.onFinish { [self] in endNow() }
        #endif
    }

    /// The current application, if launched.
    public var application: Application? { host.application }

    // MARK: Steps the system steps call

    /// Launches the app with a new delegate (and interface), in the foreground or the background.
    open func launch(inBackground: Bool = false) throws(ApplicationError) {
        try host.launch(delegate: makeDelegate(self), interface: makeInterface?(), inBackground: inBackground)
    }

    /// Delivers a silent remote notification, keeping its completion for the invariants.
    public func push(_ payload: [String: JSONValue] = ["aps": ["content-available": 1]]) throws(ApplicationError) {
        let completion = Completion<BackgroundFetchResult>(event: "remoteNotification", fallback: .failed)
        try host.send(.remoteNotification(payload, completion: completion))
        completions.append(PendingCompletion(event: completion.event, isCompleted: { completion.isCompleted },
                                             answeredTwiceByApp: { completion.answeredByApp && completion.ignoredCalls > 0 }))
    }

    /// Grants a background fetch, keeping its completion for the invariants.
    public func fetch() throws(ApplicationError) {
        let completion = Completion<BackgroundFetchResult>(event: "backgroundFetch", fallback: .failed)
        try host.send(.backgroundFetch(completion: completion))
        completions.append(PendingCompletion(event: completion.event, isCompleted: { completion.isCompleted },
                                             answeredTwiceByApp: { completion.answeredByApp && completion.ignoredCalls > 0 }))
    }

    /// Performs a quick action, keeping its completion for the invariants.
    public func performQuickAction(_ type: String) throws(ApplicationError) {
        let completion = Completion<Bool>(event: "performShortcutItem", fallback: false)
        try host.send(.performShortcutItem(ShortcutItem(type: type, localizedTitle: type), scene: nil, completion: completion))
        completions.append(PendingCompletion(event: completion.event, isCompleted: { completion.isCompleted },
                                             answeredTwiceByApp: { completion.answeredByApp && completion.ignoredCalls > 0 }))
    }

    /// Moves time by `duration` (timers run, sleepers wake), then lets woken work run.
    public func advance(by duration: Duration) async {
        await advanceClock(by: duration)
        await settle()
    }

    /// Moves time by `duration`, yielding the main actor only to tasks a sleep ended.
    func advanceClock(by duration: Duration) async {
        await clock.advance(to: clock.now.advanced(by: duration), yieldingAlways: false)
    }

    /// Lets work that can run without time moving run: yields the main actor ``settleYields``
    /// times.
    public func settle() async {
        var last = activity
        var quiet = 0
        for _ in 0..<settleYields {
            await Task.yield()
            let now = activity
            quiet = now == last ? quiet + 1 : 0
            last = now
            if quiet >= Self.quietYields, isQuiescent { break }
        }
        noteStepEnded()
        stepDidSettle()
    }

    /// Called at the end of every ``settle()`` — once a step's work has run: subclasses close
    /// what they count per step (the SDK world, the roots built for a user change).
    open func stepDidSettle() {}

    /// Whether the app's known work waits only on what a step must do (a held login, a passcode
    /// prompt, the clock): ``settle()`` yields on while it is not. Here: no more tracked work
    /// runs than sleeps on the clock. Subclasses add what their work waits on (an SDK manager's
    /// launch).
    open var isQuiescent: Bool { trackedWork.count(where: { !$0.isDone }) <= clock.sleeperCount }

    /// How many yields in a row with nothing changed end ``settle()``.
    static let quietYields = 8

    /// What ``settle()`` watches to tell whether the app's tasks still move: pipeline steps, the
    /// clock's waiters, tracked work and completions ended. Subclasses add theirs (an SDK
    /// manager's launch state).
    open var activity: [Int] {
        [pipelineSteps, clock.pendingCount, trackedWork.count(where: \.isDone), completions.count(where: { $0.isCompleted() })]
    }

    /// Counts `task` as the current app's work: the `backgroundWorkCovered` invariant reports it
    /// when that app is suspended while it runs (no background task held it).
    public func track<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, named name: String) {
        track(task, named: name, isService: false)
    }

    /// Counts `task` as a service of the current app: work that lives as long as the app (a
    /// sync loop, an mPaaS service). The `noWorkAfterTermination` invariant reports it when it
    /// outlives the app's termination (a suspended app may keep it); `servicesStopAfterDependents`
    /// when it ends while a service that depends on it still runs.
    ///
    /// The world learns that `task` ended when a task of its own waiting on it resumes; on a
    /// loaded machine two such resumptions can come in the other order than the two ends. Where
    /// the order of stops is what a check is about, start the service with
    /// ``startService(named:dependencies:_:)``, whose end is seen as it happens.
    /// - Parameters:
    ///   - task: The service's work: it ends when the service stops.
    ///   - name: The service's name.
    ///   - dependencies: The names of the services it uses (tracked the same way).
    public func trackService<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, named name: String,
                                                                 dependencies: [String] = []) {
        track(task, named: name, isService: true, dependencies: dependencies)
    }

    /// Starts `operation` on the main actor as a service of the current app, tracked as
    /// ``trackService(_:named:dependencies:)`` tracks a task — but the world notes its end in the
    /// service's own task, as it returns, so `servicesStopAfterDependents` judges the order in
    /// which services really stopped, whatever the load.
    /// - Parameters:
    ///   - name: The service's name.
    ///   - dependencies: The names of the services it uses (tracked the same way).
    ///   - operation: The service's work: it returns when the service stops (cancel the returned
    ///     task to ask it to).
    /// - Returns: The service's task, to cancel or await.
    @discardableResult
    public func startService(named name: String, dependencies: [String] = [],
                             _ operation: @escaping @MainActor () async -> Void) -> Task<Void, Never> {
        let work = register(named: name, isService: true, dependencies: dependencies)
        return Task { @MainActor [weak self] in
            await operation()
            if let self { self.ended(work) } else { work.isDone = true }
        }
    }

    private func track<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, named name: String, isService: Bool,
                                                          dependencies: [String] = []) {
        let work = register(named: name, isService: isService, dependencies: dependencies)
        Task { @MainActor [weak self, weak work] in
            _ = await task.result
            guard let work else { return }
            if let self { self.ended(work) } else { work.isDone = true }
        }
    }

    private func register(named name: String, isService: Bool, dependencies: [String]) -> TrackedWork {
        let work = TrackedWork(name: name, isService: isService, application: application)
        work.dependencies = dependencies
        for name in dependencies { work.dependencyWorks[name] = trackedWork.last { $0.isService && $0.name == name } }
        trackedWork.append(work)
        return work
    }

    /// Notes that `work` ended. A service that stops while a service using it still runs stopped
    /// too early. (Its dependents are the services that named it and were tracked after it — not
    /// those of a later launch that reuse its name, whose stop may come after that launch began.)
    private func ended(_ work: TrackedWork) {
        work.isDone = true
        if let dependent = trackedWork.first(where: {
            $0.isService && !$0.isDone && $0.dependencies.contains(work.name) && ($0.dependencyWorks[work.name].map { $0 === work } ?? true)
        }) {
            servicesStoppedEarly.append("'\(work.name)' stopped while '\(dependent.name)', which depends on it, still ran")
        }
    }

    /// Ends the run as the invariants checked at the end expect: time moves past every deadline
    /// the kernel keeps (background time, completions, the suspension grace), so that what the
    /// app left unanswered is answered by the system, and woken work runs. Runs once.
    open func finish() async {
        guard !isFinished else { return }
        isFinished = true
        let configuration = host.configuration
        let horizon = [configuration.backgroundTaskAllowance, configuration.completionDeadline, configuration.suspensionGracePeriod]
            .filter { $0 < .seconds(3_600) }.max() ?? .seconds(60)
        await advance(by: horizon + .seconds(1))
    }

    /// Ends what the world started: terminates a running app, ends every wait on its clock, runs
    /// what ``onTearDown(_:)`` added (a temporary folder removed) and lets the host forget its
    /// applications (``application`` is `nil` after it).
    open func tearDown() async {
        if endNow() > 0 { await settle() }
    }

    /// Adds work for the world's end, newest first: what the world made outside itself (a
    /// temporary data home to remove). A printed test's world ends with its test.
    public func onTearDown(_ body: @escaping @MainActor () -> Void) { tearDowns.append(body) }

    /// Terminates a running app, ends every wait on the clock and runs the tear-down work;
    /// answers how many sleepers woke.
    @discardableResult
    func endNow() -> Int {
        if let application, application.state != .terminated, application.state != .notRunning {
            try? host.terminate()
        }
        let woken = clock.cancelPending().sleepers
        let ends = tearDowns
        tearDowns.removeAll()
        for end in ends.reversed() { end() }
        // An app delegate that holds the world (to track its work) would keep it alive through
        // the host's applications: the world's end cuts that cycle.
        observations.removeAll()
        fingerprintParts.removeAll()
        makeInterface = nil
        host.forgetApplications()
        didEnd()
        return woken
    }

    /// Called once the world ended (its tear-down, or the end of the `appKernel` test that made
    /// it): subclasses let go of what they hold — an SDK manager's application, the app's
    /// closures — so that an app delegate holding the world does not keep it alive.
    open func didEnd() {}

    // MARK: What invariants read

    /// The observable state, one line per part: the app's state and scenes, the completions and
    /// background tasks outstanding, then ``fingerprintParts``. Subclasses add their parts.
    open func fingerprint() -> [String] {
        var parts: [String] = []
        if let application {
            parts.append("app \(application.state) \(application.connectedScenes.map { "\($0.activationState)" }.joined(separator: ","))")
            parts.append("tasks \(application.runningBackgroundTasks.count) launched \(application.launchAnswer.map { "\($0)" } ?? "-")")
        } else {
            parts.append("app none")
        }
        parts.append("completions \(completions.filter { !$0.isCompleted() }.count)/\(completions.count)")
        parts.append("work \(trackedWork.filter { !$0.isDone }.count)")
        parts.append("timers \(clock.pendingCount)")
        parts.append(contentsOf: fingerprintParts.map { $0() })
        return parts
    }

    /// The invariants every world of this kind checks with ``InvariantSet/standard``: the
    /// kernel's. Subclasses add theirs.
    open var standardInvariants: [ExplorerInvariant] {
        [.noCallbackAfterTermination, .backgroundWorkCovered, .noWorkAfterTermination, .servicesStopAfterDependents,
         .completionsAnsweredOnce, .backgroundTasksEnded, .noUnheardErrors]
    }

    /// What `invariant` finds wrong now, or `nil` when it holds.
    public func violation(of invariant: ExplorerInvariant) -> String? {
        noteStepEnded()
        return invariant.check(self)
    }

    private func observe(_ application: Application) {
        // A new application may live at a terminated one's freed address.
        toldToTerminate.remove(ObjectIdentifier(application))
        observations.append(application.addPipelineObserver { [weak self, weak application] stage, event in
            guard let self else { return }
            self.pipelineSteps += 1
            if case .willTerminate = event, let application { self.toldToTerminate.insert(ObjectIdentifier(application)) }
            guard let application, application.state == .terminated else { return }
            switch stage {
            case .applicationDelegate, .sceneDelegate:
                if case .willTerminate = event { return }
                self.callbacksAfterTermination.append("\(stage.description).\(event)")
            default:
                return
            }
        })
    }

    /// The tracked work still running although the app that started it heard `willTerminate`
    /// and terminated.
    public var workAfterTermination: [TrackedWork] {
        trackedWork.filter { work in
            guard !work.isDone, let application = work.application, application.state == .terminated else { return false }
            return toldToTerminate.contains(ObjectIdentifier(application))
        }
    }

    /// Called by the explorer after each step: notes tracked work running while the app is
    /// suspended with no background task.
    func noteStepEnded() {
        for work in trackedWork where !work.isDone && !work.isService && work.application?.state == .suspended {
            work.ranWhileSuspended = true
        }
    }
}
