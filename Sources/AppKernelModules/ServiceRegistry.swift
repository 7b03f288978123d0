import AppKernel

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

    /// The application (its clock measures deadlines).
    public let application: Application
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
    /// What each service was registered with and what its start made, by slot (unregistered
    /// ones stay as tombstones).
    var entries: [Entry] = []
    /// The calls waiting for each service, by slot (a service is wanted while any waits).
    var waiting: [RunList] = []
    /// The failures and the chains their errors name, shared by those errors.
    let failures = ServiceFailureLog()
    /// The deadlines of the starts and shutdowns under way, behind one timer; tagged by slot.
    private(set) lazy var deadlines = DeadlineQueue(application: application) { [weak self] slot in self?.deadlinePassed(slot) }
    /// The services ready to start, and the workers starting them.
    private(set) lazy var starts = WorkerPool { [weak self] slot, worker in await self?.start(slot, by: worker) }
    private var bootReady: [CheckedContinuation<Void, Never>] = []
    private var bootFinished = false
    private var lastBootError: ServiceError?

    init(application: Application) { self.application = application }

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
            application.reportDiagnostic(.moduleRefused, subject: "services", message: error.description)
            return false
        }
        entries.append(Entry(mode: startMode, policy: failurePolicy, deadline: deadline ?? defaultStartDeadline, factory: factory))
        waiting.append(RunList())
        return true
    }

    /// Registers an existing service instance (mPaaS's `registerService:forName:`), started with
    /// the eager services.
    @discardableResult
    public func register(_ service: any Service, forName name: String, dependencies: [String] = []) -> Bool {
        register(named: name, dependencies: dependencies) { service }
    }

    /// Unregisters a service; a created one is told `willDestroy`, a start under way is cancelled,
    /// and lookups waiting for it fail with ``ServiceError/Code/unknown``. Its slot stays as a
    /// tombstone (a few dozen bytes), so no other service's links move.
    public func unregisterService(named name: String) {
        guard let (slot, state) = graph.unregister(name) else { return }
        let entry = entries[slot]
        // A start under way is abandoned; whoever waits for it learns it is gone.
        if state == .starting, let worker = entry.endCall(deadlines), let worker { starts.abandon(worker) }
        settle(slot, error: ServiceError(code: .unknown, service: name))
        if let instance = entry.instance, state != .destroyed { instance.willDestroy() }
        entry.instance = nil
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

    /// A started service, at once; `nil` if unknown or not started. A lazy service that has not
    /// started begins starting (use ``service(named:)`` to wait for it).
    public func findService(named name: String) -> (any Service)? {
        guard let slot = graph.slot(named: name) else { return nil }
        if graph.state(of: slot) == .started { return entries[slot].instance }
        if case .lazy = entries[slot].mode, graph.state(of: slot) == .registered { Task { _ = try? await self.service(named: name) } }
        return nil
    }

    /// The service, started (with its dependencies) if it was not — exactly once, however many
    /// lookups race.
    /// - Throws: ``ServiceError``.
    public func service(named name: String) async throws(ServiceError) -> any Service {
        guard let slot = graph.slot(named: name) else { throw ServiceError(code: .unknown, service: name) }
        if graph.state(of: slot) != .started { try await start([slot]) }
        // The service may have been unregistered while it started.
        guard graph.slot(named: name) == slot, graph.state(of: slot) == .started, let instance = entries[slot].instance else {
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
        let slotCount = graph.slotCount
        var order: [Slot] = []
        var isMember = [Bool](repeating: false, count: slotCount)
        // A started service always has its instance (unregistering or destroying one changes its state).
        for slot in startedSlots.reversed() where graph.state(of: slot) == .started {
            order.append(slot)
            isMember[slot] = true
        }
        startedSlots.removeAll()
        guard !order.isEmpty else { return }
        // Each member's started dependents, counted from the dependents' side: in slot order, each
        // reading its own run of dependency slots (no list walked per service).
        var pendingDependents = [Int32](repeating: 0, count: slotCount)
        for slot in 0 ..< slotCount where isMember[slot] {
            graph.forEachDependency(of: slot) { if isMember[$0] { pendingDependents[$0] += 1 } }
        }
        var rank = [Int](repeating: 0, count: slotCount)
        for (position, slot) in order.enumerated() { rank[slot] = position }
        // Destroying each member walks its dependents (they wait for it again).
        graph.indexDependents(covering: order.count)
        let run = ShutdownRun(deadline: deadline, order: order, isMember: isMember, pendingDependents: pendingDependents)
        run.pool = WorkerPool(limit: max(1, maxConcurrentShutdowns), ranking: (rank, run.order)) { [weak self] slot, worker in
            await self?.shutDown(slot, in: run, by: worker)
        }
        for slot in run.order where run.pendingDependents[slot] == 0 { run.pool?.add(slot) }
        await withCheckedContinuation { run.finished = $0 }
        run.pool = nil
        deadlines.releaseTimerIfIdle()
    }
}

extension ServiceRegistry {
    /// One call of ``shutdown(deadline:)``: who is still to go, and who waits for whom.
    final class ShutdownRun {
        let deadline: Duration?
        /// The started services, newest start first.
        let order: [Slot]
        /// Whether each slot is one of them.
        let isMember: [Bool]
        /// For each member, its started dependents that have not shut down yet.
        var pendingDependents: [Int32]
        var remaining: Int
        var pool: WorkerPool?
        var finished: CheckedContinuation<Void, Never>?

        init(deadline: Duration?, order: [Slot], isMember: [Bool], pendingDependents: [Int32]) {
            self.deadline = deadline
            self.order = order
            self.isMember = isMember
            self.pendingDependents = pendingDependents
            remaining = order.count
        }
    }

    /// Shuts one service down (a shutdown worker's body), within the run's deadline.
    private func shutDown(_ slot: Slot, in run: ShutdownRun, by worker: Worker) async {
        let entry = entries[slot]
        guard let instance = entry.instance else { return finish(slot, in: run) }
        entry.inFlight = true
        entry.worker = worker
        entry.shutdownRun = run
        if let deadline = run.deadline { entry.deadlineID = deadlines.add(after: deadline, tag: slot) }
        await instance.shutdown()
        guard entry.endCall(deadlines) != nil else { return }
        finish(slot, in: run)
    }

    /// A shutdown ran past its deadline: the service is destroyed without waiting further, and its
    /// worker is given up.
    func shutdownTimedOut(_ slot: Slot, in run: ShutdownRun) {
        guard let worker = entries[slot].endCall(deadlines) else { return }
        if let worker { run.pool?.abandon(worker) }
        finish(slot, in: run)
    }

    /// The service in `slot` has shut down (or ran out of time): destroy it and release what
    /// depends on nothing else still running.
    private func finish(_ slot: Slot, in run: ShutdownRun) {
        entries[slot].shutdownRun = nil
        if let instance = entries[slot].instance {
            instance.willDestroy()
            entries[slot].instance = nil
        }
        // A started one's dependents wait for it again.
        graph.markDestroyed(slot)
        graph.forEachDependency(of: slot) { dependency in
            guard run.isMember[dependency] else { return }
            run.pendingDependents[dependency] -= 1
            if run.pendingDependents[dependency] == 0 { run.pool?.add(dependency) }
        }
        run.remaining -= 1
        if run.remaining == 0, let finished = run.finished {
            run.finished = nil
            finished.resume()
        }
    }
}
