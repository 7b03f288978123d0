import AppKernel
import AppKernelAuth

/// What a launch did — the Mobile SDK's `SFSDKLaunchAction` bit set.
public struct LaunchFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The flags' bits.
    public let rawValue: Int
    /// Creates flags from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The user logged in during this launch.
    public static let authenticated = LaunchFlags(rawValue: 1 << 0)
    /// A user was already logged in.
    public static let alreadyAuthenticated = LaunchFlags(rawValue: 1 << 1)
    /// Login was skipped (`shouldAuthenticate` is false: deferred login).
    public static let authBypassed = LaunchFlags(rawValue: 1 << 2)
    /// The app passcode was verified.
    public static let passcodeVerified = LaunchFlags(rawValue: 1 << 3)

    /// The set flags' names.
    public var description: String {
        let names = [(LaunchFlags.authenticated, "authenticated"), (.alreadyAuthenticated, "alreadyAuthenticated"),
                     (.authBypassed, "authBypassed"), (.passcodeVerified, "passcodeVerified")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}

/// One phase's run, on the application's clock (`end` and `duration` are set once it finished).
public typealias PhaseTiming = PhaseEngine<LaunchPhase>.Record

/// What a successful launch produced.
public struct LaunchResult: Sendable, Hashable {
    /// What happened.
    public var flags: LaunchFlags
    /// The current user after the launch (`nil` with deferred login).
    public var currentUser: UserAccount?
    /// Each phase's start and end.
    public var timeline: [PhaseTiming]
}

/// Where the manager's launch is: `idle`, `running(phase)`, `finished`, `failed(phase)`.
public typealias LaunchState = PhaseEngine<LaunchPhase>.State

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
        case .timedOut, .alreadyRunning: nil
        }
    }

    /// What failed, where, and what to do.
    public var description: String {
        let place = phase.map { "the launch phase '\($0)'" } ?? "the launch"
        switch cause {
        case .threw(let error):
            return "\(place) failed: \(error). The launch stopped there; fix the cause and call launch() again."
        case .hookFailed(let error):
            return "\(place) failed in its \(error.stage.rawValue) hook '\(error.hook)': \(error.underlyingError.map { "\($0)" } ?? "\(error)"). Fix or cancel the hook and call launch() again."
        case .timedOut(let deadline):
            return "\(place) did not finish within \(deadline). Make it finish sooner or raise SDKManager.phaseDeadline."
        case .alreadyRunning:
            return "a launch is already running; wait for it (launchState) instead of starting another."
        }
    }
}

/// Why the shared manager could not be set up.
public struct SDKManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class registered first.
    public var registered: String
    /// The class that asked later.
    public var requested: String

    /// Creates an error.
    public init(registered: String, requested: String) {
        self.registered = registered
        self.requested = requested
    }

    /// What went wrong and what to do.
    public var description: String {
        "SDKManager.shared is already an instance of \(registered); \(requested).initializeSDK() came too late. Call initializeSDK() once, on the most derived manager class, before anything uses SDKManager.shared."
    }
}
