import Testing
import AppKernel
import AppKernelTesting

/// Issue 31, "nothing makes a test exhaustive": the `appKernel` trait ends each test with checks
/// (TCA's `TestStore` is the model: leftovers fail the test, naming each one). Each test below
/// leaves one kind of leftover and sees the check record it — inside `withKnownIssue`, through
/// `AppKernelTest.finish()`, which runs the end-of-test work early.
@Suite(.appKernel) @MainActor
struct ExhaustiveTraitTests {
    struct BrokerDown: Error, CustomStringConvertible {
        var description: String { "the broker at localhost:5672 refused the connection" }
    }

    struct WarmUpFailed: Error, CustomStringConvertible {
        var description: String { "the cache warm-up failed" }
    }

    /// Keeps the completion handler of a remote notification and never calls it.
    final class SilentDelegate: ApplicationDelegate {
        var held: [@MainActor @Sendable (BackgroundFetchResult) -> Void] = []
        func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                         fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
            held.append(completionHandler)
        }
    }

    /// The text of the issues the check records.
    nonisolated static func text(_ issue: Issue) -> String { issue.comments.map(\.rawValue).joined(separator: " ") }

    /// Ends the test now and expects exactly the issues `expected` names (check, then a piece of
    /// each message), in any order.
    func expectFinishRecords(_ expected: [(Exhaustivity.Check, String)], sourceLocation: SourceLocation = #_sourceLocation) async {
        await withKnownIssue {
            await AppKernelTest.current.finish()
        } matching: { issue in
            let text = Self.text(issue)
            return expected.contains { text.hasPrefix("exhaustivity(\($0.0)):") && text.contains($0.1) }
        }
        #expect(AppKernelTest.current.isFinished, sourceLocation: sourceLocation)
    }

    /// Leaves exactly one leftover of `check`'s kind (and, for a completion, its deadline timer).
    func leave(_ check: Exhaustivity.Check) async throws {
        let test = AppKernelTest.current
        let host = test.host
        switch check {
        case .traceLines:
            try host.launch(delegate: DefaultApplicationDelegate())
        case .pendingTimers:
            try host.launch(delegate: DefaultApplicationDelegate())
            try host.moveToBackground()                    // the suspension grace period starts
            _ = host.trace.take()
        case .backgroundTasks:
            let app = try host.launch(delegate: DefaultApplicationDelegate())
            _ = app.beginBackgroundTask(name: "upload")
            _ = host.trace.take()
        case .completions:
            let delegate = SilentDelegate()
            try host.launch(delegate: delegate)
            let completion = Completion<BackgroundFetchResult>(event: "remoteNotification", fallback: .failed)
            try host.send(.remoteNotification(["aps": ["content-available": 1]], completion: completion))
            #expect(delegate.held.count == 1)
            _ = host.trace.take()
        case .unhandledErrors:
            let app = try host.launch(delegate: DefaultApplicationDelegate())
            app.reportUnhandledError(BrokerDown(), subject: "broker", advice: "start the broker")
            _ = host.trace.take()
        case .hookErrors:
            let bootLoader = BootLoader()
            bootLoader.addPhase("warmUp") { _ in throw WarmUpFailed() }
            try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: bootLoader)
            _ = host.trace.take()
        case .runningTasks:
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            test.track(Task { for await _ in stream {} }, named: "poller")
            test.onFinish { continuation.finish() }
        }
    }

    // MARK: Each check catches its leftover

    @Test func anUnassertedTraceLineFailsTheTest() async throws {
        try await leave(.traceLines)
        await expectFinishRecords([(.traceLines, "'app.didFinishLaunching'")])
    }

    @Test func aPendingTimerFailsTheTest() async throws {
        try await leave(.pendingTimers)
        await expectFinishRecords([(.pendingTimers, "1 timer(s) or sleeper(s) still pending on the test clock: a timer due at t+")])
    }

    @Test func anOpenBackgroundTaskFailsTheTest() async throws {
        try await leave(.backgroundTasks)
        await expectFinishRecords([(.backgroundTasks, "1 background task(s) still open: 'upload'")])
    }

    @Test func anUnansweredCompletionFailsTheTest() async throws {
        try await leave(.completions)
        await expectFinishRecords([(.completions, "1 completion handler(s) not called: 'remoteNotification'"),
                                   (.pendingTimers, "a timer due at")])   // the completion's deadline
    }

    @Test func anUnheardUnhandledErrorFailsTheTest() async throws {
        try await leave(.unhandledErrors)
        await expectFinishRecords([(.unhandledErrors, "broker: the broker at localhost:5672 refused the connection — start the broker")])
    }

    @Test func anUnheardHookErrorFailsTheTest() async throws {
        try await leave(.hookErrors)
        await expectFinishRecords([(.hookErrors, "warmUp")])
    }

    @Test func aRunningTrackedTaskFailsTheTest() async throws {
        try await leave(.runningTasks)
        await expectFinishRecords([(.runningTasks, "the tracked task 'poller'")])
    }

    @Test func aBootLoaderPhaseStillRunningFailsTheTest() async throws {
        let test = AppKernelTest.current
        let bootLoader = BootLoader()
        bootLoader.addPhase("warmUp", deadline: .seconds(60)) { [clock = test.clock] _ in try await clock.sleep(for: .seconds(30)) }
        try test.host.launch(delegate: DefaultApplicationDelegate(), bootLoader: bootLoader)
        _ = test.host.trace.take()
        await expectFinishRecords([(.runningTasks, "the BootLoader phase 'warmUp'"),
                                   (.pendingTimers, "a sleeper due at t+30")])
    }

    // MARK: Opt-outs

    @Test(arguments: Exhaustivity.Check.allCases)
    func eachCheckCanBeSkipped(_ check: Exhaustivity.Check) async throws {
        let test = AppKernelTest.current
        test.exhaustivity = check == .completions ? .ignoring(.completions, .pendingTimers) : .ignoring(check)
        try await leave(check)
        #expect(test.findings().map(\.check).contains(check), "the leftover is there; the check is skipped")
    }

    @Test(.exhaustivity(.ignoring(.pendingTimers)))
    func theIgnoringTraitSkipsOneCheck() async throws {
        #expect(AppKernelTest.current.exhaustivity == .ignoring(.pendingTimers))
        try await leave(.pendingTimers)
    }

    @Test(.exhaustivity(.off))
    func theOffTraitSkipsEveryCheck() async throws {
        let test = AppKernelTest.current
        #expect(test.exhaustivity == .off)
        let bootLoader = BootLoader()
        bootLoader.addPhase("warmUp") { _ in throw WarmUpFailed() }
        let app = try test.host.launch(delegate: SilentDelegate(), bootLoader: bootLoader)          // trace lines, a hook error
        _ = app.beginBackgroundTask(name: "upload")                                                 // a background task
        try test.host.send(.remoteNotification([:], completion: Completion(event: "remoteNotification", fallback: .failed)))
        app.reportUnhandledError(BrokerDown(), subject: "broker")                                   // an unhandled error
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        test.track(Task { for await _ in stream {} }, named: "poller")                             // a running task
        test.onFinish { continuation.finish() }
        // The completion's deadline is the pending timer.
        #expect(Set(test.findings().map(\.check)) == Set(Exhaustivity.Check.allCases))
    }

    @Test func exhaustivityDescribesWhatItSkips() {
        #expect(Exhaustivity.on.description == "on")
        #expect(Exhaustivity.off.description == "off")
        #expect(Exhaustivity.ignoring(.runningTasks, .traceLines).description == "ignoring(traceLines, runningTasks)")
    }

    // MARK: A clean test, and hearing failures

    @Test func aTestThatAssertsEverythingPasses() async throws {
        let test = AppKernelTest.current
        let app = try test.host.launch(delegate: DefaultApplicationDelegate())
        try await test.host.launchFinished()
        #expect(test.host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)"])
        try test.host.moveToBackground()
        await test.clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
        #expect(test.host.trace.take().contains("system.didSuspend"))
        #expect(test.findings().isEmpty)
    }

    @Test func launchFinishedThrowsTheFailureAndCountsItHeard() async throws {
        let test = AppKernelTest.current
        let bootLoader = BootLoader()
        bootLoader.addPhase("warmUp", deadline: .seconds(60)) { _ in
            await Task.yield()
            throw WarmUpFailed()
        }
        try test.host.launch(delegate: DefaultApplicationDelegate(), bootLoader: bootLoader)
        await #expect(throws: HookError.self) { try await test.host.launchFinished() }
        #expect(test.host.unheardHookErrors.isEmpty)
        _ = test.host.trace.take()
    }

    @Test func launchFinishedThrowsAnUnhandledReportAndTakeEmptiesTheRest() async throws {
        let test = AppKernelTest.current
        let app = try test.host.launch(delegate: DefaultApplicationDelegate())
        app.reportUnhandledError(BrokerDown(), subject: "broker")
        app.reportUnhandledError(BrokerDown(), subject: "second")
        await #expect(throws: BrokerDown.self) { try await test.host.launchFinished() }
        #expect(test.host.unheardUnhandledErrors.map(\.subject) == ["second"])
        #expect(test.host.takeUnhandledErrors().map(\.subject) == ["second"])
        #expect(test.host.unheardUnhandledErrors.isEmpty)
        #expect(test.host.unhandledErrors.count == 2, "the record keeps both")
        _ = test.host.trace.take()
    }

    @Test func eachTestHasItsOwnHostClockAndScope() async throws {
        let test = AppKernelTest.current
        #expect(test.scope === SharedScope.current)
        #expect(test.scope.name == "eachTestHasItsOwnHostClockAndScope()")
        #expect(test.clock.now == TestClock.Instant(offset: .zero))
        #expect(test.host.application == nil)
    }
}

/// The trait's own end of test, with no `finish()` in the body: run here inside `withKnownIssue`.
@MainActor
struct TraitEndOfTestTests {
    @Test func theTraitRecordsLeftoversWhenTheBodyReturns() async throws {
        let test = try #require(Test.current)
        try await withKnownIssue {
            try await AppKernelTrait().provideScope(for: test, testCase: Test.Case.current) {
                try await MainActor.run { _ = try AppKernelTest.current.host.launch(delegate: DefaultApplicationDelegate()) }
            }
        } matching: { issue in
            ExhaustiveTraitTests.text(issue).hasPrefix("exhaustivity(traceLines): 3 trace line(s)")
        }
    }

    @Test func aTestThatThrowsIsNotCheckedButStillEnded() async throws {
        struct Stop: Error {}
        let test = try #require(Test.current)
        let host = Locked<SimulatedHost?>(nil)
        await #expect(throws: Stop.self) {
            try await AppKernelTrait().provideScope(for: test, testCase: Test.Case.current) {
                try await MainActor.run {
                    let current = AppKernelTest.current
                    host.withLock { $0 = current.host }
                    _ = try current.host.launch(delegate: DefaultApplicationDelegate())
                    throw Stop()
                }
            }
        }
        #expect(host.withLock { $0 }?.application?.state == .terminated)
    }

    @Test func theScopeIsFinishedWhenTheTestEnds() async throws {
        let test = try #require(Test.current)
        let scope = Locked<SharedScope?>(nil)
        try await AppKernelTrait().provideScope(for: test, testCase: Test.Case.current) {
            await MainActor.run { scope.withLock { $0 = AppKernelTest.current.scope } }
        }
        #expect(scope.withLock { $0 }?.isFinished == true)
    }
}
