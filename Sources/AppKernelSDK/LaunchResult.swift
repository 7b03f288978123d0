public import AppKernel
public import AppKernelAuth

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
