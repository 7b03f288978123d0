/// A wait that must end before the application counts as launched, for a host that reports
/// readiness (systemd's `READY=1`).
struct LaunchGate {
    let id: Int
    let name: String
    let wait: @MainActor () async -> Void
}

extension Application {
    /// Registers a launch gate: a wait that must end before a host reports the application ready
    /// — the SDK manager registers its launch phases, so `READY=1` comes after them. Any module
    /// may register one; the host knows none of them by name.
    ///
    /// ```swift
    /// let gate = app.addLaunchGate(named: "cache") { await cache.warmUp() }   // keep the token
    /// ```
    /// - Returns: The token; cancelling or dropping it removes the gate.
    public func addLaunchGate(named name: String, _ wait: @escaping @MainActor () async -> Void) -> ListenerToken {
        let id = nextLaunchGateID
        nextLaunchGateID += 1
        launchGates.append(LaunchGate(id: id, name: name, wait: wait))
        return ListenerToken { [weak self] in self?.removeLaunchGate(id) }
    }

    /// Removes the gate `id`. The gate (its closure) is released after the access to
    /// `launchGates` has ended: the closure may hold the last reference to another gate's token,
    /// whose deinit — inline, on the main actor — removes that gate, a second modification of
    /// `launchGates` that must not overlap the first (the runtime's exclusivity check traps).
    private func removeLaunchGate(_ id: Int) {
        guard let index = launchGates.firstIndex(where: { $0.id == id }) else { return }
        let removed = launchGates.remove(at: index)   // the access ends here …
        withExtendedLifetime(removed) {}              // … and the gate goes here
    }

    /// The names of the registered launch gates, in registration order.
    public var launchGateNames: [String] { launchGates.map(\.name) }

    /// Waits until every launch gate registered (now or while waiting) has opened, in
    /// registration order — what a host awaits after ``handle(_:)`` launched the app and before
    /// it reports the app ready. Each gate's wait is reported to activity observers
    /// (``addActivityObserver(_:)``) as a ``Activity/Kind/gate``.
    public func waitForLaunchGates() async {
        var opened: Set<Int> = []
        while let gate = launchGates.first(where: { !opened.contains($0.id) }) {
            opened.insert(gate.id)
            let observed = activities.isObserved
            if observed { activities.report(.started(Activity(kind: .gate, name: gate.name))) }
            await gate.wait()
            if observed { activities.report(.ended(Activity(kind: .gate, name: gate.name))) }
        }
    }
}
