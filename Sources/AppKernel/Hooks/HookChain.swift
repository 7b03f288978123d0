/// One dispatch's view of a point's hooks: each stage's live hooks in run order. Immutable, so
/// a chain hands the same one to every dispatch until its hooks change.
final class HookSnapshot<Payload> {
    let before: [HookEntry<Payload>]
    let handle: [HookEntry<Payload>]
    let after: [HookEntry<Payload>]
    /// The registry's ``HookRegistry/slowHookBudget`` when the snapshot was taken (a change of
    /// budget drops every snapshot).
    let budget: Duration?
    /// Where each hook's run is reported, while anyone observes activities (`nil` otherwise; a
    /// change drops every snapshot, as the budget's does): dispatch reads no other state for it.
    let activities: ActivitySink?

    init(before: [HookEntry<Payload>], handle: [HookEntry<Payload>], after: [HookEntry<Payload>], budget: Duration?,
         activities: ActivitySink?) {
        self.before = before
        self.handle = handle
        self.after = after
        self.budget = budget
        self.activities = activities
    }
}

/// What the registry tells every chain, whatever its payload.
@MainActor
protocol AnyHookChain: AnyObject {
    func settingsChanged(budget: Duration?, activities: ActivitySink?)
}

/// The hooks of one point, by stage. The three stage lists are one stored value, so a dispatch
/// takes its snapshot in one access.
///
/// Releasing a hook's entry may run code that reaches this chain again: the entry's closure
/// may hold the last reference to another hook's token, and a token dropped on the main actor
/// runs its (isolated) deinit inline, which cancels that hook — a modification of `stages`.
/// Were the entry released inside a modification of `stages` (a compaction), the two accesses
/// would overlap and the runtime's exclusivity check would trap. So compactions hand the entries
/// they drop back here, and they are released after the access has ended; a snapshot is built
/// only once no cancellation is left, so it never holds a hook cancelled before it was taken.
@MainActor
final class HookChain<Payload>: AnyHookChain, Registrar {
    private struct Stages {
        var before = HookStageList<Payload>()
        var handle = HookStageList<Payload>()
        var after = HookStageList<Payload>()

        var isEmpty: Bool { before.liveCount == 0 && handle.liveCount == 0 && after.liveCount == 0 }
        var hasCancelled: Bool { before.hasCancelled || handle.hasCancelled || after.hasCancelled }

        /// Compacts every stage; returns what the caller releases after its access.
        mutating func compact() -> [[HookEntry<Payload>]] {
            [before.hasCancelled ? before.compact() : [], handle.hasCancelled ? handle.compact() : [],
             after.hasCancelled ? after.compact() : []]
        }

        /// Every stage in run order. Compact first (``HookChain/compact()``).
        mutating func snapshot(budget: Duration?, activities: ActivitySink?) -> HookSnapshot<Payload>? {
            guard !isEmpty else { return nil }
            return HookSnapshot(before: before.snapshot(), handle: handle.snapshot(), after: after.snapshot(), budget: budget,
                                activities: activities)
        }
    }

    private var stages = Stages()
    private var budget: Duration?
    private var activities: ActivitySink?
    /// The snapshot of the current hooks, built by the first dispatch after a change (`nil`
    /// until then, or when there are none); registering or cancelling drops it.
    private var current: (snapshot: HookSnapshot<Payload>?, isValid: Bool) = (nil, false)

    var isEmpty: Bool { stages.isEmpty }

    /// Every stage's live hooks in run order, for one dispatch (`nil` when there are none):
    /// hooks registered or cancelled while it runs affect the next dispatch. Every dispatch
    /// between two changes shares one snapshot: one read and one retain.
    func snapshot() -> HookSnapshot<Payload>? {
        let current = current
        if current.isValid { return current.snapshot }
        compact()
        let snapshot = stages.snapshot(budget: budget, activities: activities)
        self.current = (snapshot, true)
        return snapshot
    }

    init(budget: Duration?, activities: ActivitySink?) {
        self.budget = budget
        self.activities = activities
    }

    func settingsChanged(budget: Duration?, activities: ActivitySink?) {
        self.budget = budget
        self.activities = activities
        current = (nil, false)
    }

    /// Drops the cancelled entries of every stage, releasing them only after each access to
    /// `stages` has ended; again while releasing them cancelled more hooks of this chain.
    private func compact() {
        while stages.hasCancelled {
            let dropped = stages.compact()   // the access to `stages` ends here …
            withExtendedLifetime(dropped) {}  // … and the dropped entries go here
        }
    }

    /// A snapshot of one stage's live hooks in run order.
    func entries(_ stage: HookError.Stage) -> [HookEntry<Payload>] {
        compact()
        return switch stage {
        case .before: stages.before.snapshot()
        case .handle: stages.handle.snapshot()
        case .after: stages.after.snapshot()
        case .phase: []
        }
    }

    func insert(_ entry: HookEntry<Payload>) {
        current = (nil, false)
        switch entry.stage {
        case .before: stages.before.insert(entry)
        case .handle: stages.handle.insert(entry)
        case .after: stages.after.insert(entry)
        case .phase: break
        }
    }

    /// A token was cancelled; its registration is one of this chain's entries.
    func cancelRegistration(_ registration: AnyObject?) {
        if let entry = registration as? HookEntry<Payload> { cancel(entry) }
    }

    func cancel(_ entry: HookEntry<Payload>) {
        guard !entry.isCancelled else { return }
        entry.isCancelled = true
        // Dropping the snapshot frees no entry: a valid snapshot holds only hooks live when it
        // was taken, and every one cancelled since invalidated it (here), so each is still in
        // `stages` too.
        current = (nil, false)
        let dropped: [HookEntry<Payload>]
        switch entry.stage {
        case .before: dropped = stages.before.noteCancelled()
        case .handle: dropped = stages.handle.noteCancelled()
        case .after: dropped = stages.after.noteCancelled()
        case .phase: dropped = []
        }
        // Released here, after the access to `stages` has ended (see the type's comment).
        withExtendedLifetime(dropped) {}
    }
}
