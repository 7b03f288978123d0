#if compiler(>=6.1) && canImport(Testing)
public import AppKernel
import AppKernelCore
public import Testing

/// The Swift Testing trait that gives a test its ``AppKernelTest``: a ``SimulatedHost`` on a
/// ``TestClock``, a fresh `SharedScope` (so `SDKManager.shared` and the other process-wide
/// objects are the test's own, and tests run in parallel), and an exhaustive check at the end.
///
/// ```swift
/// @Test(.appKernel) @MainActor
/// func launchesActive() throws {
///     let host = AppKernelTest.current.host
///     let app = try host.launch(delegate: AppDelegate())
///     #expect(app.state == .active)
///     _ = host.trace.take()
/// }
/// ```
///
/// On a suite it applies to each of its tests. When a test fails, the whole trace and the launch
/// timeline are attached to it (Swift Testing attachments, Swift 6.2 and later; printed before).
public struct AppKernelTrait: TestTrait, SuiteTrait, TestScoping {
    /// The configuration the host's applications get.
    public var configuration: ApplicationConfiguration
    /// What the host's trace records.
    public var traceOptions: TraceRecorder.Options
    /// What runs inside the scope before the test body (the SDK kit initialises its manager).
    package var setUp: [@MainActor @Sendable (AppKernelTest) throws -> Void]

    /// A trait whose host gets `configuration` and records `traceOptions`.
    public init(configuration: ApplicationConfiguration = ApplicationConfiguration(),
                traceOptions: TraceRecorder.Options = [.delegates, .system, .hookStops]) {
        self.configuration = configuration
        self.traceOptions = traceOptions
        self.setUp = []
    }

    /// A trait that also runs `setUp` inside the scope before the test body.
    package init(configuration: ApplicationConfiguration, traceOptions: TraceRecorder.Options,
                 setUp: @escaping @MainActor @Sendable (AppKernelTest) throws -> Void) {
        self.init(configuration: configuration, traceOptions: traceOptions)
        self.setUp = [setUp]
    }

    /// `true`: on a suite, every test in it gets its own host and scope.
    public var isRecursive: Bool { true }

    /// Itself for each test case; nothing for a suite as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> AppKernelTrait? {
        testCase == nil ? nil : self
    }

    /// Runs the test case inside its ``AppKernelTest`` and scope, then ends it
    /// (``AppKernelTest/finish()``).
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await AppKernelTest.run(test, testCase: testCase, trait: self, function)
    }
}

extension Trait where Self == AppKernelTrait {
    /// A ``SimulatedHost`` on a ``TestClock``, a fresh shared scope and an exhaustive end-of-test
    /// check for each test: `@Test(.appKernel)`.
    public static var appKernel: AppKernelTrait { AppKernelTrait() }

    /// The ``appKernel`` trait with a host that gives its applications `configuration` and records
    /// `traceOptions`.
    public static func appKernel(configuration: ApplicationConfiguration = ApplicationConfiguration(),
                                 traceOptions: TraceRecorder.Options = [.delegates, .system, .hookStops]) -> AppKernelTrait {
        AppKernelTrait(configuration: configuration, traceOptions: traceOptions)
    }
}

/// Chooses which end-of-test checks the `appKernel` trait runs, for a test or every test of a
/// suite: `.exhaustivity(.off)`, `.exhaustivity(.ignoring(.pendingTimers))`.
public struct ExhaustivityTrait: TestTrait, SuiteTrait {
    /// The checks to run.
    public var exhaustivity: Exhaustivity
    /// `true`: on a suite it applies to every test in it (a test's own wins).
    public var isRecursive: Bool { true }
}

extension Trait where Self == ExhaustivityTrait {
    /// Runs the `appKernel` trait's end-of-test checks as `exhaustivity` says.
    public static func exhaustivity(_ exhaustivity: Exhaustivity) -> ExhaustivityTrait { ExhaustivityTrait(exhaustivity: exhaustivity) }
}

extension AppKernelTest {
    /// Runs one test case with the trait: makes its context, runs the set-up and the body inside
    /// the scope, ends it, and attaches the trace and the timeline if it failed.
    static func run(_ test: Test, testCase: Test.Case?, trait: AppKernelTrait, _ function: @Sendable () async throws -> Void) async throws {
        let exhaustivity = test.traits.compactMap { ($0 as? ExhaustivityTrait)?.exhaustivity }.last ?? .on
        let context = AppKernelTest(name: test.name, configuration: trait.configuration, traceOptions: trait.traceOptions,
                                    exhaustivity: exhaustivity, sourceLocation: test.sourceLocation)
        let failed = Locked(false)
        var thrown: (any Error)?
        await $running.withValue(context) {
            await context.scope.withValue {
                do {
                    for setUp in trait.setUp { try setUp(context) }
                    #if compiler(>=6.2)
                    let watch = IssueHandlingTrait.compactMapIssues { issue in
                        if issue.isFailure { failed.withLock { $0 = true } }
                        return issue
                    }
                    try await watch.provideScope(for: test, testCase: testCase) {
                        try await function()
                        await context.finish()
                    }
                    #else
                    try await function()
                    await context.finish()
                    #endif
                } catch {
                    thrown = error
                    await context.finish(checking: false)
                }
            }
        }
        if thrown != nil || failed.withLock({ $0 }) { context.attachReports() }
        if let thrown { throw thrown }
    }

    /// Attaches the whole trace and the launch timeline to the failed test.
    func attachReports() {
        let trace = traceReport(), timeline = timelineReport()
        #if compiler(>=6.2)
        Attachment.record(trace.isEmpty ? "(no step recorded)" : trace, named: "trace.txt")
        Attachment.record(timeline.isEmpty ? "(no application launched)" : timeline, named: "launch-timeline.txt")
        #else
        print("AppKernelTest '\(name)' failed. Trace:\n\(trace)\nLaunch timeline:\n\(timeline)")
        #endif
    }
}
#endif
