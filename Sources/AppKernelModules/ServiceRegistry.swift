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
    final class Entry {
        let name: String
        let dependencies: [String]
        let mode: ServiceStartMode
        let policy: ServiceFailurePolicy
        let deadline: Duration?
        let factory: @MainActor () -> any Service
        var instance: (any Service)?
        var state: ServiceState = .registered
        var task: Task<Void, Never>?
        var race: DeadlineRace?
        /// The runs waiting for this service (it is wanted while any is).
        var waitingRuns = RunList()
        /// The registered dependencies' entries, in `dependencies` order (fewer while one is
        /// missing); kept up to date by registration. Unowned: the registry owns every entry, and
        /// strong links down a long chain would release recursively (100,000 deep overflows the stack).
        var resolvedDependencies: [Unowned] = []
        /// The registered services that depend on this one.
        var dependentEntries: [Unowned] = []
        /// How many resolved dependencies have not started: at zero (and with every dependency
        /// resolved) the service may start — checked without touching the dependencies.
        var unstartedDependencies = 0
        /// The dependent whose start first needed this one (for error chains).
        var neededBy: String?
        /// The closure pass that last visited it (`visiting` or `visited` of that pass).
        var mark = 0

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

    /// An entry referred to by another.
    struct Unowned {
        unowned let entry: Entry
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
        /// The services it waits for.
        let waitingFor: [Entry]
        /// How many of them have not settled.
        var remaining: Int
        var error: ServiceError?
        var continuation: CheckedContinuation<Void, Never>?
        init(waitingFor: [Entry]) {
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

    private var entries: [String: Entry] = [:]
    private var registrationOrder: [Entry] = []
    private var dependents: [String: [String]] = [:]
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
        guard entries[name] == nil else {
            let error = ServiceError(code: .duplicate, service: name)
            lastRegistrationError = error
            application.reportDiagnostic(.moduleRefused, subject: "services", message: error.description)
            return false
        }
        var seen: Set<String> = []
        let unique = dependencies.filter { seen.insert($0).inserted }
        let entry = Entry(name: name, dependencies: unique, mode: startMode, policy: failurePolicy,
                          deadline: deadline ?? defaultStartDeadline, factory: factory)
        entries[name] = entry
        registrationOrder.append(entry)
        for dependency in unique {
            dependents[dependency, default: []].append(name)
            entries[dependency]?.dependentEntries.append(Unowned(entry: entry))
        }
        resolve(entry)
        // Services registered earlier that named this one now resolve it.
        for dependent in dependents[name] ?? [] {
            guard let dependentEntry = entries[dependent], dependentEntry !== entry else { continue }
            entry.dependentEntries.append(Unowned(entry: dependentEntry))
            resolve(dependentEntry)
        }
        return true
    }

    /// Resolves `entry`'s dependencies to the registered entries.
    private func resolve(_ entry: Entry) {
        entry.resolvedDependencies = entry.dependencies.compactMap { entries[$0].map(Unowned.init) }
        entry.unstartedDependencies = entry.resolvedDependencies.count { $0.entry.state != .started }
    }

    /// Registers an existing service instance (mPaaS's `registerService:forName:`), started with
    /// the eager services.
    @discardableResult
    public func register(_ service: any Service, forName name: String, dependencies: [String] = []) -> Bool {
        register(named: name, dependencies: dependencies) { service }
    }

    /// Why the last registration was refused.
    public private(set) var lastRegistrationError: ServiceError?

    /// Unregisters a service; a created one is told `willDestroy`.
    public func unregisterService(named name: String) {
        guard let entry = entries.removeValue(forKey: name) else { return }
        registrationOrder.removeAll { $0 === entry }
        for dependency in entry.dependencies {
            dependents[dependency]?.removeAll { $0 == name }
            entries[dependency]?.dependentEntries.removeAll { $0.entry === entry }
        }
        for dependent in entry.dependentEntries where dependent.entry !== entry { resolve(dependent.entry) }
        entry.dependentEntries.removeAll()
        entry.resolvedDependencies.removeAll()
        if let instance = entry.instance, entry.state != .destroyed { instance.willDestroy() }
        entry.state = .destroyed
        startOrder.removeAll { $0 == name }
    }

    /// The registered names, in registration order.
    public var registeredNames: [String] { registrationOrder.map(\.name) }

    /// A service's state; `nil` if unknown.
    public func state(of name: String) -> ServiceState? { entries[name]?.state }

    // MARK: Lookup

    /// A started service, at once; `nil` if unknown or not started. A lazy service that has not
    /// started begins starting (use ``service(named:)`` to wait for it).
    public func findService(named name: String) -> (any Service)? {
        guard let entry = entries[name] else { return nil }
        if entry.state == .started { return entry.instance }
        if case .lazy = entry.mode, entry.state == .registered { Task { _ = try? await self.service(named: name) } }
        return nil
    }

    /// The service, started (with its dependencies) if it was not — exactly once, however many
    /// lookups race.
    /// - Throws: ``ServiceError``.
    public func service(named name: String) async throws(ServiceError) -> any Service {
        guard let entry = entries[name] else { throw ServiceError(code: .unknown, service: name) }
        if entry.state != .started { try await start([entry]) }
        guard entry.state == .started, let instance = entry.instance else {
            if case .failed(let reason) = entry.state { throw ServiceError(code: .startFailed, service: name, path: [name], detail: reason) }
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
        var roots = registrationOrder.filter { if case .eager = $0.mode { true } else { false } }
        for group in groups {
            roots += registrationOrder.filter { if case .group(group) = $0.mode { true } else { false } }
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
    private func start(_ roots: [Entry], deadline: Duration? = nil) async throws(ServiceError) {
        let needed = try closure(of: roots)
        let run = Run(waitingFor: needed.filter { $0.state != .started && !Self.isFailed($0) })
        if let failure = needed.lazy.compactMap({ self.failure(of: $0) }).first { throw failure }
        guard run.remaining > 0 else { return }
        for entry in run.waitingFor { entry.waitingRuns.append(run) }
        var timer: ScheduledTimer?
        if let deadline {
            timer = application.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { $0.waitingRuns.contains(run) }.map(\.name).sorted().joined(separator: ", ")
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: starting, detail: "\(deadline)"))
            }
        }
        for entry in needed { if let ready = prepare(entry) { launch(ready) } }
        // Starts finish on later turns of the main actor; failures of dependencies can be known now.
        if run.remaining > 0 && run.error == nil {
            await withCheckedContinuation { run.continuation = $0 }
        }
        timer?.cancel()
        for entry in run.waitingFor where !entry.waitingRuns.isEmpty { entry.waitingRuns.remove(run) }
        if let error = run.error { throw error }
    }

    private static func isFailed(_ entry: Entry) -> Bool {
        if case .failed = entry.state { return true }
        return false
    }

    /// A failed `failLaunch` service among those needed fails the new run at once.
    private func failure(of entry: Entry) -> ServiceError? {
        guard case .failed(let reason) = entry.state, entry.policy == .failLaunch else { return nil }
        return ServiceError(code: .startFailed, service: entry.name, path: chain(to: entry.name), detail: reason)
    }

    /// The services `roots` need, dependencies before dependents; checks for missing
    /// dependencies and cycles (iteratively: chains may be long). Marks on the entries replace a
    /// visited set; the walk follows the resolved links, so it hashes nothing.
    /// - Parameter recordingChains: Note who first needed each service, for error chains (a
    ///   start does; a mere check does not).
    private func closure(of roots: [Entry], recordingChains: Bool = true) throws(ServiceError) -> [Entry] {
        markGeneration += 2
        let visiting = markGeneration, visited = markGeneration + 1
        var ordered: [Entry] = []
        for root in roots where root.mark < visiting {
            root.mark = visiting
            var stack: [(entry: Entry, next: Int)] = [(root, 0)]
            while let top = stack.last {
                let entry = top.entry
                if top.next == 0, entry.resolvedDependencies.count != entry.dependencies.count {
                    let missing = entry.dependencies.first { entries[$0] == nil } ?? ""
                    throw ServiceError(code: .missingDependency, service: entry.name, path: stack.map(\.entry.name) + [missing], detail: missing)
                }
                guard top.next < entry.resolvedDependencies.count else {
                    entry.mark = visited
                    ordered.append(entry)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let dependency = entry.resolvedDependencies[top.next].entry
                if recordingChains && dependency.neededBy == nil { dependency.neededBy = entry.name }
                if dependency.mark == visiting {
                    let path = stack.map(\.entry.name)
                    let start = path.firstIndex(of: dependency.name) ?? 0
                    throw ServiceError(code: .cycle, service: dependency.name, path: Array(path[start...]) + [dependency.name])
                }
                guard dependency.mark != visited else { continue }
                dependency.mark = visiting
                stack.append((dependency, 0))
            }
        }
        return ordered
    }

    /// Checks every registered service's dependencies for cycles and missing names.
    func checkGraph() throws(ServiceError) {
        _ = try closure(of: registrationOrder, recordingChains: false)
    }

    /// Who needed `name`, back to the root: `root → … → name`.
    private func chain(to name: String) -> [String] {
        var path = [name]
        var seen: Set<String> = [name]
        while let parent = entries[path[0]]?.neededBy, !seen.contains(parent) {
            path.insert(parent, at: 0)
            seen.insert(parent)
        }
        return path
    }

    /// Makes `entry` ready to start — created, `.starting`, its deadline running — if it is
    /// wanted, registered, and all its dependencies have started; fails it if one failed.
    /// - Returns: The entry to start, or `nil`.
    private func prepare(_ entry: Entry) -> Entry? {
        let name = entry.name
        guard entry.state == .registered, entry.resolvedDependencies.count == entry.dependencies.count,
              !entry.waitingRuns.isEmpty else { return nil }
        if entry.unstartedDependencies > 0 {
            if let failed = entry.resolvedDependencies.first(where: { Self.isFailed($0.entry) })?.entry {
                _ = fail(entry, ServiceError(code: .dependencyFailed, service: name, path: chain(to: name), detail: failed.name))
            }
            return nil
        }
        entry.state = .starting
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
                let error = ServiceError(code: .timedOut, service: entry.name, path: self.chain(to: entry.name), detail: "\(deadline)")
                _ = self.fail(entry, error)
            }
        }
        return entry
    }

    /// Starts `entry` in a new task.
    private func launch(_ entry: Entry) {
        let worker = Worker()
        worker.task = Task { @MainActor [weak self] in await self?.run(entry, worker: worker) }
        entry.task = worker.task
    }

    /// Starts `first`, then — in the same task, without a hop — the first service its start made
    /// ready (a dependency chain runs as one task); other ready services get tasks of their own.
    private func run(_ first: Entry, worker: Worker) async {
        var current: Entry? = first
        while let entry = current {
            current = nil
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
            let keep = !Task.isCancelled
            switch outcome {
            case .success:
                current = started(entry, keepingFirstReady: keep)
            case .failure(let error):
                let failure = ServiceError(code: .startFailed, service: entry.name, path: chain(to: entry.name), detail: "\(error)")
                current = fail(entry, failure, keepingFirstReady: keep)
            }
            current?.task = worker.task
        }
    }

    /// The services the start or failure of `entry` made ready.
    private func started(_ entry: Entry, keepingFirstReady: Bool = false) -> Entry? {
        entry.state = .started
        startOrder.append(entry.name)
        settle(entry, error: nil)
        var kept: Entry?
        for dependent in entry.dependentEntries {
            let dependentEntry = dependent.entry
            dependentEntry.unstartedDependencies -= 1
            guard dependentEntry.unstartedDependencies == 0, let ready = prepare(dependentEntry) else { continue }
            if keepingFirstReady && kept == nil { kept = ready } else { launch(ready) }
        }
        return kept
    }

    private func fail(_ entry: Entry, _ error: ServiceError, keepingFirstReady: Bool = false) -> Entry? {
        entry.state = .failed(error.description)
        settle(entry, error: entry.policy == .failLaunch ? error : nil)
        return prepareDependents(of: entry, keepingFirst: keepingFirstReady)
    }

    /// Prepares the dependents `entry` made ready and launches them — all, or all but the first,
    /// which is returned for the caller's task to start next.
    private func prepareDependents(of entry: Entry, keepingFirst: Bool) -> Entry? {
        var kept: Entry?
        for dependent in entry.dependentEntries {
            guard let ready = prepare(dependent.entry) else { continue }
            if keepingFirst && kept == nil { kept = ready } else { launch(ready) }
        }
        return kept
    }

    /// `entry` stopped being started: its dependents wait for it again.
    private func unstarted(_ entry: Entry) {
        for dependent in entry.dependentEntries { dependent.entry.unstartedDependencies += 1 }
    }

    /// Tells the runs waiting for `entry`.
    private func settle(_ entry: Entry, error: ServiceError?) {
        let (first, rest) = entry.waitingRuns.takeAll()
        if let first { settle(first, error: error) }
        for run in rest { settle(run, error: error) }
    }

    /// One of the services `run` waits for has settled.
    private func settle(_ run: Run, error: ServiceError?) {
        run.remaining -= 1
        if let error, run.error == nil { run.error = error }
        checkDone(run)
    }

    private func checkDone(_ run: Run) {
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
    /// told `willDestroy`, once.
    public func shutdown(deadline: Duration = .seconds(5)) async {
        for name in startOrder.reversed() {
            guard let entry = entries[name], let instance = entry.instance, entry.state != .destroyed else { continue }
            _ = await application.run(withDeadline: deadline) { await instance.shutdown() }
            instance.willDestroy()
            if entry.state == .started { unstarted(entry) }
            entry.state = .destroyed
        }
        startOrder.removeAll()
    }
}
