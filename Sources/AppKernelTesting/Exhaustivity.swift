/// Which of the end-of-test checks a test with the `appKernel` trait runs: all of them by
/// default, as TCA's `TestStore` is exhaustive by default.
///
/// ```swift
/// @Test(.appKernel, .exhaustivity(.ignoring(.pendingTimers))) @MainActor
/// func backgroundsAndLeavesTheGracePeriodRunning() async throws { … }
///
/// @Test(.appKernel, .exhaustivity(.off)) @MainActor
/// func aQuickLook() async throws { … }
/// ```
///
/// A skipped check is not silent: what it would have reported is printed at the end of the test.
public struct Exhaustivity: Sendable, Hashable, CustomStringConvertible {
    /// One end-of-test check.
    public enum Check: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Trace lines were recorded and not taken (`host.trace.take()` or `clear()`).
        case traceLines
        /// Timers or sleepers are pending on the test clock.
        case pendingTimers
        /// Background tasks the app began are still open (`endBackgroundTask` not called).
        case backgroundTasks
        /// Completion handlers of delivered events (a remote notification, a fetch, a quick
        /// action) were not called.
        case completions
        /// A failure was reported to the host as unhandled (an SDK launch's `LaunchError` with no
        /// `launchErrorHandler`) and the test never heard it (`host.launchFinished()` did not
        /// throw it, `host.takeUnhandledErrors()` did not take it).
        case unhandledErrors
        /// A hook or BootLoader phase failed, no `hookErrorHandler` received it and the test did
        /// not take it (`host.takeHookErrors()`).
        case hookErrors
        /// Work the app started is still running: its BootLoader's async phases, an SDK manager's
        /// launch phases (its automatic launch, a re-authentication, an unlock, its service
        /// starts), and any task given to `AppKernelTest.track(_:named:)`.
        case runningTasks

        /// The check's name, as `.exhaustivity(.ignoring(…))` spells it.
        public var description: String { rawValue }
    }

    /// The checks that are skipped.
    public var ignored: Set<Check>

    /// Every check runs (the default).
    public static let on = Exhaustivity(ignored: [])
    /// No check runs; what each would have reported is printed.
    public static let off = Exhaustivity(ignored: Set(Check.allCases))

    /// Every check but `checks` runs.
    public static func ignoring(_ checks: Check...) -> Exhaustivity { Exhaustivity(ignored: Set(checks)) }

    /// Whether `check` runs.
    public func runs(_ check: Check) -> Bool { !ignored.contains(check) }

    /// `on`, `off`, or `ignoring(pendingTimers, traceLines)`.
    public var description: String {
        if ignored.isEmpty { return "on" }
        if ignored.count == Check.allCases.count { return "off" }
        return "ignoring(" + Check.allCases.filter(ignored.contains).map(\.rawValue).joined(separator: ", ") + ")"
    }
}
