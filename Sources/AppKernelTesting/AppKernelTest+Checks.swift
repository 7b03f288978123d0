#if canImport(Testing)
import AppKernel
import Testing

extension AppKernelTest {
    /// One thing a check found the test left behind.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The check that found it.
        public var check: Exhaustivity.Check
        /// What was left, each item named, and how to fix the test.
        public var message: String

        /// `exhaustivity(check): message`, as the recorded issue reads.
        public var description: String { "exhaustivity(\(check)): \(message)" }
    }

    /// What every check finds now, skipped checks included, in ``Exhaustivity/Check`` order.
    public func findings() -> [Finding] {
        var found: [Finding] = []
        func add(_ check: Exhaustivity.Check, _ items: [String], _ what: String, _ fix: String) {
            guard !items.isEmpty else { return }
            let items = items.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }
            let listed = items.prefix(12).joined(separator: "; ") + (items.count > 12 ? "; … \(items.count - 12) more" : "")
            found.append(Finding(check: check, message: "\(items.count) \(what): \(listed). \(fix), or opt out with .exhaustivity(.ignoring(.\(check)))."))
        }
        add(.traceLines, host.trace.lines.map { "'\($0)'" }, "trace line(s) were recorded and not taken",
            "Assert them (#expect(host.trace.take() == [...])) or forget them with host.trace.clear()")
        add(.pendingTimers, clock.pendingWaiters.map(\.description), "timer(s) or sleeper(s) still pending on the test clock",
            "Advance the clock past them (await clock.advance(by:) or clock.run()) or cancel what scheduled them")
        let applications = host.launchedAndAlive
        add(.backgroundTasks, applications.flatMap(\.openBackgroundTaskLabels).map { "'\($0)'" }, "background task(s) still open",
            "End each with application.endBackgroundTask(_:) (or let the clock expire it)")
        add(.completions, applications.flatMap(\.unansweredCompletionEvents).map { "'\($0)'" }, "completion handler(s) not called",
            "Answer each delivered event's completion handler (or advance the clock past its deadline)")
        add(.unhandledErrors, host.unheardUnhandledErrors.map(\.description), "unhandled failure(s) nobody heard",
            "Await host.launchFinished() (it throws the launch's failure), take them with host.takeUnhandledErrors(), or set a handler (SDKManager.launchErrorHandler)")
        add(.hookErrors, host.unheardHookErrors.map(\.description), "hook failure(s) no hookErrorHandler received",
            "Take them with host.takeHookErrors() and assert them, or set application.hookErrorHandler")
        add(.runningTasks, runningWork(), "task(s) the app started still running",
            "Await them (host.launchFinished() for a launch), advance the clock they wait on, or cancel them")
        return found
    }

    /// The work the app started that still runs: its BootLoader's async phases, what the testing
    /// kits added (an SDK manager's launch phases) and the tracked tasks.
    func runningWork() -> [String] {
        var running: [String] = []
        for application in host.launchedAndAlive {
            if case .running(let phase) = application.bootLoader.state { running.append("the BootLoader phase '\(phase.name)'") }
        }
        for report in runningWorkReports { running += report() }
        running += trackedTasks.filter { !$0.isDone }.map { "the tracked task '\($0.name)'" }
        return running
    }

    /// Records an issue for each finding of a check that runs; attaches what skipped checks would
    /// have reported (`exhaustivity-skipped.txt`, Swift 6.2 and later; printed before), and says
    /// nothing when they would have found nothing: a green run stays quiet.
    func recordFindings() {
        let found = findings()
        for finding in found where exhaustivity.runs(finding.check) {
            Issue.record(Comment(rawValue: finding.description), sourceLocation: sourceLocation)
        }
        let leftovers = found.filter { !exhaustivity.runs($0.check) }
        guard !leftovers.isEmpty else { return }
        let skipped = Exhaustivity.Check.allCases.filter { !exhaustivity.runs($0) }
        let report = "exhaustivity \(exhaustivity) skipped \(skipped.map(\.rawValue).joined(separator: ", ")); they would have reported:\n"
            + leftovers.map { "  - \($0)" }.joined(separator: "\n")
        #if compiler(>=6.2)
        Attachment.record(report, named: "exhaustivity-skipped.txt")
        #else
        print("AppKernelTest '\(name)': " + report)
        #endif
    }

    /// The whole trace of the test's applications, one line per step with its time.
    func traceReport() -> String {
        fullTrace.entries.map { "\($0.time)  \(TraceRecorder.line($0.stage, $0.event))" }.joined(separator: "\n")
    }

    /// The launch timelines: each application's BootLoader phases, then what the kits added.
    func timelineReport() -> String {
        var lines: [String] = []
        for (index, application) in host.launchedAndAlive.enumerated() {
            lines.append("application \(index + 1) (\(application.state)), BootLoader \(application.bootLoader.state):")
            lines += application.bootLoader.timeline.map { "  \($0.name): \($0.start) → \($0.end.map { "\($0)" } ?? "not ended")" }
        }
        for report in timelineReports { lines += report() }
        return lines.joined(separator: "\n")
    }
}
#endif
