/// A point in a pipeline where hooks can run: an ``ApplicationEvent`` for the application's
/// life cycle, a launch phase for the SDK manager. `Payload` is what its hooks receive.
public protocol HookPoint: Hashable, Sendable {
    /// What the hooks of this point receive.
    associatedtype Payload
    /// The point's name, as errors and traces show it.
    var hookPointName: String { get }
}

/// What dispatch does when a hook throws.
public enum HookFailurePolicy {
    /// Stop the dispatch and throw the failure (the SDK manager's launch: a failed phase hook
    /// fails the launch).
    case abort
    /// Hand the failure to the closure and go on; a failing handler counts as `.continue` (the
    /// application's life cycle: a broken hook never swallows an event).
    case report(@MainActor (HookError) -> Void)
}

/// How long one synchronous hook took, reported when it exceeds the registry's budget.
public struct HookTiming: Sendable, Hashable {
    /// The hook point.
    public var point: String
    /// The kind of hook.
    public var stage: HookError.Stage
    /// The hook's label or registration site.
    public var hook: String
    /// How long it ran, on the registry's clock.
    public var duration: Duration
}

/// Before / handle / after hooks for any number of hook points — the one hook model of
/// AppKernel, used by the application for its life-cycle events and by the SDK manager for its
/// launch phases (mPaaS's `DTFrameworkInterface`, generalised).
///
/// For each point: `before` observers run first, then `handle` handlers until one returns
/// something other than ``HookResult/continue`` (later handlers do not run), then — only on
/// `.continue` — the owner's default work (listeners, the delegate), then `after` observers.
/// Hooks run by priority (higher first), then in registration order. Registering or cancelling
/// a hook while its point is being dispatched affects the next dispatch, never the current one.
///
/// ```swift
/// app.hooks.before(.didEnterBackground, label: "flush") { _ in log.flush() }
/// let rewrite = app.hooks.handle(.openURL) { request in
///     request.url = URL(string: "myapp://rewritten")!
///     return .continue
/// }
/// ```
@MainActor
public final class HookRegistry {
    /// A synchronous hook that runs longer than this (on the registry's clock) is reported to
    /// ``onSlowHook``. `nil` turns the check off.
    public var slowHookBudget: Duration? {
        didSet {
            // Dispatch reads the budget from the chain's snapshot: one read per dispatch fewer.
            for chain in eventChains { (chain as? any AnyHookChain)?.budgetChanged(to: slowHookBudget) }
            for chain in pointChains.values { (chain as? any AnyHookChain)?.budgetChanged(to: slowHookBudget) }
        }
    }
    /// Receives hooks that ran over ``slowHookBudget``: diagnostics, as BeeHive's profiler gives.
    public var onSlowHook: (@MainActor (HookTiming) -> Void)?

    private let elapsed: @Sendable () -> Duration
    /// The hooks of each application event that ever had one, by the event's ordinal: an event
    /// finds its chain (or that it has none) without hashing anything.
    private var eventChains: [AnyObject?] = Array(repeating: nil, count: LifecycleEvent.Name.allCases.count)
    /// The hooks of every other point that ever had one (phases: looked up once per phase).
    private var pointChains: [HookKey: AnyObject] = [:]
    private var nextID = 1

    /// Creates a registry.
    /// - Parameters:
    ///   - clock: Measures how long hooks run.
    ///   - slowHookBudget: See ``slowHookBudget``.
    public init(clock: some Clock<Duration> = ContinuousClock(), slowHookBudget: Duration? = nil) {
        let start = clock.now
        self.elapsed = { start.duration(to: clock.now) }
        self.slowHookBudget = slowHookBudget
    }

    // MARK: Registration at any hook point

    /// Registers an observer that runs before the handlers of `point`.
    public func before<Point: HookPoint>(point: Point, priority: Int = 0, label: String? = nil,
                                         fileID: String = #fileID, line: Int = #line,
                                         _ body: @escaping @MainActor (Point.Payload) throws -> Void) -> ListenerToken {
        register(point, HookKey(point), .before, priority, label, fileID, line, observing(body))
    }

    /// Registers a handler of `point`; the first one that does not answer `.continue` stops the
    /// point's dispatch.
    public func handle<Point: HookPoint>(point: Point, priority: Int = 0, label: String? = nil,
                                         fileID: String = #fileID, line: Int = #line,
                                         _ body: @escaping @MainActor (Point.Payload) throws -> HookResult) -> ListenerToken {
        register(point, HookKey(point), .handle, priority, label, fileID, line, body)
    }

    /// Registers an observer that runs after the default work of `point` (only when no handler stopped it).
    public func after<Point: HookPoint>(point: Point, priority: Int = 0, label: String? = nil,
                                        fileID: String = #fileID, line: Int = #line,
                                        _ body: @escaping @MainActor (Point.Payload) throws -> Void) -> ListenerToken {
        register(point, HookKey(point), .after, priority, label, fileID, line, observing(body))
    }

    /// Whether any hook is registered at `point`.
    public func hasHooks<Point: HookPoint>(at point: Point) -> Bool {
        chain(at: point) != nil
    }

    /// The labels (or registration sites) of the hooks at `point`, in the order they run.
    public func hooks<Point: HookPoint>(at point: Point, stage: HookError.Stage) -> [String] {
        guard let chain = storedChain(at: point) else { return [] }
        return chain.entries(stage).map(\.name)
    }

    // MARK: Dispatch

    /// Runs the `before` observers of `point` on a snapshot of them.
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runBefore<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                            onFailure policy: HookFailurePolicy) throws(HookError) {
        guard let chain = chain(at: point) else { return }
        _ = try run(chain.entries(.before), point, payload, policy, budget: slowHookBudget)
    }

    /// Runs the handlers of `point` on a snapshot of them, until one answers other than
    /// `.continue`, and returns that answer (`.continue` when none stopped).
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runHandle<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                            onFailure policy: HookFailurePolicy) throws(HookError) -> HookResult {
        guard let chain = chain(at: point) else { return .continue }
        return try run(chain.entries(.handle), point, payload, policy, budget: slowHookBudget)
    }

    /// Runs the `after` observers of `point` on a snapshot of them.
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runAfter<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                           onFailure policy: HookFailurePolicy) throws(HookError) {
        guard let chain = chain(at: point) else { return }
        _ = try run(chain.entries(.after), point, payload, policy, budget: slowHookBudget)
    }

    /// A snapshot of an application event's hooks for one dispatch, or `nil` when it has none.
    /// The chain is an array slot, no hashing: the cost of an event does not depend on hooks
    /// registered on other events.
    func snapshot<Payload>(at event: ApplicationEvent<Payload>) -> HookSnapshot<Payload>? {
        guard let stored = eventChains[event.name.ordinal] else { return nil }
        return (stored as? HookChain<Payload>)?.snapshot()
    }

    /// The hooks of `point`, or `nil` when it has none.
    func chain<Point: HookPoint>(at point: Point) -> HookChain<Point.Payload>? {
        guard let chain = storedChain(at: point), !chain.isEmpty else { return nil }
        return chain
    }

    /// Runs one stage's hooks (a snapshot of them): every hook, or (`.handle`) until one answers
    /// other than `.continue`; returns that answer, or `.continue`.
    ///
    /// With a `budget` (the ``slowHookBudget``, read once per dispatch by the caller) the clock is
    /// read once before the stage and once after each hook (each reading ends one hook's time and
    /// starts the next's); without one, never.
    func run<Point: HookPoint>(_ entries: [HookEntry<Point.Payload>], _ point: Point, _ payload: Point.Payload,
                               _ policy: HookFailurePolicy, budget: Duration?) throws(HookError) -> HookResult {
        guard let budget else {
            for entry in entries {
                let result = try call(entry, point, payload, policy)
                if result.stops { return result }
            }
            return .continue
        }
        var last = elapsed()
        for entry in entries {
            let result: HookResult
            do {
                result = try call(entry, point, payload, policy)
            } catch {
                last = check(entry, point, since: last, budget: budget)
                throw error
            }
            last = check(entry, point, since: last, budget: budget)
            if result.stops { return result }
        }
        return .continue
    }

    // MARK: Internals

    /// The chain stored for `point`, live hooks or not.
    private func storedChain<Point: HookPoint>(at point: Point) -> HookChain<Point.Payload>? {
        storedChain(HookKey(point), of: Point.Payload.self)
    }

    private func storedChain<Payload>(_ key: HookKey, of _: Payload.Type) -> HookChain<Payload>? {
        switch key {
        case .event(let name): eventChains[name.ordinal] as? HookChain<Payload>
        case let key: pointChains[key] as? HookChain<Payload>
        }
    }

    /// Registers `body` at `point`, whose `key` the caller knows (an application event's is its
    /// name: no existential cast).
    func register<Point: HookPoint>(_ point: Point, _ key: HookKey, _ stage: HookError.Stage, _ priority: Int, _ label: String?,
                                            _ fileID: String, _ line: Int,
                                            _ body: @escaping @MainActor (Point.Payload) throws -> HookResult) -> ListenerToken {
        let chain: HookChain<Point.Payload>
        if let stored = storedChain(key, of: Point.Payload.self) {
            chain = stored
        } else {
            chain = HookChain<Point.Payload>(budget: slowHookBudget)
            switch key {
            case .event(let name): eventChains[name.ordinal] = chain
            case let key: pointChains[key] = chain
            }
        }
        let id = nextID
        nextID += 1
        let entry = HookEntry(id: id, priority: priority, label: label, fileID: fileID, line: line, stage: stage, body: body)
        chain.insert(entry)
        // The token holds the chain strongly: a weak reference would give the chain a side table
        // and make every retain and release of it slower. The registry never drops a chain, so
        // this keeps nothing alive that would otherwise go — except after the registry itself has
        // gone, when removing the entry from the orphan chain is harmless.
        return ListenerToken(registration: entry, registrar: chain)
    }

    /// Reports `entry` if the time since `last` is over `budget`; returns the new reading.
    private func check<Point: HookPoint>(_ entry: HookEntry<Point.Payload>, _ point: Point, since last: Duration,
                                         budget: Duration) -> Duration {
        let now = elapsed()
        let duration = now - last
        if duration > budget {
            onSlowHook?(HookTiming(point: point.hookPointName, stage: entry.stage, hook: entry.name, duration: duration))
        }
        return now
    }

    private func call<Point: HookPoint>(_ entry: HookEntry<Point.Payload>, _ point: Point, _ payload: Point.Payload,
                                        _ policy: HookFailurePolicy) throws(HookError) -> HookResult {
        do {
            return try entry.body(payload)
        } catch {
            let failure = HookError(point: point.hookPointName, stage: entry.stage, hook: entry.name, failure: .threw(error))
            switch policy {
            case .abort: throw failure
            case .report(let report): report(failure)
            }
            return .continue
        }
    }
}

/// Identifies a hook point without boxing it: an application event by its name, any other point
/// by its type and its name.
enum HookKey: Hashable {
    case event(LifecycleEvent.Name)
    case point(type: ObjectIdentifier, name: String)

    init<Point: HookPoint>(_ point: Point) {
        if let event = point as? any NamedApplicationEvent {
            self = .event(event.name)
        } else {
            self = .point(type: ObjectIdentifier(Point.self), name: point.hookPointName)
        }
    }
}

/// What the registry needs of an ``ApplicationEvent`` whatever its payload: its name.
protocol NamedApplicationEvent {
    var name: LifecycleEvent.Name { get }
}

extension ApplicationEvent: NamedApplicationEvent {}

/// An observer (`before`, `after`) as a hook body: it runs, then lets the dispatch go on.
func observing<Payload>(_ observer: @escaping @MainActor (Payload) throws -> Void) -> @MainActor (Payload) throws -> HookResult {
    { payload in try observer(payload); return .continue }
}

/// One registered hook; its token marks it cancelled.
final class HookEntry<Payload> {
    let id: Int
    let priority: Int
    let label: String?
    /// The registration site, for a hook without a label (`#fileID` literals: no allocation).
    let fileID: String
    let line: Int
    let stage: HookError.Stage
    let body: @MainActor (Payload) throws -> HookResult
    var isCancelled = false

    init(id: Int, priority: Int, label: String?, fileID: String, line: Int, stage: HookError.Stage,
         body: @escaping @MainActor (Payload) throws -> HookResult) {
        self.id = id
        self.priority = priority
        self.label = label
        self.fileID = fileID
        self.line = line
        self.stage = stage
        self.body = body
    }

    /// The label, or the registration site (`File.swift:12`) — built when asked for (errors,
    /// slow-hook reports, listings), never at registration.
    var name: String {
        label ?? "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
    }
}

/// The hooks of one stage of one point. Registering is amortised O(1): an append, which only
/// marks the list unsorted when the new hook outranks the last one. Cancelling is O(1): a mark
/// and a count. The list is put in run order — cancelled hooks dropped, then (if needed) sorted
/// by priority, higher first, then registration — when a dispatch takes its snapshot, work that
/// the dispatch's own pass over the hooks already pays for; it is also compacted as soon as
/// cancelled hooks outnumber live ones, so memory follows the live count.
///
/// Compacting never frees an entry itself: it hands the entries it dropped back to the chain,
/// which lets them go once its access to the list has ended (see ``HookChain``).
struct HookStageList<Payload> {
    private var entries: [HookEntry<Payload>] = []
    private var cancelled = 0
    private var sorted = true

    var liveCount: Int { entries.count - cancelled }
    var hasCancelled: Bool { cancelled > 0 }

    mutating func insert(_ entry: HookEntry<Payload>) {
        if let last = entries.last, last.priority < entry.priority { sorted = false }
        entries.append(entry)
    }

    /// Counts a cancelled entry; compacts once cancelled entries outnumber live ones.
    /// - Returns: What the caller must release after its access ends (see ``compact()``).
    mutating func noteCancelled() -> [HookEntry<Payload>] {
        cancelled += 1
        return cancelled > 8 && cancelled * 2 > entries.count ? compact() : []
    }

    /// The live hooks in run order. Compact first (``compact()``): this only sorts.
    mutating func snapshot() -> [HookEntry<Payload>] {
        precondition(cancelled == 0, "HookStageList: compact before taking a snapshot")
        if !sorted {
            entries.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.id < $1.id }
            sorted = true
            #if DEBUG
            HookStageCounters.sorts += 1
            #endif
        }
        return entries
    }

    /// Drops the cancelled entries.
    /// - Returns: The entries as they were, cancelled ones included: the caller releases them
    ///   after its access to the list has ended, since freeing an entry frees its hook's closure,
    ///   whose captures may include a token of this very chain (see ``HookChain``).
    mutating func compact() -> [HookEntry<Payload>] {
        #if DEBUG
        HookStageCounters.elementsMoved += entries.count
        #endif
        let old = entries
        entries = old.filter { !$0.isCancelled }
        cancelled = 0
        return old
    }
}

#if DEBUG
/// Entries moved by compaction, and sorts, so far — every ``HookStageList`` together (debug
/// builds; complexity tests).
enum HookStageCounters {
    nonisolated(unsafe) static var elementsMoved = 0
    nonisolated(unsafe) static var sorts = 0
}
#endif

/// One dispatch's view of a point's hooks: each stage's live hooks in run order. Immutable, so
/// a chain hands the same one to every dispatch until its hooks change.
final class HookSnapshot<Payload> {
    let before: [HookEntry<Payload>]
    let handle: [HookEntry<Payload>]
    let after: [HookEntry<Payload>]
    /// The registry's ``HookRegistry/slowHookBudget`` when the snapshot was taken (a change of
    /// budget drops every snapshot).
    let budget: Duration?

    init(before: [HookEntry<Payload>], handle: [HookEntry<Payload>], after: [HookEntry<Payload>], budget: Duration?) {
        self.before = before
        self.handle = handle
        self.after = after
        self.budget = budget
    }
}

/// What the registry tells every chain, whatever its payload.
@MainActor
protocol AnyHookChain: AnyObject {
    func budgetChanged(to budget: Duration?)
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
        mutating func snapshot(budget: Duration?) -> HookSnapshot<Payload>? {
            guard !isEmpty else { return nil }
            return HookSnapshot(before: before.snapshot(), handle: handle.snapshot(), after: after.snapshot(), budget: budget)
        }
    }

    private var stages = Stages()
    private var budget: Duration?
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
        let snapshot = stages.snapshot(budget: budget)
        self.current = (snapshot, true)
        return snapshot
    }

    init(budget: Duration?) {
        self.budget = budget
    }

    func budgetChanged(to budget: Duration?) {
        self.budget = budget
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
