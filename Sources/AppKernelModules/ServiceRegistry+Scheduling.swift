@_spi(AppKernelInternals) import AppKernelCore
import AppKernel

// The scheduler: drives the graph's Kahn's counters with workers, deadlines on the application's
// clock, and the calls waiting for services. The graph says what became ready or failed; this
// file creates, starts, times and reports.
//
// Workers, not a task per service: a ready service goes into a FIFO; a worker (a main-actor task)
// takes services from it one after another. Before each start it makes sure a standby worker is
// scheduled when more services wait — the standby runs only once the main actor is free, that
// is, once every worker is suspended inside a start. So services that start without suspending
// run back to back in one task, and each start that does suspend (I/O) gets the next service
// started beside it: as many concurrent starts as there are suspended ones, as with a task each.
// Deadlines are entries in one ``DeadlineQueue`` (one timer), not a sleeping task per service.
extension ServiceRegistry {
    /// What a service was registered with, and what its start creates — read when it starts,
    /// not by the passes over all services.
    @MainActor
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
        /// Whether a start (or shutdown) is under way whose outcome still counts: cleared by the
        /// outcome, a timeout, or unregistration — whichever comes first.
        var inFlight = false
        /// The worker running its start or shutdown (cancelled on timeout).
        var worker: Worker?
        /// Its start's (or shutdown's) deadline in the registry's ``DeadlineQueue``.
        var deadlineID: Int?
        /// The shutdown it is part of, while it shuts down.
        var shutdownRun: ShutdownRun?

        /// Ends the call under way — its outcome came, its deadline passed, or it was abandoned —
        /// removing its deadline (unless that is what fired: clear `deadlineID` first).
        /// - Returns: The worker that ran it, if the call was still in flight (its outcome counts).
        func endCall(_ deadlines: DeadlineQueue) -> Worker?? {
            let worker = self.worker
            self.worker = nil
            guard inFlight else { return nil }
            inFlight = false
            if let deadlineID {
                deadlines.remove(deadlineID)
                self.deadlineID = nil
            }
            return .some(worker)
        }

        init(mode: ServiceStartMode, policy: ServiceFailurePolicy, deadline: Duration?, factory: @escaping @MainActor () -> any Service) {
            self.mode = mode
            self.policy = policy
            self.deadline = deadline
            self.factory = factory
        }
    }

    /// A task that starts (or shuts down) services one after another.
    final class Worker {
        var task: Task<Void, Never>?
        /// Given up on: its current service ran out of time. It no longer counts against the
        /// pool's limit and takes nothing more, even if that service's call returns one day.
        var abandoned = false
    }

    /// Services waiting for a worker, and the workers (see the top of this file). At most one
    /// worker is pending (created, not yet running) at a time, and at most `limit` exist.
    @MainActor
    final class WorkerPool {
        private let queue = EventQueue<Slot>()
        /// With a ranking: the waiting slots' ranks, each its own identifier (ranks are unique).
        private var ranked = DueQueue<Int, Void>()
        private let ranking: (rank: [Int], slotAt: [Slot])?
        private var pending = false
        private var active = 0
        private let limit: Int
        private let body: @MainActor (Slot, Worker) async -> Void

        /// A pool taking services first come, first served — or, with a `ranking`, lowest
        /// `rank[slot]` first (`slotAt` is its inverse: the slot of each rank).
        init(limit: Int = .max, ranking: (rank: [Int], slotAt: [Slot])? = nil,
             _ body: @escaping @MainActor (Slot, Worker) async -> Void) {
            self.limit = limit
            self.ranking = ranking
            self.body = body
        }

        private var isEmpty: Bool { ranking == nil ? queue.isEmpty : ranked.count == 0 }

        private func take() -> Slot? {
            guard let ranking else { return queue.dequeue() }
            guard let first = ranked.first(isLive: { _ in true }) else { return nil }
            ranked.removeFirst(first)
            return ranking.slotAt[first.key]
        }

        /// Queues `slot` for a worker.
        func add(_ slot: Slot) {
            if let ranking {
                let rank = ranking.rank[slot]
                ranked.insert(rank, id: rank)
            } else {
                queue.enqueue(slot)
            }
            schedule()
        }

        /// `worker` ran out of time on its service: stop counting it, and let another take over.
        func abandon(_ worker: Worker) {
            guard !worker.abandoned else { return }
            worker.abandoned = true
            active -= 1
            worker.task?.cancel()
            schedule()
        }

        private func schedule() {
            guard !pending, active < limit, !isEmpty else { return }
            pending = true
            active += 1
            #if DEBUG
            tasksCreated += 1
            #endif
            let worker = Worker()
            worker.task = Task { @MainActor in
                self.pending = false
                await self.work(worker)
            }
        }

        private func work(_ worker: Worker) async {
            while !worker.abandoned, let slot = take() {
                // A standby, in case this service's call suspends.
                schedule()
                await body(slot, worker)
            }
            if !worker.abandoned { active -= 1 }
            schedule()
        }

        #if DEBUG
        /// Worker tasks this pool has created (debug builds; tests count them).
        private(set) var tasksCreated = 0
        #endif
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
        // Kahn's pass walks the dependents of everything it starts: from one contiguous index
        // when the start covers enough of the graph to pay for building it.
        graph.indexDependents(covering: needed.count)
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
        deadlines.releaseTimerIfIdle()
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
        entry.inFlight = true
        if let deadline = entry.deadline { entry.deadlineID = deadlines.add(after: deadline, tag: slot) }
        return slot
    }

    /// The deadline of the call under way in `slot` passed (the ``DeadlineQueue`` already forgot it).
    func deadlinePassed(_ slot: Slot) {
        let entry = entries[slot]
        entry.deadlineID = nil
        if let run = entry.shutdownRun { return shutdownTimedOut(slot, in: run) }
        // A start: it is cancelled and fails.
        guard let worker = entry.endCall(deadlines) else { return }
        if let worker { starts.abandon(worker) }
        fail(slot, .timedOut, detail: "\(entry.deadline.map { "\($0)" } ?? "")")
    }

    /// Queues the service in `slot` for a start worker.
    private func launch(_ slot: Slot) {
        starts.add(slot)
    }

    /// Runs one service's start and takes its outcome, unless a timeout or unregistration came
    /// first (a start worker's body).
    func start(_ slot: Slot, by worker: Worker) async {
        let entry = entries[slot]
        guard entry.inFlight, let instance = entry.instance else { return }
        entry.worker = worker
        let outcome: Result<Void, any Error>
        do {
            try await instance.start()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        guard entry.endCall(deadlines) != nil else { return }
        // Unregistered while it started: nothing waits for it any more.
        guard graph.state(of: slot) == .starting else { return }
        switch outcome {
        case .success:
            started(slot)
        case .failure(let error):
            // A failure makes nothing ready: its dependents fail or wait.
            fail(slot, .startFailed, detail: "\(error)")
        }
    }

    /// Marks `slot` started and queues the dependents it made ready.
    private func started(_ slot: Slot) {
        // One array reused by every start (taken out while in use: `prepare` never comes back here).
        var ready = readyScratch
        readyScratch = []
        ready.removeAll(keepingCapacity: true)
        graph.markStarted(slot, appendingReadyTo: &ready)
        startedSlots.append(slot)
        settle(slot, error: nil)
        for dependent in ready {
            if let ready = prepare(dependent) { launch(ready) }
        }
        readyScratch = ready
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
