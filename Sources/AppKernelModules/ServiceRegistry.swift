import AppKernel

/// The services of an application: registration, dependency-ordered parallel start, lookups,
/// readiness and shutdown. Reached through ``Context``.
///
/// Start rules: dependencies first; independent services start concurrently (each as soon as
/// its last dependency has started — Kahn's algorithm, O(services + edges)); a cycle or a
/// missing dependency is reported before anything starts, with its path (`A → B → C → A`); each
/// service starts exactly once, even when several lookups race for a lazy one; a failing service
/// fails the boot (naming it and the chain that needed it) or is marked failed and skipped, per
/// its policy; per-service and whole-boot deadlines run on the application's clock; shutdown runs
/// in exact reverse order of completed starts, each `willDestroy` once.
@MainActor
public final class ServiceRegistry {
    /// Where a service is, in one byte (``ServiceState`` without the failure reason).
    enum Phase: UInt8 {
        case registered, starting, started, failed, destroyed
        /// Unregistered: the slot is a tombstone (slots are never reused, so indices stay valid).
        case unregistered
    }

    /// The scheduling state of one service, kept with every other service's in one contiguous
    /// array (`nodes`, indexed by slot), so the passes over thousands of services during a start
    /// read a few dozen bytes each instead of chasing objects across the heap.
    struct Node {
        var phase = Phase.registered
        /// Whether every dependency is registered (no `-1` among its dependency slots).
        var isResolved = false
        /// Whether it starts with the eager services (``ServiceStartMode/eager``).
        let startsEagerly: Bool
        /// The closure pass that last visited it (`visiting` or `visited` of that pass).
        var mark = 0
        /// How many resolved dependencies have not started: at zero (and with every dependency
        /// resolved) the service may start — checked without touching the dependencies.
        var unstartedDependencies = 0
        /// How many resolved dependencies have failed (a dependent of a failed one fails, too).
        var failedDependencies = 0
        /// The dependent whose start first needed this one (for error chains); `-1`: none.
        var neededBy = -1
        /// Its dependencies: `dependencySlots[firstDependency ..< firstDependency + dependencyCount]`
        /// hold their slots, in declaration order (`-1` while one is not registered).
        let firstDependency: Int
        let dependencyCount: Int
        /// The head of its list of dependents in `dependentEdges`; `-1`: none.
        var firstDependent = -1
        /// The runs waiting for it (it is wanted while any is).
        var waitingRuns = RunList()
    }

    /// One link in a service's list of dependents.
    struct DependentEdge {
        var dependent: Int
        var next: Int
    }

    /// What a service was registered with, and what its start creates — read when it starts,
    /// not by the passes over all services.
    final class Entry {
        let name: String
        let dependencies: [String]
        let mode: ServiceStartMode
        let policy: ServiceFailurePolicy
        let deadline: Duration?
        let factory: @MainActor () -> any Service
        var instance: (any Service)?
        /// Why it failed (its phase is `.failed`).
        var failureReason = ""
        var task: Task<Void, Never>?
        var race: DeadlineRace?

        init(name: String, dependencies: [String], mode: ServiceStartMode, policy: ServiceFailurePolicy, deadline: Duration?,
             factory: @escaping @MainActor () -> any Service) {
            self.name = name
            self.dependencies = dependencies
            self.mode = mode
            self.policy = policy
            self.deadline = deadline
            self.factory = factory
        }
    }

    /// The task that starts services one after another down a chain.
    final class Worker {
        var task: Task<Void, Never>?
    }

    /// The runs waiting for one service: almost always one, kept without an array.
    struct RunList {
        private var first: Run?
        private var rest: [Run] = []
        var isEmpty: Bool { first == nil }
        func contains(_ run: Run) -> Bool { first === run || rest.contains { $0 === run } }
        mutating func append(_ run: Run) {
            if first == nil { first = run } else { rest.append(run) }
        }
        mutating func remove(_ run: Run) {
            if first === run { first = rest.isEmpty ? nil : rest.removeFirst() } else { rest.removeAll { $0 === run } }
        }
        /// Empties the list, returning what it held (without building an array for the usual one).
        mutating func takeAll() -> (first: Run?, rest: [Run]) {
            defer { first = nil; rest = [] }
            return (first, rest)
        }
    }

    /// One call's wait for a set of services.
    final class Run {
        /// The slots of the services it waits for.
        let waitingFor: [Int]
        /// How many of them have not settled.
        var remaining: Int
        var error: ServiceError?
        var continuation: CheckedContinuation<Void, Never>?
        init(waitingFor: [Int]) {
            self.waitingFor = waitingFor
            remaining = waitingFor.count
        }
    }

    /// The application (its clock measures deadlines).
    public let application: Application
    /// How long one service may take to start when it names no deadline; `nil`: no limit. Default 20 s.
    public var defaultStartDeadline: Duration? = .seconds(20)
    /// How long a whole `startServices` may take; `nil`: no limit.
    public var bootDeadline: Duration?
    /// The services in the order their starts completed.
    public private(set) var startOrder: [String] = []

    /// The services by slot (unregistered ones stay as tombstones), in registration order.
    private var entries: [Entry] = []
    private var nodes: [Node] = []
    /// Every service's dependency slots, each service's in one run (see ``Node``).
    private var dependencySlots: [Int] = []
    /// The dependents lists' links; freed links are reused through `freeEdge`.
    private var dependentEdges: [DependentEdge] = []
    private var freeEdge = -1
    /// The slot of each registered name.
    private var slots: [String: Int] = [:]
    /// The services that name each dependency (registered or not yet), by slot.
    private var dependents: [String: [Int]] = [:]
    private var markGeneration = 0
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
        guard slots[name] == nil else {
            let error = ServiceError(code: .duplicate, service: name)
            lastRegistrationError = error
            application.reportDiagnostic(.moduleRefused, subject: "services", message: error.description)
            return false
        }
        var seen: Set<String> = []
        let unique = dependencies.filter { seen.insert($0).inserted }
        let slot = entries.count
        entries.append(Entry(name: name, dependencies: unique, mode: startMode, policy: failurePolicy,
                             deadline: deadline ?? defaultStartDeadline, factory: factory))
        nodes.append(Node(startsEagerly: startMode == .eager, firstDependency: dependencySlots.count, dependencyCount: unique.count))
        slots[name] = slot
        for dependency in unique {
            dependencySlots.append(-1)
            dependents[dependency, default: []].append(slot)
        }
        resolve(slot)
        // Services registered earlier that named this one now resolve it.
        for dependent in dependents[name] ?? [] where dependent != slot { resolve(dependent) }
        return true
    }

    /// Links `slot`'s dependency slots that are unresolved to the registered services, then
    /// recounts its unresolved, unstarted and failed dependencies.
    private func resolve(_ slot: Int) {
        let node = nodes[slot]
        let names = entries[slot].dependencies
        for position in 0..<node.dependencyCount where dependencySlots[node.firstDependency + position] < 0 {
            guard let dependency = slots[names[position]] else { continue }
            dependencySlots[node.firstDependency + position] = dependency
            addDependent(slot, to: dependency)
        }
        recount(slot)
    }

    private func recount(_ slot: Int) {
        var resolved = true, unstarted = 0, failed = 0
        for dependency in dependencySlots[nodes[slot].firstDependency ..< nodes[slot].firstDependency + nodes[slot].dependencyCount] {
            guard dependency >= 0 else { resolved = false; continue }
            if nodes[dependency].phase != .started { unstarted += 1 }
            if nodes[dependency].phase == .failed { failed += 1 }
        }
        nodes[slot].isResolved = resolved
        nodes[slot].unstartedDependencies = unstarted
        nodes[slot].failedDependencies = failed
    }

    private func addDependent(_ dependent: Int, to dependency: Int) {
        let link = DependentEdge(dependent: dependent, next: nodes[dependency].firstDependent)
        if freeEdge >= 0 {
            let reused = freeEdge
            freeEdge = dependentEdges[reused].next
            dependentEdges[reused] = link
            nodes[dependency].firstDependent = reused
        } else {
            dependentEdges.append(link)
            nodes[dependency].firstDependent = dependentEdges.count - 1
        }
    }

    private func removeDependent(_ dependent: Int, from dependency: Int) {
        var previous = -1, edge = nodes[dependency].firstDependent
        while edge >= 0, dependentEdges[edge].dependent != dependent {
            previous = edge
            edge = dependentEdges[edge].next
        }
        guard edge >= 0 else { return }
        if previous >= 0 { dependentEdges[previous].next = dependentEdges[edge].next } else { nodes[dependency].firstDependent = dependentEdges[edge].next }
        dependentEdges[edge].next = freeEdge
        freeEdge = edge
    }

    /// The slots of `slot`'s dependents.
    private func dependentSlots(of slot: Int) -> [Int] {
        var result: [Int] = []
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            result.append(dependentEdges[edge].dependent)
            edge = dependentEdges[edge].next
        }
        return result
    }

    /// Registers an existing service instance (mPaaS's `registerService:forName:`), started with
    /// the eager services.
    @discardableResult
    public func register(_ service: any Service, forName name: String, dependencies: [String] = []) -> Bool {
        register(named: name, dependencies: dependencies) { service }
    }

    /// Why the last registration was refused.
    public private(set) var lastRegistrationError: ServiceError?

    /// Unregisters a service; a created one is told `willDestroy`, a start under way is cancelled,
    /// and lookups waiting for it fail with ``ServiceError/Code/unknown``. Its slot stays as a
    /// tombstone (a few dozen bytes), so no other service's links move.
    public func unregisterService(named name: String) {
        guard let slot = slots.removeValue(forKey: name) else { return }
        let entry = entries[slot]
        let node = nodes[slot]
        for (position, dependency) in entry.dependencies.enumerated() {
            dependents[dependency]?.removeAll { $0 == slot }
            let linked = dependencySlots[node.firstDependency + position]
            if linked >= 0 { removeDependent(slot, from: linked) }
        }
        for dependent in dependentSlots(of: slot) {
            let dependentNode = nodes[dependent]
            for position in dependentNode.firstDependency ..< dependentNode.firstDependency + dependentNode.dependencyCount
            where dependencySlots[position] == slot {
                dependencySlots[position] = -1
            }
            removeDependent(dependent, from: slot)
            recount(dependent)
        }
        // A start under way is abandoned; whoever waits for it learns it is gone.
        if node.phase == .starting {
            _ = entry.race?.settle()
            entry.task?.cancel()
        }
        nodes[slot].phase = .unregistered
        settle(slot, error: ServiceError(code: .unknown, service: name))
        if let instance = entry.instance, node.phase != .destroyed { instance.willDestroy() }
        entry.instance = nil
        startOrder.removeAll { $0 == name }
    }

    /// The registered names, in registration order.
    public var registeredNames: [String] { registeredSlots.map { entries[$0].name } }

    private var registeredSlots: [Int] { nodes.indices.filter { nodes[$0].phase != .unregistered } }

    /// A service's state; `nil` if unknown.
    public func state(of name: String) -> ServiceState? { slots[name].map(state(ofSlot:)) }

    private func state(ofSlot slot: Int) -> ServiceState {
        switch nodes[slot].phase {
        case .registered, .unregistered: .registered
        case .starting: .starting
        case .started: .started
        case .failed: .failed(entries[slot].failureReason)
        case .destroyed: .destroyed
        }
    }

    // MARK: Lookup

    /// A started service, at once; `nil` if unknown or not started. A lazy service that has not
    /// started begins starting (use ``service(named:)`` to wait for it).
    public func findService(named name: String) -> (any Service)? {
        guard let slot = slots[name] else { return nil }
        if nodes[slot].phase == .started { return entries[slot].instance }
        if case .lazy = entries[slot].mode, nodes[slot].phase == .registered { Task { _ = try? await self.service(named: name) } }
        return nil
    }

    /// The service, started (with its dependencies) if it was not — exactly once, however many
    /// lookups race.
    /// - Throws: ``ServiceError``.
    public func service(named name: String) async throws(ServiceError) -> any Service {
        guard let slot = slots[name] else { throw ServiceError(code: .unknown, service: name) }
        if nodes[slot].phase != .started { try await start([slot]) }
        // The service may have been unregistered while it started.
        guard slots[name] == slot, nodes[slot].phase == .started, let instance = entries[slot].instance else {
            if slots[name] == slot, nodes[slot].phase == .failed {
                throw ServiceError(code: .startFailed, service: name, path: [name], detail: entries[slot].failureReason)
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
        var roots = nodes.indices.filter { nodes[$0].startsEagerly && nodes[$0].phase != .unregistered }
        for group in groups {
            roots += registeredSlots.filter { if case .group(group) = entries[$0].mode { true } else { false } }
        }
        do throws(ServiceError) {
            try await start(roots, deadline: bootDeadline)
            if finishingBoot { finishBoot(error: nil) }
        } catch {
            finishBoot(error: error)
            throw error
        }
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

    /// Starts `roots` and everything they need; returns when all are started or failed.
    private func start(_ roots: [Int], deadline: Duration? = nil) async throws(ServiceError) {
        let needed = try closure(of: roots)
        var waiting: [Int] = []
        waiting.reserveCapacity(needed.count)
        for slot in needed {
            switch nodes[slot].phase {
            case .started: continue
            case .failed:
                // A failed `failLaunch` service among those needed fails the new run at once.
                if entries[slot].policy == .failLaunch {
                    throw ServiceError(code: .startFailed, service: entries[slot].name, path: chain(to: slot), detail: entries[slot].failureReason)
                }
            default: waiting.append(slot)
            }
        }
        guard !waiting.isEmpty else { return }
        let run = Run(waitingFor: waiting)
        for slot in waiting { nodes[slot].waitingRuns.append(run) }
        var timer: ScheduledTimer?
        if let deadline {
            timer = application.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { self.nodes[$0].waitingRuns.contains(run) }.map { self.entries[$0].name }
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: starting.sorted().joined(separator: ", "), detail: "\(deadline)"))
            }
        }
        for slot in waiting { if let ready = prepare(slot) { launch(ready) } }
        // Starts finish on later turns of the main actor; failures of dependencies can be known now.
        if run.remaining > 0 && run.error == nil {
            await withCheckedContinuation { run.continuation = $0 }
        }
        timer?.cancel()
        for slot in run.waitingFor where !nodes[slot].waitingRuns.isEmpty { nodes[slot].waitingRuns.remove(run) }
        if let error = run.error { throw error }
    }

    /// The services `roots` need, dependencies before dependents; checks for missing
    /// dependencies and cycles (iteratively: chains may be long). Marks on the nodes replace a
    /// visited set; the walk follows the dependency slots, so it hashes nothing.
    /// - Parameter recordingChains: Note who first needed each service, for error chains (a
    ///   start does; a mere check does not).
    private func closure(of roots: [Int], recordingChains: Bool = true) throws(ServiceError) -> [Int] {
        markGeneration += 2
        let visiting = markGeneration, visited = markGeneration + 1
        var ordered: [Int] = []
        var stack: [(slot: Int, next: Int)] = []
        for root in roots where nodes[root].mark < visiting {
            nodes[root].mark = visiting
            stack.append((root, 0))
            while let (slot, next) = stack.last {
                let node = (first: nodes[slot].firstDependency, count: nodes[slot].dependencyCount)
                if next == 0, !nodes[slot].isResolved {
                    let missing = entries[slot].dependencies.first { slots[$0] == nil } ?? ""
                    throw ServiceError(code: .missingDependency, service: entries[slot].name,
                                       path: stack.map { entries[$0.slot].name } + [missing], detail: missing)
                }
                guard next < node.count else {
                    nodes[slot].mark = visited
                    ordered.append(slot)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let dependency = dependencySlots[node.first + next]
                if recordingChains && nodes[dependency].neededBy < 0 { nodes[dependency].neededBy = slot }
                if nodes[dependency].mark == visiting {
                    let path = stack.map(\.slot)
                    let start = path.firstIndex(of: dependency) ?? 0
                    throw ServiceError(code: .cycle, service: entries[dependency].name,
                                       path: path[start...].map { entries[$0].name } + [entries[dependency].name])
                }
                guard nodes[dependency].mark != visited else { continue }
                nodes[dependency].mark = visiting
                stack.append((dependency, 0))
            }
        }
        return ordered
    }

    /// Checks every registered service's dependencies for cycles and missing names.
    func checkGraph() throws(ServiceError) {
        _ = try closure(of: registeredSlots, recordingChains: false)
    }

    /// Who needed the service in `slot`, back to the root: `root → … → name`.
    private func chain(to slot: Int) -> [String] {
        var path = [slot]
        var seen: Set<Int> = [slot]
        while case let parent = nodes[path[0]].neededBy, parent >= 0, nodes[parent].phase != .unregistered, seen.insert(parent).inserted {
            path.insert(parent, at: 0)
        }
        return path.map { entries[$0].name }
    }

    /// Makes the service in `slot` ready to start — created, `.starting`, its deadline running —
    /// if it is wanted, registered (or destroyed by a shutdown), and all its dependencies have started; fails it if one failed.
    /// Reads only its node until it is ready.
    /// - Returns: The slot to start, or `nil`.
    private func prepare(_ slot: Int) -> Int? {
        guard nodes[slot].phase == .registered || nodes[slot].phase == .destroyed, nodes[slot].isResolved,
              !nodes[slot].waitingRuns.isEmpty else { return nil }
        if nodes[slot].unstartedDependencies > 0 {
            if nodes[slot].failedDependencies > 0 {
                let start = nodes[slot].firstDependency
                let failed = dependencySlots[start ..< start + nodes[slot].dependencyCount].first { nodes[$0].phase == .failed } ?? slot
                let name = entries[slot].name
                _ = fail(slot, ServiceError(code: .dependencyFailed, service: name, path: chain(to: slot), detail: entries[failed].name))
            }
            return nil
        }
        nodes[slot].phase = .starting
        let entry = entries[slot]
        if entry.instance == nil {
            let instance = entry.factory()
            entry.instance = instance
            instance.didCreate()
        }
        if let deadline = entry.deadline {
            let race = DeadlineRace()
            entry.race = race
            race.timer = application.scheduleTimer(after: deadline) { [weak self] in
                guard race.settle(), let self else { return }
                entry.task?.cancel()
                let error = ServiceError(code: .timedOut, service: entry.name, path: self.chain(to: slot), detail: "\(deadline)")
                _ = self.fail(slot, error)
            }
        }
        return slot
    }

    /// Starts the service in `slot` in a new task.
    private func launch(_ slot: Int) {
        let worker = Worker()
        worker.task = Task { @MainActor [weak self] in await self?.run(slot, worker: worker) }
        entries[slot].task = worker.task
    }

    /// Starts `first`, then — in the same task, without a hop — the first service its start made
    /// ready (a dependency chain runs as one task); other ready services get tasks of their own.
    private func run(_ first: Int, worker: Worker) async {
        var current: Int? = first
        while let slot = current {
            current = nil
            let entry = entries[slot]
            guard let instance = entry.instance else { continue }
            let outcome: Result<Void, any Error>
            do {
                try await instance.start()
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            entry.task = nil
            guard entry.race?.settle() ?? true else { continue }
            entry.race = nil
            // Unregistered while it started: nothing waits for it any more.
            guard nodes[slot].phase == .starting else { continue }
            let keep = !Task.isCancelled
            switch outcome {
            case .success:
                current = started(slot, keepingFirstReady: keep)
            case .failure(let error):
                let failure = ServiceError(code: .startFailed, service: entry.name, path: chain(to: slot), detail: "\(error)")
                current = fail(slot, failure, keepingFirstReady: keep)
            }
            if let current { entries[current].task = worker.task }
        }
    }

    /// Marks `slot` started; returns the dependent it made ready that the caller's task starts
    /// next (when `keepingFirstReady`), launching the others.
    private func started(_ slot: Int, keepingFirstReady: Bool = false) -> Int? {
        nodes[slot].phase = .started
        startOrder.append(entries[slot].name)
        settle(slot, error: nil)
        var kept: Int?
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            let dependent = dependentEdges[edge].dependent
            edge = dependentEdges[edge].next
            nodes[dependent].unstartedDependencies -= 1
            guard nodes[dependent].unstartedDependencies == 0, let ready = prepare(dependent) else { continue }
            if keepingFirstReady && kept == nil { kept = ready } else { launch(ready) }
        }
        return kept
    }

    private func fail(_ slot: Int, _ error: ServiceError, keepingFirstReady: Bool = false) -> Int? {
        nodes[slot].phase = .failed
        entries[slot].failureReason = error.description
        let dependents = dependentSlots(of: slot)
        for dependent in dependents { nodes[dependent].failedDependencies += 1 }
        settle(slot, error: entries[slot].policy == .failLaunch ? error : nil)
        var kept: Int?
        for dependent in dependents {
            guard let ready = prepare(dependent) else { continue }
            if keepingFirstReady && kept == nil { kept = ready } else { launch(ready) }
        }
        return kept
    }

    /// Tells the runs waiting for the service in `slot`.
    private func settle(_ slot: Int, error: ServiceError?) {
        let (first, rest) = nodes[slot].waitingRuns.takeAll()
        if let first { settle(first, error: error) }
        for run in rest { settle(run, error: error) }
    }

    /// One of the services `run` waits for has settled.
    private func settle(_ run: Run, error: ServiceError?) {
        run.remaining -= 1
        if let error, run.error == nil { run.error = error }
        guard run.remaining == 0 || run.error != nil else { return }
        complete(run, error: run.error)
    }

    private func complete(_ run: Run, error: ServiceError?) {
        if run.error == nil { run.error = error }
        guard let continuation = run.continuation else { return }
        run.continuation = nil
        continuation.resume()
    }

    // MARK: Shutdown

    /// Shuts the started services down in exact reverse order of their completed starts: each is
    /// awaited (``Service/shutdown()``, at most `deadline` each on the application's clock), then
    /// told `willDestroy`, once. A later start (a relaunch) makes and starts new instances.
    public func shutdown(deadline: Duration = .seconds(5)) async {
        for name in startOrder.reversed() {
            guard let slot = slots[name], let instance = entries[slot].instance, nodes[slot].phase != .destroyed else { continue }
            _ = await application.run(withDeadline: deadline) { await instance.shutdown() }
            instance.willDestroy()
            entries[slot].instance = nil
            if nodes[slot].phase == .started {
                // Its dependents wait for it again.
                for dependent in dependentSlots(of: slot) { nodes[dependent].unstartedDependencies += 1 }
            }
            nodes[slot].phase = .destroyed
        }
        startOrder.removeAll()
    }
}
