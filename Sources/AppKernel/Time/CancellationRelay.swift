import AppKernelCore

/// Carries a cancellation from any thread to the work it cancels, whichever of the two is known
/// first: a task's cancellation handler may fire before the work has been started, or after.
/// ``Application/run(withDeadline:_:)`` relays to its task, ``PhaseEngine`` to its running phase.
final class CancellationRelay: Sendable {
    private let state = Locked<(action: (@Sendable () -> Void)?, fired: Bool)>((nil, false))

    /// Sets what a cancellation does; runs it at once if the cancellation came first.
    func set(_ action: @escaping @Sendable () -> Void) {
        let fired = state.withLock { state -> Bool in
            state.action = action
            return state.fired
        }
        if fired { action() }
    }

    /// Cancels: runs the action now, or as soon as it is set. Later calls do nothing.
    func fire() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.fired else { return nil }
            state.fired = true
            return state.action
        }
        action?()
    }
}
