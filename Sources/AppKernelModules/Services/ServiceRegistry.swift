public import AppKernel

/// The services of an application: registration, dependency-ordered parallel start, lookups,
/// readiness and shutdown. Reached through ``Context``.
///
/// Start rules: dependencies first; independent services start concurrently, each as soon as its last
/// dependency has started (Kahn's algorithm, O(services + edges)); a cycle or missing dependency is
/// reported, with its path (`A → B → C → A`), before anything starts; each service starts exactly once,
/// even when lookups race for a lazy one; a failing service fails the boot (naming it and the chain that
/// needed it) or is marked failed and skipped, per its policy, and what needs it fails with
/// `dependencyFailed` in one pass, O(services + edges); per-service and whole-boot deadlines run on the
/// application's clock (one timer for all); shutdown runs dependents first, newest start first, with
/// bounded concurrency, each `willDestroy` once. The graph itself is a plain value (`ServiceGraph`).
@MainActor
public final class ServiceRegistry {
    typealias Slot = ServiceGraph.Slot

    /// The application the services belong to; `nil` once it has been freed.
    ///
    /// The registry does not keep it alive: the application owns its BootLoader, which owns the
    /// ``Context``, which owns the registry, so a strong reference back would make a cycle and no
    /// application with services would be freed. Deadlines run on the application's clock, which
    /// the registry keeps: a shutdown that outlives the application still times out. Once it is
    /// gone, refused registrations are not reported as diagnostics; ``lastRegistrationError`` says why.
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
    /// Why the last registration was refused.
    public private(set) var lastRegistrationError: ServiceError?

    // No run-time exclusivity checks on the graph and the entries (by slot): 13–15% of a start of 1,000.
    // Every access is instantaneous, on the main actor: no call out (factory, `didCreate`, start) runs
    // inside one; the only closures run inside one (`markFailed`'s, `neededByWalk`'s) read `entries`
    // while `graph` is open. The sanitizer legs' `APPKERNEL_CHECKED_EXCLUSIVITY` checks them again.
    #if APPKERNEL_CHECKED_EXCLUSIVITY
    var graph = ServiceGraph()
    var entries: [Entry] = []
    #else
    @exclusivity(unchecked) var graph = ServiceGraph()
    @exclusivity(unchecked) var entries: [Entry] = []
    #endif
    /// The failures and the chains their errors name, shared by those errors.
    let failures = ServiceFailureLog()
    /// The deadlines of the starts and shutdowns under way, behind one timer; tagged by slot.
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
        starts = WorkerPool { slot, worker in await link.registry?.start(slot, worker: worker) }
        link.registry = self
    }

    /// The way back to the registry for the closures its deadline queue and start pool keep.
    private final class Link { weak var registry: ServiceRegistry? }

    /// One service: its registration, instance, call whose outcome counts, runs waiting, failure, chain link.
    struct Entry {
        let mode: ServiceStartMode
        let policy: ServiceFailurePolicy
        let factory: @MainActor () -> any Service
        let startDeadline: Duration?
        var instance: (any Service)?
        var call: Call?
        var runs = WaitingRuns()
        var failure: Int?
        var chainLink: (version: Int, link: Int)?
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
        let startDeadline = deadline ?? defaultStartDeadline
        entries.append(Entry(mode: startMode, policy: failurePolicy, factory: factory, startDeadline: startDeadline))
        return true
    }

    /// Registers an existing service instance (mPaaS's `registerService:forName:`): found at once
    /// by ``findService(named:)`` (the app made it, so it is not told `didCreate`), started with the
    /// eager services — or at once, when the services have started already.
    @discardableResult
    public func register(_ service: any Service, forName name: String, dependencies: [String] = []) -> Bool {
        guard register(named: name, dependencies: dependencies, factory: { service }),
              let slot = graph.slot(named: name) else { return false }
        entries[slot].instance = service
        if bootFinished { Task { _ = try? await self.service(named: name) } }
        return true
    }

    /// Unregisters a service; a created one is told `willDestroy`, a start under way is cancelled,
    /// and lookups waiting for it fail with ``ServiceError/Code/unknown``. Its slot stays as a
    /// tombstone, so no other service's slot moves.
    public func unregisterService(named name: String) {
        guard let (slot, state) = graph.unregister(name) else { return }
        if state == .starting, let worker = endCall(slot)?.worker { starts.abandon(worker) }
        settle(slot, error: ServiceError(code: .unknown, service: name))
        if let instance = entries[slot].instance, state != .destroyed { instance.willDestroy() }
        entries[slot].instance = nil
        startedSlots.removeAll { $0 == slot }
    }

    /// The registered names, in registration order.
    public var registeredNames: [String] { graph.registeredSlots.map(graph.name(of:)) }

    /// A service's state; `nil` if unknown. O(1): a failure's reason is its error's
    /// ``ServiceError/description``, whose chain is written in bounded time.
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
    /// O(1): the error shares its chain and cause with the registry's other failures.
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
    /// instance the app registered (``register(_:forName:dependencies:)``); a lazy service on first
    /// use, made now (when everything it needs has started) and its start begun, as in mPaaS (await
    /// ``service(named:)`` for it to finish). `nil` for an unknown or failed service, and for a lazy
    /// one whose dependencies are still to start (their start is begun too).
    public func findService(named name: String) -> (any Service)? {
        guard let slot = graph.slot(named: name) else { return nil }
        let state = graph.state(of: slot)
        if state == .started { return entries[slot].instance }
        guard state == .registered || state == .starting else { return nil }
        if state == .registered, case .lazy = entries[slot].mode {
            let dependenciesStarted = graph.dependencies(of: slot).allSatisfy { graph.state(of: $0) == .started }
            if entries[slot].instance == nil, dependenciesStarted { create(slot) }
            Task { _ = try? await self.service(named: name) }
        }
        return entries[slot].instance
    }

    /// The service, started (with its dependencies) if it was not — exactly once, however many
    /// lookups race.
    /// - Throws: ``ServiceError``.
    public func service(named name: String) async throws(ServiceError) -> any Service {
        guard let slot = graph.slot(named: name) else { throw ServiceError(code: .unknown, service: name) }
        if graph.state(of: slot) != .started { try await start([slot]) }
        // It may have been unregistered meanwhile.
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

    /// Starts the eager services and `groups`; `finishingBoot: false` leaves ``servicesReady()`` waiting.
    func startServices(groups: [String], finishingBoot: Bool) async throws(ServiceError) {
        bootFinished = false
        do throws(ServiceError) {
            try await start(graph.eagerSlots + slots(inGroups: groups), deadline: bootDeadline)
            if finishingBoot { finishBoot(error: nil) }
        } catch {
            finishBoot(error: error)
            throw error
        }
    }

    /// Starts the services of `groups` (in order) with their dependencies, and nothing else.
    func startGroups(_ groups: [String]) async throws(ServiceError) {
        let roots = slots(inGroups: groups)
        guard !roots.isEmpty else { return }
        try await start(roots)
    }

    /// The services of `groups`, group by group, each group's in registration order.
    private func slots(inGroups groups: [String]) -> [Slot] {
        guard !groups.isEmpty else { return [] }
        let registered = graph.registeredSlots
        return groups.flatMap { group in registered.filter { entries[$0].mode == .group(group) } }
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
        for waiter in bootReady { waiter.resume() }
        bootReady.removeAll()
    }

    // MARK: Shutdown

    /// Shuts the started services down, dependents first: a service's ``Service/shutdown()`` begins
    /// once every started service that depends on it has shut down; of those ready, the newest start
    /// goes first (services that do not suspend go in exact reverse order of their starts), up to
    /// ``maxConcurrentShutdowns`` at once (each that suspends lets the next begin). Each is awaited at
    /// most `deadline` on the application's clock (`nil`: as long as it takes), then told
    /// `willDestroy`, once. A later start (a relaunch) makes and starts new instances.
    public func shutdown(deadline: Duration? = .seconds(5)) async {
        let order = startedSlots.reversed().filter { graph.state(of: $0) == .started }
        startedSlots.removeAll()
        guard !order.isEmpty else { return }
        let run = ShutdownRun(deadline: deadline, order: order, slotCount: graph.slotCount)
        // For each, its started dependents: it goes once they all have.
        run.pendingDependents = order.map { slot in graph.nodes[slot].dependents.count { run.rank(of: $0) != nil } }
        let pool = WorkerPool(limit: max(1, maxConcurrentShutdowns), lowestFirst: true) { [weak self] rank, worker in
            await self?.shutDown(rank, in: run, worker: worker)
        }
        run.pool = pool
        for rank in order.indices where run.pendingDependents[rank] == 0 { pool.add(rank) }
        await withCheckedContinuation { run.done = $0 }
        run.pool = nil
        deadlines.releaseTimerIfIdle()
    }
}
