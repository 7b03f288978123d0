public import AppKernel
public import AppKernelAuth
public import Foundation

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
    /// The user folders the launch removed as leftover ciphertext: their user's key was destroyed
    /// (a logout or lockout) and the process ended before the files were removed. Not an error.
    public var removedLeftovers: [URL] = []
}

/// Where the manager's launch is: `idle`, `running(phase)`, `finished`, `failed(phase)`.
public typealias LaunchState = PhaseEngine<LaunchPhase>.State
