#if canImport(Testing)
public import AppKernel
public import AppKernelCore
public import Testing

/// What the `appKernel` test trait gives one test: a ``SimulatedHost`` on a ``TestClock``, a
/// fresh `SharedScope` every process-wide object resolves through while the test runs, and the
/// exhaustive check that ends it.
///
/// ```swift
/// @Test(.appKernel) @MainActor
/// func backgroundingSuspendsAfterTheGracePeriod() async throws {
///     let test = AppKernelTest.current
///     let app = try test.host.launch(delegate: AppDelegate())
///     try test.host.moveToBackground()
///     await test.clock.advance(by: .seconds(5))
///     #expect(app.state == .suspended)
///     _ = test.host.trace.take()
/// }
/// ```
///
/// At the end of the test (or at ``finish()``) it lets the work that can run without time moving
/// run, then records an issue, naming each one, for what the test left behind — see
/// ``Exhaustivity/Check`` — terminates a running app and finishes the scope. When the test
/// failed it attaches the whole trace and the launch timeline.
@MainActor
public final class AppKernelTest {
    /// The test of the running task, set by the `appKernel` trait.
    @TaskLocal static var running: AppKernelTest?

    /// The test the `appKernel` trait runs. Read outside such a test it records an issue saying
    /// so and answers a fresh test no check ends.
    public static var current: AppKernelTest {
        if let running { return running }
        Issue.record("AppKernelTest.current was read outside a test with the appKernel trait: add it to the test (@Test(.appKernel)) or to its suite (@Suite(.appKernel)).")
        return AppKernelTest(name: "outside any appKernel test")
    }

    /// The test's name (the scope's name).
    public let name: String
    /// The test clock the host's applications run on: time moves only when the test advances it.
    public let clock: TestClock
    /// The host that launches the test's applications.
    public let host: SimulatedHost
    /// The scope every process-wide object resolves through while the test runs.
    public let scope: SharedScope
    /// Which end-of-test checks run (``Exhaustivity/on`` unless the test says otherwise with the
    /// `exhaustivity` trait); the test may change it before it ends.
    public var exhaustivity: Exhaustivity
    /// Whether the end-of-test work has run.
    public private(set) var isFinished = false

    /// Where issues are reported: the test's own declaration.
    let sourceLocation: SourceLocation
    /// Every stage of every application, for the failure attachment (the host's trace is taken
    /// by the test as it goes).
    let fullTrace = TraceRecorder(options: .all)
    /// What else reports running work (an SDK manager's launch), each answering what still runs.
    var runningWorkReports: [@MainActor () -> [String]] = []
    /// What else has a launch timeline (an SDK manager's phases), as lines.
    var timelineReports: [@MainActor () -> [String]] = []
    /// What ends with the test, newest first, before the scope finishes.
    var finishers: [@MainActor () -> Void] = []
    /// The tasks given to ``track(_:named:)``.
    var trackedTasks: [TrackedTask] = []

    /// A task the test watches: done once its watcher saw it end.
    final class TrackedTask {
        let name: String
        var isDone = false
        var watcher: Task<Void, Never>?
        init(name: String) { self.name = name }
    }

    /// Creates a test context — the `appKernel` trait makes one per test.
    /// - Parameters:
    ///   - name: The test's name; the scope's too.
    ///   - configuration: The configuration the host's applications get.
    ///   - traceOptions: What the host's trace records.
    ///   - exhaustivity: Which end-of-test checks run.
    ///   - sourceLocation: Where its issues are reported.
    public init(name: String, configuration: ApplicationConfiguration = ApplicationConfiguration(),
                traceOptions: TraceRecorder.Options = [.delegates, .system, .hookStops], exhaustivity: Exhaustivity = .on,
                sourceLocation: SourceLocation = #_sourceLocation) {
        self.name = name
        self.clock = TestClock()
        self.host = SimulatedHost(clock: clock, configuration: configuration, traceOptions: traceOptions)
        self.scope = SharedScope(name: name)
        self.exhaustivity = exhaustivity
        self.sourceLocation = sourceLocation
        host.beforeEachLaunch { [fullTrace] application in fullTrace.attach(to: application) }
    }

    /// Counts `task` as work the app started: the ``Exhaustivity/Check/runningTasks`` check
    /// reports it when it still runs at the end of the test.
    ///
    /// ```swift
    /// AppKernelTest.current.track(Task { await uploader.drain() }, named: "upload drain")
    /// ```
    public func track<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, named name: String) {
        let tracked = TrackedTask(name: name)
        tracked.watcher = Task { @MainActor [weak tracked] in
            _ = await task.result
            tracked?.isDone = true
        }
        trackedTasks.append(tracked)
    }

    /// Adds what reports work still running (an SDK manager's launch phases) for the
    /// ``Exhaustivity/Check/runningTasks`` check: `report` answers one line per piece of work.
    package func addRunningWork(_ report: @escaping @MainActor () -> [String]) { runningWorkReports.append(report) }

    /// Adds a launch timeline (an SDK manager's phases) to the failure attachment.
    package func addTimeline(_ report: @escaping @MainActor () -> [String]) { timelineReports.append(report) }

    /// Adds work to do when the test ends, after the checks and the app's termination and before
    /// the scope finishes.
    public func onFinish(_ finisher: @escaping @MainActor () -> Void) { finishers.append(finisher) }

    /// Ends the test now: lets the work that can run without time moving run, records an issue for
    /// each check that finds something left (``Exhaustivity``), prints what skipped checks would
    /// have reported, terminates a running app and finishes the scope. Runs once; the trait calls
    /// it at the end of the test when the test did not.
    ///
    /// Call it to see the end-of-test checks inside `withKnownIssue`:
    ///
    /// ```swift
    /// try host.launch(delegate: AppDelegate())      // its config phase fails, nobody handles it
    /// await withKnownIssue { await AppKernelTest.current.finish() } matching: {
    ///     $0.description.contains("unhandledErrors")
    /// }
    /// ```
    public func finish() async {
        await finish(checking: true)
    }

    /// Ends the test: with `checking`, runs the end-of-test checks first.
    func finish(checking: Bool) async {
        guard !isFinished else { return }
        isFinished = true
        await settle()
        if checking { recordFindings() }
        if let application = host.application, application.state != .terminated, application.state != .notRunning {
            try? host.terminate()
        }
        host.trace.clear()
        // Nothing stays suspended on a clock nobody will advance (a leak at exit otherwise).
        if clock.cancelPending().sleepers > 0 { await settle() }
        for tracked in trackedTasks { tracked.watcher?.cancel() }
        for finisher in finishers.reversed() { finisher() }
        finishers.removeAll()
        scope.finish()
    }

    /// Lets work that can run without time moving run — a completion the app handed to a task
    /// (the scene's `loginIfRequired`), a woken sleeper: yields the main actor at least
    /// `minimumYields` times, and on while some of the app's work still runs, at most
    /// `maximumYields` times. The test's end does the same before its checks.
    public func settle(minimumYields: Int = 32, maximumYields: Int = 2_000) async {
        for yields in 0..<maximumYields {
            if yields >= minimumYields, runningWork().isEmpty { return }
            await Task.yield()
        }
    }
}
#endif
