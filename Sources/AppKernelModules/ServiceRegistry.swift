public import AppKernel

/// The services of an application: registration, dependency-ordered parallel start, lookups,
/// readiness and shutdown. Reached through ``Context``.
///
/// Start rules: dependencies first; independent services start concurrently (each as soon as
/// its last dependency has started — Kahn's algorithm, O(services + edges)); a cycle or a
/// missing dependency is reported before anything starts, with its path (`A → B → C → A`); each
/// service starts exactly once, even when several lookups race for a lazy one; a failing service
/// fails the boot (naming it and the chain that needed it) or is marked failed and skipped, per
/// its policy — what needs it fails with `dependencyFailed`, in one pass, O(services + edges);
/// per-service and whole-boot deadlines run on the application's clock (one timer for all); shutdown runs
/// dependents first, newest start first, with bounded concurrency, each `willDestroy` once.
///
/// The dependency graph itself — names, edges, the closure of a start, Kahn's counters — is a
/// plain value (`ServiceGraph`); the registry schedules what it makes ready (tasks, deadlines,
/// the calls waiting) and keeps what a start creates.
@MainActor
public final class ServiceRegistry {
    typealias Slot = ServiceGraph.Slot

    /// The application the services belong to; `nil` once it has been freed.
    ///
    /// The registry does not keep its application alive: the application owns its BootLoader,
    /// which owns the ``Context``, which owns the registry, so a strong reference back would make
    /// a cycle and no application with services would ever be freed. Deadlines run on the
    /// application's clock, which the registry keeps: a shutdown that outlives the application
    /// still times out. Once the application is gone, refused registrations are no longer
    /// reported as diagnostics (there is nowhere to record them); ``lastRegistrationError``
    /// still says why.
    public private(set) weak var application: Application?
    /// How long one service may take to start when it names no deadline; `nil`: no limit. Default 20 s.
    public var defaultStartDeadline: Duration? = .seconds(20)
    /// How long a whole `startServices` may take; `nil`: no limit.
    public var bootDeadline: Duration?
    /// How many services ``shutdown(deadline:)`` lets shut down at once. Default 16.
    public var maxConcurrentShutdowns = 16
    /// The services in the order their starts completed.
    public var startOrder: [String] { startedSlots.map(graph.name(of:)) }
    /// The slots behind ``startOrder``.
    var startedSlots: [Slot] = []
    /// The dependents a start made ready, reused from one start to the next.
    var readyScratch: [Slot] = []
    /// Why the last registration was refused.
    public private(set) var lastRegistrationError: ServiceError?

    /// The names, dependencies, states and counters.
    var graph = ServiceGraph()
    /// What each service was registered with that its starts do not read, and its failure, by
    /// slot (unregistered ones stay as tombstones).
    var entries: [Entry] = []
    /// What each service's starts and shutdowns read and write — its factory, instance, the call
    /// under way — by slot.
    var records: [Record] = []
    /// The runs that wait for many services (at least 64 and an eighth of the slots, as a boot
    /// does) and so keep a bitset of them instead of an entry in each one's waiting list — the
    /// start then touches no record of a service before that service is ready.
    var wideRuns: [Run] = []
    /// The runs that are not wide, in a waiting list per service they wait for (a service is
    /// wanted while a run waits for it).
    var listedRuns: [Slot: RunList] = [:]
    /// How many entries the waiting lists hold, all together (when none, nothing is looked up).
    var listedWaits = 0
    /// How many runs have begun (numbering them).
    var runsBegun = 0
    /// The shutdowns under way (almost always none or one).
    var shutdownRuns: [ShutdownRun] = []
    /// The distinct start deadlines services were registered with; a ``Record`` names its one by
    /// index (a service's record stays within 48 bytes).
    var startDeadlines: [Duration?] = []
    /// The index of each start deadline in `startDeadlines`.
    private var startDeadlineIndex: [Duration?: Int32] = [:]
    /// The failures and the chains their errors name, shared by those errors.
    let failures = ServiceFailureLog()
    /// The deadlines of the starts and shutdowns under way, behind one timer; tagged by slot.
    /// (Constants, not lazy: each use of a lazy one retains it, and one that is weakly referenced
    /// — the timer's closure does — is retained the slow way.)
    let deadlines: DeadlineQueue
    /// The services ready to start, and the workers starting them.
    let starts: WorkerPool
    private var bootReady: [CheckedContinuation<Void, Never>] = []
    private var bootFinished = false
    private var lastBootError: ServiceError?

    init(application: Application) {
        self.application = application
        let link = Link()
        deadlines = DeadlineQueue(application: application) { slot in link.registry?.deadlinePassed(slot) }
        starts = WorkerPool { job in await link.registry?.start(job) }
        starts.readAhead = { stages in link.registry?.readAhead(&stages, shutdown: nil) }
        link.registry = self
    }

    /// The way back to the registry for the closures its deadline queue and start pool keep.
    private final class Link {
        weak var registry: ServiceRegistry?
    }

    // MARK: Registration

    /// Registers a service made by `factory` (not created before it starts).
    /// - Returns: `false` for a duplicate name (see ``lastRegistrationError``).
    @discardableResult
    public func register(named name: String, dependencies: [String] = [], startMode: ServiceStartMode = .eager,
                         failurePolicy: ServiceFailurePolicy = .failLaunch, deadline: Duration? = nil,
                         factory: @escaping @MainActor () -> any Service) -> Bool {
        guard graph.register(name, dependencies: dependencies, startsEagerly: startMode == .eager) != nil else {
            let error = ServiceError(code: .duplicate, service: name)
            lastRegistrationError = error
            application?.reportDiagnostic(.moduleRefused, subject: "services", message: error.description)
            return false
        }
        entries.append(Entry(mode: startMode, policy: failurePolicy))
        records.append(Record(factory: factory, startDeadline: startDeadlineIndex(of: deadline ?? defaultStartDeadline)))
        return true
    }

    /// The index of `deadline` in `startDeadlines`, added if new (the last one is checked first:
    /// services usually share one).
    private func startDeadlineIndex(of deadline: Duration?) -> Int32 {
        if let last = startDeadlines.last, last == deadline { return Int32(startDeadlines.count - 1) }
        if let index = startDeadlineIndex[deadline] { return index }
        let index = Int32(startDeadlines.count)
        startDeadlines.append(deadline)
        startDeadlineIndex[deadline] = index
        return index
    }

    /// Registers an existing service instance (mPaaS's `registerService:forName:`): found at once
    /// by ``findService(named:)`` (the app made it, so it is not told `didCreate`), started with the
    /// eager services — or at once, when the services have started already.
    @discardableResult
    public func register(_ service: any Service, forName name: String, dependencies: [String] = []) -> Bool {
        guard register(named: name, dependencies: dependencies, factory: { service }), let slot = graph.slot(named: name) else { return false }
        records[slot].instance = service
        if bootFinished { Task { _ = try? await self.service(named: name) } }
        return true
    }

    /// Unregisters a service; a created one is told `willDestroy`, a start under way is cancelled,
    /// and lookups waiting for it fail with ``ServiceError/Code/unknown``. Its slot stays as a
    /// tombstone (a few dozen bytes), so no other service's links move.
    public func unregisterService(named name: String) {
        guard let (slot, state) = graph.unregister(name) else { return }
        // A start under way is abandoned; whoever waits for it learns it is gone.
        if state == .starting, endCall(slot) { starts.abandonWorker(calling: slot) }
        settle(slot, error: ServiceError(code: .unknown, service: name))
        if let instance = records[slot].instance, state != .destroyed { instance.willDestroy() }
        records[slot].instance = nil
        startedSlots.removeAll { $0 == slot }
    }

    /// The registered names, in registration order.
    public var registeredNames: [String] { graph.registeredSlots.map(graph.name(of:)) }

    /// A service's state; `nil` if unknown.
    public func state(of name: String) -> ServiceState? {
        guard let slot = graph.slot(named: name) else { return nil }
        switch graph.state(of: slot) {
        case .registered, .unregistered: return .registered
        case .starting: return .starting
        case .started: return .started
        case .failed: return .failed(failure(ofSlot: slot)?.description ?? "")
        case .destroyed: return .destroyed
        }
    }

    /// Why a service failed: `startFailed`, `timedOut`, or `dependencyFailed` with the failed
    /// dependency's error as its ``ServiceError/cause``; `nil` if it is unknown or has not failed.
    public func failure(of name: String) -> ServiceError? {
        graph.slot(named: name).flatMap(failure(ofSlot:))
    }

    func failure(ofSlot slot: Slot) -> ServiceError? {
        guard graph.state(of: slot) == .failed, let record = entries[slot].failure else { return nil }
        return failures.error(at: record)
    }

    /// Checks every registered service's dependencies for cycles and missing names.
    func checkGraph() throws(ServiceError) {
        _ = try graph.closure(of: graph.registeredSlots, recordingChains: false)
    }

    // MARK: Lookup

    /// The service's instance, at once — mPaaS's `findServiceByName:`: a started service; an
    /// instance the app registered (``register(_:forName:dependencies:)``); a lazy service on its
    /// first use, made now (when everything it needs has started) and its start begun, as mPaaS
    /// makes and starts a lazy service when it is first used (`start` is async here: await
    /// ``service(named:)`` for it to finish). `nil` for an unknown or failed service, and for a
    /// lazy one whose dependencies are still to start (their start is begun too).
    public func findService(named name: String) -> (any Service)? {
        guard let slot = graph.slot(named: name) else { return nil }
        let state = graph.state(of: slot)
        if state == .started { return records[slot].instance }
        guard state == .registered || state == .starting else { return nil }
        if state == .registered, case .lazy = entries[slot].mode {
            if records[slot].instance == nil, dependenciesStarted(slot) {
                let created = records[slot].factory()
                records[slot].instance = created
                created.didCreate()
            }
            Task { _ = try? await self.service(named: name) }
        }
        return records[slot].instance
    }

    /// Whether every dependency of `slot` has started.
    private func dependenciesStarted(_ slot: Slot) -> Bool {
        var started = true
        graph.forEachDependency(of: slot) { if graph.state(of: $0) != .started { started = false } }
        return started
    }

    /// The service, started (with its dependencies) if it was not — exactly once, however many
    /// lookups race.
    /// - Throws: ``ServiceError``.
    public func service(named name: String) async throws(ServiceError) -> any Service {
        guard let slot = graph.slot(named: name) else { throw ServiceError(code: .unknown, service: name) }
        if graph.state(of: slot) != .started { try await start([slot]) }
        // The service may have been unregistered while it started.
        guard graph.slot(named: name) == slot, graph.state(of: slot) == .started, let instance = records[slot].instance else {
            if graph.slot(named: name) == slot, let failure = failure(ofSlot: slot) {
                throw ServiceError(code: .startFailed, service: name, path: [name], detail: failure.description)
            }
            throw ServiceError(code: .unknown, service: name)
        }
        return instance
    }

    // MARK: Boot

    /// Starts the eager services and the services of `groups` (in the order given, each group's
    /// services in registration order), with their dependencies.
    /// - Throws: ``ServiceError`` — a cycle or missing dependency before anything starts; a
    ///   failing `failLaunch` service; the boot deadline.
    public func startServices(groups: [String] = []) async throws(ServiceError) {
        try await startServices(groups: groups, finishingBoot: true)
    }

    /// Starts the eager services and `groups`; `finishingBoot: false` leaves
    /// ``servicesReady()`` waiting (more groups follow).
    func startServices(groups: [String], finishingBoot: Bool) async throws(ServiceError) {
        bootFinished = false
        var roots = graph.eagerSlots
        let registered = graph.registeredSlots
        for group in groups {
            roots += registered.filter { if case .group(group) = entries[$0].mode { true } else { false } }
        }
        do throws(ServiceError) {
            try await start(roots, deadline: bootDeadline)
            if finishingBoot { finishBoot(error: nil) }
        } catch {
            finishBoot(error: error)
            throw error
        }
    }

    /// Starts the services of `groups` (in the order given) with their dependencies, and nothing
    /// else; an unknown or empty group starts nothing.
    /// - Throws: ``ServiceError``.
    func startGroups(_ groups: [String]) async throws(ServiceError) {
        let registered = graph.registeredSlots
        var roots: [Slot] = []
        for group in groups {
            roots += registered.filter { if case .group(group) = entries[$0].mode { true } else { false } }
        }
        guard !roots.isEmpty else { return }
        try await start(roots)
    }

    /// Waits until the current (or last) boot has finished.
    /// - Throws: The boot's error, if it failed.
    public func servicesReady() async throws(ServiceError) {
        if !bootFinished { await withCheckedContinuation { bootReady.append($0) } }
        if let lastBootError { throw lastBootError }
    }

    private func finishBoot(error: ServiceError?) {
        lastBootError = error
        bootFinished = true
        let waiting = bootReady
        bootReady.removeAll()
        for waiter in waiting { waiter.resume() }
    }

    // MARK: Shutdown

    /// Shuts the started services down, dependents before what they depend on: a service's
    /// ``Service/shutdown()`` begins once every started service that depends on it has shut down;
    /// of the services ready to go, the newest start goes first — services that do not suspend
    /// shut down in exact reverse order of their starts — and up to ``maxConcurrentShutdowns``
    /// run at once (each one that suspends lets the next begin). Each is awaited at most
    /// `deadline` on the application's clock (`nil`: as long as it takes), then told
    /// `willDestroy`, once. A later start (a relaunch) makes and starts new instances.
    public func shutdown(deadline: Duration? = .seconds(5)) async {
        // A started service always has its instance (unregistering or destroying one changes its state).
        var order: [Slot] = []
        order.reserveCapacity(startedSlots.count)
        for slot in startedSlots.reversed() where graph.state(of: slot) == .started { order.append(slot) }
        startedSlots.removeAll()
        guard !order.isEmpty else { return }
        // Destroying each member walks its dependents (they wait for it again): from one
        // contiguous index.
        graph.indexDependents(covering: order.count)
        let run = ShutdownRun(deadline: deadline, order: order, slotCount: graph.slotCount)
        let pool = WorkerPool(limit: max(1, maxConcurrentShutdowns), order: run.order) { [weak self] job in
            await self?.shutDown(job.slot, in: run)
        }
        pool.becameConcurrent = { [weak self] frontier in self?.countPendingDependents(in: run, from: frontier) ?? [] }
        pool.readAhead = { [weak self] stages in self?.readAhead(&stages, shutdown: run) }
        run.pool = pool
        shutdownRuns.append(run)
        pool.begin()
        await withCheckedContinuation { run.done = $0 }
        shutdownRuns.removeAll { $0 === run }
        run.pool = nil
        deadlines.releaseTimerIfIdle()
    }
}

extension ServiceRegistry {
    /// One call of ``shutdown(deadline:)``: who is still to go, and — once calls overlap — who
    /// waits for whom.
    ///
    /// While no shutdown suspends, the services go one after another in `order` (newest start
    /// first), each ready when its turn comes because all its dependents started later and so
    /// went before it: nothing is counted. When a worker asks for the next service while
    /// another's shutdown is suspended, the run counts, for each service not handed out yet,
    /// its dependents that have not finished (``ServiceRegistry/countPendingDependents(in:from:)``);
    /// from then on each finished shutdown releases its dependencies, and of the ready ones the
    /// newest start goes first.
    final class ShutdownRun {
        let deadline: Duration?
        /// The started services, newest start first: a service's rank is its position here.
        let order: [Slot]
        /// Which slots are in `order`.
        let members: SlotSet
        /// Which members have finished (shut down, or run out of time) and been destroyed.
        var finished: SlotSet
        /// Once calls overlap: the rank of each member not handed out then, by slot.
        var rank: [Int32] = []
        /// Once calls overlap: for each member not handed out then, by slot, its started
        /// dependents that have not finished.
        var pendingDependents: [Int32] = []
        var remaining: Int
        /// The ranks a finished shutdown made ready, reused.
        var readyScratch: [Int] = []
        var pool: WorkerPool?
        var done: CheckedContinuation<Void, Never>?

        init(deadline: Duration?, order: [Slot], slotCount: Int) {
            self.deadline = deadline
            self.order = order
            var members = SlotSet(capacity: slotCount)
            for slot in order { members.insert(slot) }
            self.members = members
            finished = SlotSet(capacity: slotCount)
            remaining = order.count
        }

        /// A value read from the pending counts of `slots` (see ``ServiceRegistry/readAhead(_:shutdown:)``).
        func touchPendingDependents(of slots: [Int32]) -> Int {
            guard !pendingDependents.isEmpty else { return 0 }
            var sink = 0
            for slot in slots where slot >= 0 { sink &+= Int(pendingDependents[Int(slot)]) }
            return sink
        }

        /// Takes the pending counts out (put them back after): updating a local array is not
        /// checked for exclusive access at each step.
        func takePendingDependents() -> [Int32] {
            defer { pendingDependents = [] }
            return pendingDependents
        }
    }

    /// Shutdowns in `run` overlap: counts, for each member from rank `frontier` on, its started
    /// dependents that have not finished (one pass over their runs of dependents).
    /// - Returns: The ranks of those with none, ready to go.
    func countPendingDependents(in run: ShutdownRun, from frontier: Int) -> [Int] {
        var rank = [Int32](repeating: -1, count: graph.slotCount)
        var pendingDependents = [Int32](repeating: 0, count: graph.slotCount)
        var ready: [Int] = []
        let members = run.members, finished = run.finished
        for position in frontier ..< run.order.count {
            let slot = run.order[position]
            rank[slot] = Int32(position)
            var count: Int32 = 0
            graph.forEachDependent(of: slot) { if members.contains($0) && !finished.contains($0) { count += 1 } }
            pendingDependents[slot] = count
            if count == 0 { ready.append(position) }
        }
        run.rank = rank
        run.pendingDependents = pendingDependents
        return ready
    }

    /// Shuts one service down (a shutdown worker's body), within the run's deadline.
    private func shutDown(_ slot: Slot, in run: ShutdownRun) async {
        guard let instance = records[slot].instance else { return finish(slot, in: run) }
        let deadlineID = run.deadline.map { deadlines.add(after: $0, tag: slot) } ?? Record.noDeadline
        records[slot].beginCall(deadlineID: deadlineID)
        await instance.shutdown()
        guard endCall(slot) else { return }
        finish(slot, in: run)
    }

    /// A shutdown ran past its deadline: the service is destroyed without waiting further, and its
    /// worker is given up.
    func shutdownTimedOut(_ slot: Slot, in run: ShutdownRun) {
        guard endCall(slot) else { return }
        run.pool?.abandonWorker(calling: slot)
        finish(slot, in: run)
    }

    /// The service in `slot` has shut down (or ran out of time): destroy it and, once shutdowns
    /// overlap, release what depends on nothing else still running.
    private func finish(_ slot: Slot, in run: ShutdownRun) {
        if let instance = records[slot].instance {
            instance.willDestroy()
            records[slot].instance = nil
        }
        // A started one's dependents wait for it again.
        graph.markDestroyed(slot)
        run.finished.insert(slot)
        if let pool = run.pool, pool.isConcurrent {
            // The closure touches only locals and constants: a call out of it would make the
            // graph be copied for the walk.
            var pendingDependents = run.takePendingDependents()
            var ready = run.readyScratch
            run.readyScratch = []
            ready.removeAll(keepingCapacity: true)
            let rank = run.rank
            graph.forEachDependency(of: slot) { dependency in
                guard run.members.contains(dependency), rank[dependency] >= 0 else { return }
                pendingDependents[dependency] -= 1
                if pendingDependents[dependency] == 0 { ready.append(Int(rank[dependency])) }
            }
            run.pendingDependents = pendingDependents
            for rank in ready { pool.add(rank: rank) }
            run.readyScratch = ready
        }
        run.remaining -= 1
        if run.remaining == 0, let done = run.done {
            run.done = nil
            done.resume()
        }
    }
}
