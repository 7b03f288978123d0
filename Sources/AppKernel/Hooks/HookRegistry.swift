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
        didSet { settingsChanged() }
    }
    /// Receives hooks that ran over ``slowHookBudget``: diagnostics, as BeeHive's profiler gives.
    public var onSlowHook: (@MainActor (HookTiming) -> Void)?

    private let elapsed: @Sendable () -> Duration
    /// Where each hook's run is reported while someone observes (the application's activity
    /// observers; a phase engine running this registry's hooks under an application sets it).
    package var activities: ActivitySink? {
        didSet {
            guard activities !== oldValue else { return }
            oldValue?.forget(self)
            activities?.remember(self)
            activitiesObservationChanged()
        }
    }
    /// ``activities`` while anyone observes it, else `nil`: what dispatch reads — from the chain's
    /// snapshot, like the budget — so an event's hooks cost no more while nobody observes.
    private var observedActivities: ActivitySink?

    /// The sink's observers came or went: snapshots taken from now carry the sink, or not.
    package func activitiesObservationChanged() {
        let observed = activities?.isObserved == true ? activities : nil
        guard observed !== observedActivities else { return }
        observedActivities = observed
        settingsChanged()
    }

    /// Dispatch reads the budget and the observed sink from the chain's snapshot (one read per
    /// dispatch fewer each), so a change of either drops every chain's snapshot.
    private func settingsChanged() {
        for chain in eventChains { (chain as? any AnyHookChain)?.settingsChanged(budget: slowHookBudget, activities: observedActivities) }
        for chain in pointChains.values { (chain as? any AnyHookChain)?.settingsChanged(budget: slowHookBudget, activities: observedActivities) }
    }
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
        _ = try run(chain.entries(.before), point, payload, policy, budget: slowHookBudget, activities: observedActivities)
    }

    /// Runs the handlers of `point` on a snapshot of them, until one answers other than
    /// `.continue`, and returns that answer (`.continue` when none stopped).
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runHandle<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                            onFailure policy: HookFailurePolicy) throws(HookError) -> HookResult {
        guard let chain = chain(at: point) else { return .continue }
        return try run(chain.entries(.handle), point, payload, policy, budget: slowHookBudget, activities: observedActivities)
    }

    /// Runs the `after` observers of `point` on a snapshot of them.
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runAfter<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                           onFailure policy: HookFailurePolicy) throws(HookError) {
        guard let chain = chain(at: point) else { return }
        _ = try run(chain.entries(.after), point, payload, policy, budget: slowHookBudget, activities: observedActivities)
    }

    /// A snapshot of an application event's hooks for one dispatch, or `nil` when it has none.
    /// The chain is an array slot, no hashing: the cost of an event does not depend on hooks
    /// registered on other events.
    func snapshot<Payload>(at event: ApplicationEvent<Payload>) -> HookSnapshot<Payload>? {
        guard let stored = eventChains[event.ordinal] else { return nil }
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
                               _ policy: HookFailurePolicy, budget: Duration?, activities: ActivitySink?) throws(HookError) -> HookResult {
        if let activities {
            return try runObserved(entries, point, payload, policy, budget: budget, activities)
        }
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

    /// ``run(_:_:_:_:budget:)`` while activity observers listen: each hook reported as it starts
    /// and as it ends or fails (with the failure policy's usual effect afterwards).
    private func runObserved<Point: HookPoint>(_ entries: [HookEntry<Point.Payload>], _ point: Point, _ payload: Point.Payload,
                                               _ policy: HookFailurePolicy, budget: Duration?,
                                               _ activities: ActivitySink) throws(HookError) -> HookResult {
        var last = budget == nil ? .zero : elapsed()
        for entry in entries {
            let activity = Activity(kind: .hook, name: "\(point.hookPointName).\(entry.stage.rawValue):\(entry.name)")
            activities.report(.started(activity))
            let result: HookResult
            do {
                result = try entry.body(payload)
                activities.report(.ended(activity))
            } catch {
                let failure = HookError(point: point.hookPointName, stage: entry.stage, hook: entry.name, failure: .threw(error))
                activities.report(.failed(activity, message: failure.description))
                if let budget { last = check(entry, point, since: last, budget: budget) }
                switch policy {
                case .abort: throw failure
                case .report(let report): report(failure)
                }
                continue
            }
            if let budget { last = check(entry, point, since: last, budget: budget) }
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
            chain = HookChain<Point.Payload>(budget: slowHookBudget, activities: observedActivities)
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
