import AppKernel

// The scheduler: drives the graph's Kahn's counters with tasks, deadlines on the application's
// clock, and the calls waiting for services. The graph says what became ready or failed; this
// file creates, starts, times and reports.
extension ServiceRegistry {
    /// What a service was registered with, and what its start creates — read when it starts,
    /// not by the passes over all services.
    final class Entry {
        let mode: ServiceStartMode
        let policy: ServiceFailurePolicy
        let deadline: Duration?
        let factory: @MainActor () -> any Service
        var instance: (any Service)?
        /// Its failure in the registry's ``ServiceFailureLog`` (its state is `.failed`).
        var failure: Int?
        /// The link naming who needed it, in the failure log, and the graph's chain version it
        /// was built at (it is stale at any other).
        var chainLink: (version: Int, link: Int)?
        var task: Task<Void, Never>?
        var race: DeadlineRace?

        init(mode: ServiceStartMode, policy: ServiceFailurePolicy, deadline: Duration?, factory: @escaping @MainActor () -> any Service) {
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
        let waitingFor: [Slot]
        /// How many of them have not settled.
        var remaining: Int
        var error: ServiceError?
        var continuation: CheckedContinuation<Void, Never>?
        init(waitingFor: [Slot]) {
            self.waitingFor = waitingFor
            remaining = waitingFor.count
        }
    }

    /// Starts `roots` and everything they need; returns when all are started or failed.
    func start(_ roots: [Slot], deadline: Duration? = nil) async throws(ServiceError) {
        let needed = try graph.closure(of: roots)
        var waitingFor: [Slot] = []
        waitingFor.reserveCapacity(needed.count)
        for slot in needed {
            switch graph.state(of: slot) {
            case .started: continue
            case .failed:
                // A failed `failLaunch` service among those needed fails the new run at once.
                if entries[slot].policy == .failLaunch {
                    throw ServiceError(code: .startFailed, service: graph.name(of: slot), detail: failure(ofSlot: slot)?.description ?? "",
                                       shared: ServiceError.Shared(log: failures, link: chainLink(to: slot), cause: nil))
                }
            default: waitingFor.append(slot)
            }
        }
        guard !waitingFor.isEmpty else { return }
        let run = Run(waitingFor: waitingFor)
        for slot in waitingFor { waiting[slot].append(run) }
        var timer: ScheduledTimer?
        if let deadline {
            timer = application.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { self.waiting[$0].contains(run) }.map { self.graph.name(of: $0) }
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: starting.sorted().joined(separator: ", "), detail: "\(deadline)"))
            }
        }
        for slot in waitingFor { if let ready = prepare(slot) { launch(ready) } }
        // Starts finish on later turns of the main actor; failures of dependencies can be known now.
        if run.remaining > 0 && run.error == nil {
            await withCheckedContinuation { run.continuation = $0 }
        }
        timer?.cancel()
        for slot in run.waitingFor where !waiting[slot].isEmpty { waiting[slot].remove(run) }
        if let error = run.error { throw error }
    }

    /// Makes the service in `slot` ready to start — created, `.starting`, its deadline running —
    /// if it is wanted and the graph says it is ready; fails it (and what waits on it) if a
    /// dependency failed.
    /// - Returns: The slot to start, or `nil`.
    private func prepare(_ slot: Slot) -> Slot? {
        guard !waiting[slot].isEmpty else { return nil }
        switch graph.readiness(of: slot) {
        case .idle, .waiting: return nil
        case .dependencyFailed(let dependency):
            fail(slot, .dependencyFailed, detail: graph.name(of: dependency), cause: dependency)
            return nil
        case .ready: break
        }
        graph.markStarting(slot)
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
                self.fail(slot, .timedOut, detail: "\(deadline)")
            }
        }
        return slot
    }

    /// Starts the service in `slot` in a new task.
    private func launch(_ slot: Slot) {
        let worker = Worker()
        worker.task = Task { @MainActor [weak self] in await self?.run(slot, worker: worker) }
        entries[slot].task = worker.task
    }

    /// Starts `first`, then — in the same task, without a hop — the first service its start made
    /// ready (a dependency chain runs as one task); other ready services get tasks of their own.
    private func run(_ first: Slot, worker: Worker) async {
        var current: Slot? = first
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
            guard graph.state(of: slot) == .starting else { continue }
            switch outcome {
            case .success:
                current = started(slot, keepingFirstReady: !Task.isCancelled)
            case .failure(let error):
                // A failure makes nothing ready: its dependents fail or wait.
                fail(slot, .startFailed, detail: "\(error)")
            }
            if let current { entries[current].task = worker.task }
        }
    }

    /// Marks `slot` started; returns the dependent it made ready that the caller's task starts
    /// next (when `keepingFirstReady`), launching the others.
    private func started(_ slot: Slot, keepingFirstReady: Bool) -> Slot? {
        let ready = graph.markStarted(slot)
        startOrder.append(graph.name(of: slot))
        settle(slot, error: nil)
        var kept: Slot?
        for dependent in ready {
            guard let ready = prepare(dependent) else { continue }
            if keepingFirstReady && kept == nil { kept = ready } else { launch(ready) }
        }
        return kept
    }

    /// The service in `slot` failed (`code`: its start threw, timed out, or its dependency
    /// `cause` failed). The graph fails every wanted dependent that can no longer start, in one
    /// pass without recursion; each failure is recorded once — a `dependencyFailed` one refers to
    /// its cause's record and shares the chain that needed it — and the runs waiting are told.
    private func fail(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot? = nil) {
        let dependents = graph.markFailed(slot) { !waiting[$0].isEmpty }
        record(slot, code, detail: detail, cause: cause)
        for failure in dependents {
            record(failure.slot, .dependencyFailed, detail: graph.name(of: failure.dependency), cause: failure.dependency)
        }
    }

    /// Records the failure of `slot` and tells the runs waiting for it (they fail with it when its
    /// policy is `failLaunch`).
    private func record(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot?) {
        let entry = entries[slot]
        let record = failures.record(code, service: graph.name(of: slot), detail: detail, link: chainLink(to: slot),
                                     cause: cause.flatMap { entries[$0].failure })
        entry.failure = record
        settle(slot, error: entry.policy == .failLaunch ? failures.error(at: record) : nil)
    }

    /// The link in the failure log naming who needed `slot` (`root → … → name`). Each service's
    /// link is built once per graph chain version and reused by every service it needed, so the
    /// chains of n failing services cost O(n) together.
    private func chainLink(to slot: Slot) -> Int {
        let version = graph.chainVersion
        if let built = entries[slot].chainLink, built.version == version { return built.link }
        let walk = graph.neededByWalk(from: slot) { entries[$0].chainLink?.version == version }
        let parent = walk.known.flatMap { entries[$0].chainLink?.link }
        let first = failures.appendChain(walk.slots.reversed().map(graph.name(of:)), under: parent)
        // A walk that came back on itself is not every service's chain: only its own.
        if !walk.closesLoop {
            for (offset, walked) in walk.slots.reversed().enumerated() { entries[walked].chainLink = (version, first + offset) }
        }
        return first + walk.slots.count - 1
    }

    /// Tells the runs waiting for the service in `slot`.
    func settle(_ slot: Slot, error: ServiceError?) {
        let (first, rest) = waiting[slot].takeAll()
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
}
