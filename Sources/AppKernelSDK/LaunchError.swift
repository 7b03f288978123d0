public import AppKernel

/// A launch that failed: the phase, the hook if a hook failed, and the cause. The launch
/// stopped there; the window keeps its placeholder; `launch()` can be called again.
public struct LaunchError: Error, CustomStringConvertible {
    /// Why the launch failed.
    public enum Cause: Sendable {
        /// The phase's work (or an override of `run(_:)`) threw.
        case threw(any Error)
        /// A hook of the phase threw.
        case hookFailed(HookError)
        /// The phase did not finish within its deadline (on the application's clock).
        case timedOut(Duration)
        /// A launch was already running; this one was refused (the running one goes on).
        case alreadyRunning
        /// Nothing to wait for: no launch has started (`SDKManager.launchFinished()` on a manager
        /// that is not attached to a launched application and was not asked to launch).
        case notStarted
    }

    /// The phase that failed (`nil` when a second launch was refused).
    public var phase: LaunchPhase?
    /// The hook that failed, by label or `File.swift:line`.
    public var hook: String?
    /// The cause.
    public var cause: Cause

    /// Creates an error.
    public init(phase: LaunchPhase?, hook: String? = nil, cause: Cause) {
        self.phase = phase
        self.hook = hook
        self.cause = cause
    }

    /// The launch's report of a failed phase of its engine.
    init(_ error: PhaseError) {
        let phase = error.phase.flatMap(LaunchPhase.init(rawValue:))
        switch error.cause {
        case .threw(let underlying as LaunchError): self = underlying
        case .threw(let underlying): self.init(phase: phase, cause: .threw(underlying))
        case .hookFailed(let hookError): self.init(phase: phase, hook: hookError.hook, cause: .hookFailed(hookError))
        case .timedOut(let deadline): self.init(phase: phase, cause: .timedOut(deadline))
        case .cancelled: self.init(phase: phase, cause: .threw(CancellationError()))
        case .alreadyRunning: self.init(phase: nil, cause: .alreadyRunning)
        }
    }

    /// The underlying error, where there is one.
    public var underlyingError: (any Error)? {
        switch cause {
        case .threw(let error): error
        case .hookFailed(let error): error.underlyingError
        case .timedOut, .alreadyRunning, .notStarted: nil
        }
    }

    /// What failed and where, without the advice for the code that calls `launch()` — what an
    /// app shows its user (`the launch phase 'auth' failed: …`).
    public var summary: String {
        let place = phase.map { "the launch phase '\($0)'" } ?? "the launch"
        switch cause {
        case .threw(let error): return "\(place) failed: \(error)"
        case .hookFailed(let error):
            return "\(place) failed in its \(error.stage.rawValue) hook '\(error.hook)': \(error.underlyingError.map { "\($0)" } ?? "\(error)")"
        case .timedOut(let deadline): return "\(place) did not finish within \(deadline)"
        case .alreadyRunning: return "a launch is already running"
        case .notStarted: return "no launch has started"
        }
    }

    /// What failed, where, and what to do.
    public var description: String {
        switch cause {
        case .threw: return "\(summary). The launch stopped there; fix the cause and call launch() again."
        case .hookFailed: return "\(summary). Fix or cancel the hook and call launch() again."
        case .timedOut: return "\(summary). Make it finish sooner or raise SDKManager.phaseDeadline."
        case .alreadyRunning: return "\(summary); wait for it (launchState) instead of starting another."
        case .notStarted:
            return "\(summary): the manager is not attached to an application that finished launching. Call initializeSDK() (or attach(to:)) before the app launches, or call launch()."
        }
    }
}
