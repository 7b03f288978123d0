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
    public var slowHookBudget: Duration?
    /// Receives hooks that ran over ``slowHookBudget``: diagnostics, as BeeHive's profiler gives.
    public var onSlowHook: (@MainActor (HookTiming) -> Void)?

    private let elapsed: @Sendable () -> Duration
    /// The hooks of each point that ever had one.
    private var chains: [HookKey: AnyObject] = [:]
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
        register(point, .before, priority, label, fileID, line) { payload in try body(payload); return .continue }
    }

    /// Registers a handler of `point`; the first one that does not answer `.continue` stops the
    /// point's dispatch.
    public func handle<Point: HookPoint>(point: Point, priority: Int = 0, label: String? = nil,
                                         fileID: String = #fileID, line: Int = #line,
                                         _ body: @escaping @MainActor (Point.Payload) throws -> HookResult) -> ListenerToken {
        register(point, .handle, priority, label, fileID, line, body)
    }

    /// Registers an observer that runs after the default work of `point` (only when no handler stopped it).
    public func after<Point: HookPoint>(point: Point, priority: Int = 0, label: String? = nil,
                                        fileID: String = #fileID, line: Int = #line,
                                        _ body: @escaping @MainActor (Point.Payload) throws -> Void) -> ListenerToken {
        register(point, .after, priority, label, fileID, line) { payload in try body(payload); return .continue }
    }

    /// Whether any hook is registered at `point`.
    public func hasHooks<Point: HookPoint>(at point: Point) -> Bool {
        chain(at: point) != nil
    }

    /// The labels (or registration sites) of the hooks at `point`, in the order they run.
    public func hooks<Point: HookPoint>(at point: Point, stage: HookError.Stage) -> [String] {
        guard let chain = chains[HookKey(point)] as? HookChain<Point.Payload> else { return [] }
        return chain.entries(stage).map(\.name)
    }

    // MARK: Dispatch

    /// Runs the `before` observers of `point` on a snapshot of them.
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runBefore<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                            onFailure policy: HookFailurePolicy) throws(HookError) {
        guard let chain = chain(at: point) else { return }
        _ = try run(.before, of: chain, point, payload, policy)
    }

    /// Runs the handlers of `point` on a snapshot of them, until one answers other than
    /// `.continue`, and returns that answer (`.continue` when none stopped).
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runHandle<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                            onFailure policy: HookFailurePolicy) throws(HookError) -> HookResult {
        guard let chain = chain(at: point) else { return .continue }
        return try run(.handle, of: chain, point, payload, policy)
    }

    /// Runs the `after` observers of `point` on a snapshot of them.
    /// - Throws: The first failure, with ``HookFailurePolicy/abort``.
    public func runAfter<Point: HookPoint>(_ point: Point, _ payload: Point.Payload,
                                           onFailure policy: HookFailurePolicy) throws(HookError) {
        guard let chain = chain(at: point) else { return }
        _ = try run(.after, of: chain, point, payload, policy)
    }

    /// The hooks of `point`, or `nil` when it has none — looked up once per event by the
    /// application, which then runs the stages on it.
    func chain<Point: HookPoint>(at point: Point) -> HookChain<Point.Payload>? {
        guard !chains.isEmpty, let chain = chains[HookKey(point)] as? HookChain<Point.Payload>, !chain.isEmpty else { return nil }
        return chain
    }

    /// Runs one stage of `chain` on a snapshot of it: every hook, or (`.handle`) until one
    /// answers other than `.continue`; returns that answer, or `.continue`.
    func run<Point: HookPoint>(_ stage: HookError.Stage, of chain: HookChain<Point.Payload>, _ point: Point,
                               _ payload: Point.Payload, _ policy: HookFailurePolicy) throws(HookError) -> HookResult {
        for entry in chain.entries(stage) {
            let result = try call(entry, point, payload, policy)
            if result.stops { return result }
        }
        return .continue
    }

    // MARK: Internals

    private func register<Point: HookPoint>(_ point: Point, _ stage: HookError.Stage, _ priority: Int, _ label: String?,
                                            _ fileID: String, _ line: Int,
                                            _ body: @escaping @MainActor (Point.Payload) throws -> HookResult) -> ListenerToken {
        let key = HookKey(point)
        let chain = (chains[key] as? HookChain<Point.Payload>) ?? HookChain<Point.Payload>()
        chains[key] = chain
        let id = nextID
        nextID += 1
        let name = label ?? "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
        chain.insert(HookEntry(id: id, priority: priority, name: name, stage: stage, body: body))
        // The token holds the chain strongly: a weak reference would give the chain a side table
        // and make every retain and release of it, on every event, slower. The registry never
        // drops a chain, so this keeps nothing alive that would otherwise go — except after the
        // registry itself has gone, when removing the entry from the orphan chain is harmless.
        return ListenerToken { [chain] in chain.remove(id: id) }
    }

    private func call<Point: HookPoint>(_ entry: HookEntry<Point.Payload>, _ point: Point, _ payload: Point.Payload,
                                        _ policy: HookFailurePolicy) throws(HookError) -> HookResult {
        let start = slowHookBudget == nil ? nil : elapsed()
        defer {
            if let start, let budget = slowHookBudget {
                let duration = elapsed() - start
                if duration > budget {
                    onSlowHook?(HookTiming(point: point.hookPointName, stage: entry.stage, hook: entry.name, duration: duration))
                }
            }
        }
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

/// Identifies a hook point without boxing it: its type and its name.
struct HookKey: Hashable {
    let type: ObjectIdentifier
    let name: String

    init<Point: HookPoint>(_ point: Point) {
        type = ObjectIdentifier(Point.self)
        name = point.hookPointName
    }
}

/// One registered hook.
struct HookEntry<Payload> {
    let id: Int
    let priority: Int
    let name: String
    let stage: HookError.Stage
    let body: @MainActor (Payload) throws -> HookResult
}

/// The hooks of one point, kept in run order: priority (higher first), then registration.
@MainActor
final class HookChain<Payload> {
    private var before: [HookEntry<Payload>] = []
    private var handle: [HookEntry<Payload>] = []
    private var after: [HookEntry<Payload>] = []

    var isEmpty: Bool { before.isEmpty && handle.isEmpty && after.isEmpty }

    func entries(_ stage: HookError.Stage) -> [HookEntry<Payload>] {
        switch stage {
        case .before: before
        case .handle: handle
        case .after: after
        case .phase: []
        }
    }

    func insert(_ entry: HookEntry<Payload>) {
        func place(_ list: inout [HookEntry<Payload>]) {
            let index = list.firstIndex { $0.priority < entry.priority } ?? list.endIndex
            list.insert(entry, at: index)
        }
        switch entry.stage {
        case .before: place(&before)
        case .handle: place(&handle)
        case .after: place(&after)
        case .phase: break
        }
    }

    func remove(id: Int) {
        before.removeAll { $0.id == id }
        handle.removeAll { $0.id == id }
        after.removeAll { $0.id == id }
    }
}
