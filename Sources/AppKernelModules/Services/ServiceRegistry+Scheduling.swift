import AppKernel

// The scheduler: drives the graph's Kahn's counters with workers, deadlines on the application's
// clock, and the calls waiting for services. The graph says what became ready or failed; this
// file creates, starts, times and reports.
//
// A call that waits for services (a boot, a lookup) is a ``ServiceRegistry/Run``: it is in the
// list of each service it waits for, and each service that settles (starts, fails, or is
// unregistered) tells the runs in its list. A service is started only while a run wants it.
// Ready services go to a ``WorkerPool``, whose workers call them one after another (see there),
// and each start or shutdown under way has its deadline in one ``DeadlineQueue`` (one timer).
extension ServiceRegistry {
    /// A start or shutdown under way: its deadline in the ``DeadlineQueue`` (`nil`: none), the
    /// worker calling the service once one has taken it, and for a shutdown, its run.
    struct Call {
        var deadlineID: Int?
        var worker: WorkerPool.Worker?
        var shutdown: ShutdownRun?
    }

    /// One call's wait for a set of services; `remaining`: how many have not settled.
    final class Run {
        let waitingFor: [Slot]
        var remaining: Int
        var error: ServiceError?
        var continuation: CheckedContinuation<Void, Never>?

        init(waitingFor: [Slot]) { (self.waitingFor, remaining) = (waitingFor, waitingFor.count) }
    }

    /// The runs waiting for one service, oldest first; the first is kept apart, as there is
    /// almost always only one (so no array is made per service).
    struct WaitingRuns {
        var first: Run?
        var others: [Run] = []

        var count: Int { first == nil ? 0 : 1 + others.count }
        func contains(_ run: Run) -> Bool { first === run || others.contains { $0 === run } }

        mutating func append(_ run: Run) { if first == nil { first = run } else { others.append(run) } }
        mutating func remove(_ run: Run) {
            if first === run { first = others.isEmpty ? nil : others.removeFirst() } else { others.removeAll { $0 === run } }
        }
    }

    /// One call of ``shutdown(deadline:)``: the started services, newest start first (a
    /// service's rank is its position in `order`), and for each the started dependents that
    /// have not finished yet.
    final class ShutdownRun {
        let deadline: Duration?
        let order: [Slot]
        /// The rank of each slot (`-1`: not in `order`); by rank, the dependents not finished.
        private var ranks: [Int]
        var pendingDependents: [Int] = []
        var remaining: Int
        var pool: WorkerPool?
        var done: CheckedContinuation<Void, Never>?

        init(deadline: Duration?, order: [Slot], slotCount: Int) {
            self.deadline = deadline
            self.order = order
            ranks = Array(repeating: -1, count: slotCount)
            for (rank, slot) in order.enumerated() { ranks[slot] = rank }
            remaining = order.count
        }

        /// The rank of `slot`; `nil` if it is not being shut down.
        func rank(of slot: Slot) -> Int? {
            slot < ranks.count && ranks[slot] >= 0 ? ranks[slot] : nil
        }
    }

    /// Whether a run waits for the service in `slot`.
    func isWanted(_ slot: Slot) -> Bool { entries[slot].runs.first != nil }

    /// How many waits for a service all runs have left, all together (none once every call returned).
    var waitingRunCount: Int { entries.reduce(0) { $0 + $1.runs.count } }

    /// Starts `roots` and everything they need; returns when all are started or failed.
    func start(_ roots: [Slot], deadline: Duration? = nil) async throws(ServiceError) {
        let needed = try graph.closure(of: roots)
        var waitingFor: [Slot] = []
        waitingFor.reserveCapacity(needed.count)
        for slot in needed {
            switch graph.state(of: slot) {
            case .started: continue
            case .failed:
                // A failed `failLaunch` service among those needed fails the new run at once;
                // a `continueWithout` one is settled: nothing waits for it.
                guard entries[slot].policy == .failLaunch else { continue }
                throw ServiceError(code: .startFailed, service: graph.name(of: slot), detail: failure(ofSlot: slot)?.description ?? "",
                                   shared: ServiceError.Shared(log: failures, link: chainLink(to: slot), cause: nil))
            default: waitingFor.append(slot)
            }
        }
        guard !waitingFor.isEmpty else { return }
        // A boot's starts, in one allocation (not when a lookup adds one: that would copy each time).
        if waitingFor.count > startedSlots.count { startedSlots.reserveCapacity(startedSlots.count + waitingFor.count) }
        let run = Run(waitingFor: waitingFor)
        for slot in waitingFor { entries[slot].runs.append(run) }
        var timer: ScheduledTimer?
        if let deadline {
            timer = deadlines.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { slot in self.entries[slot].runs.contains(run) }.map(self.graph.name(of:))
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: starting.sorted().joined(separator: ", "), detail: "\(deadline)"))
            }
        }
        for slot in waitingFor where prepare(slot) { starts.add(slot) }
        // Starts finish on later turns of the main actor; failures of dependencies can be known now.
        if run.remaining > 0 && run.error == nil {
            await withCheckedContinuation { run.continuation = $0 }
        }
        timer?.cancel()
        deadlines.releaseTimerIfIdle()
        if run.remaining > 0 {
            for slot in waitingFor { entries[slot].runs.remove(run) }
        }
        if let error = run.error { throw error }
    }

    /// Makes the service in `slot` ready to start — `.starting`, created, its deadline running —
    /// if it is wanted and the graph says it is ready; fails it (and what waits on it) if a
    /// dependency failed.
    /// - Returns: Whether it is to be started.
    private func prepare(_ slot: Slot) -> Bool {
        guard isWanted(slot) else { return false }
        switch graph.readiness(of: slot) {
        case .idle, .waiting: return false
        case .dependencyFailed(let dependency):
            fail(slot, .dependencyFailed, detail: graph.name(of: dependency), cause: dependency)
            return false
        case .ready: graph.markStarting(slot)
        }
        if entries[slot].instance == nil {
            // The factory and `didCreate` may look services up: no access to the entries is open.
            let factory = entries[slot].factory
            let created = factory()
            entries[slot].instance = created
            created.didCreate()
        }
        entries[slot].call = Call(deadlineID: entries[slot].startDeadline.map { deadlines.add(after: $0, tag: slot) })
        return true
    }

    /// Runs one service's start and takes its outcome, unless a timeout or unregistration came
    /// first (a start worker's body).
    func start(_ slot: Slot, worker: WorkerPool.Worker) async {
        // A start is under way while its service is `.starting`: a timeout fails the service,
        // unregistration removes it (and each ends the call).
        guard graph.state(of: slot) == .starting, let instance = entries[slot].instance else { return }
        entries[slot].call?.worker = worker
        var failure: (any Error)?
        do { try await instance.start() } catch { failure = error }
        guard graph.state(of: slot) == .starting, endCall(slot) != nil else { return }
        if let failure {
            // A failure makes nothing ready: its dependents fail or wait.
            fail(slot, .startFailed, detail: "\(failure)")
            return
        }
        let ready = graph.markStarted(slot)
        startedSlots.append(slot)
        settle(slot, error: nil)
        for dependent in ready where prepare(dependent) { starts.add(dependent) }
    }

    /// Ends the call under way in `slot` — its outcome came, or it was abandoned — and removes
    /// its deadline.
    /// - Returns: The call; `nil` if none was under way (its outcome no longer counts).
    @discardableResult
    func endCall(_ slot: Slot) -> Call? {
        guard let call = entries[slot].call else { return nil }
        entries[slot].call = nil
        if let deadlineID = call.deadlineID { deadlines.remove(deadlineID) }
        return call
    }

    /// The deadline of the call under way in `slot` passed (the ``DeadlineQueue`` already forgot
    /// it): a start fails with ``ServiceError/Code/timedOut``; a shutdown is given up and the
    /// service destroyed. Either way its worker is given up.
    func deadlinePassed(_ slot: Slot) {
        guard let call = entries[slot].call else { return }
        entries[slot].call = nil
        if let run = call.shutdown {
            if let worker = call.worker { run.pool?.abandon(worker) }
            finish(slot, in: run)
        } else {
            if let worker = call.worker { starts.abandon(worker) }
            fail(slot, .timedOut, detail: entries[slot].startDeadline.map { "\($0)" } ?? "")
        }
    }

    /// The service in `slot` failed (`code`: its start threw, timed out, or its dependency
    /// `cause` failed). The graph fails every wanted dependent that can no longer start, in one
    /// pass without recursion; each failure is recorded once — a `dependencyFailed` one refers to
    /// its cause's record and shares the chain that needed it — and the runs waiting are told.
    private func fail(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot? = nil) {
        let dependents = graph.markFailed(slot) { isWanted($0) }
        record(slot, code, detail: detail, cause: cause)
        for failure in dependents {
            record(failure.slot, .dependencyFailed, detail: graph.name(of: failure.dependency), cause: failure.dependency)
        }
    }

    /// Records the failure of `slot` and tells the runs waiting for it (they fail with it when its
    /// policy is `failLaunch`).
    private func record(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot?) {
        let record = failures.record(code, service: graph.name(of: slot), detail: detail, link: chainLink(to: slot),
                                     cause: cause.flatMap { entries[$0].failure })
        entries[slot].failure = record
        settle(slot, error: entries[slot].policy == .failLaunch ? failures.error(at: record) : nil)
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

    /// Tells the runs waiting for the service in `slot` (oldest first) that it has settled.
    func settle(_ slot: Slot, error: ServiceError?) {
        let runs = entries[slot].runs
        guard let first = runs.first else { return }
        entries[slot].runs = WaitingRuns()
        func tell(_ run: Run) {
            run.remaining -= 1
            if let error, run.error == nil { run.error = error }
            if run.remaining == 0 || run.error != nil { complete(run, error: run.error) }
        }
        tell(first)
        for run in runs.others { tell(run) }
    }

    private func complete(_ run: Run, error: ServiceError?) {
        if run.error == nil { run.error = error }
        guard let continuation = run.continuation else { return }
        run.continuation = nil
        continuation.resume()
    }

    // MARK: Shutdown

    /// Shuts down the service at `rank` in `run` (a shutdown worker's body), within the run's deadline.
    func shutDown(_ rank: Int, in run: ShutdownRun, worker: WorkerPool.Worker) async {
        let slot = run.order[rank]
        guard let instance = entries[slot].instance else { return finish(slot, in: run) }
        entries[slot].call = Call(deadlineID: run.deadline.map { deadlines.add(after: $0, tag: slot) }, worker: worker, shutdown: run)
        await instance.shutdown()
        guard endCall(slot) != nil else { return }
        finish(slot, in: run)
    }

    /// The service in `slot` has shut down (or ran out of time): destroy it, and hand the pool
    /// each dependency it was the last started dependent of.
    private func finish(_ slot: Slot, in run: ShutdownRun) {
        if let instance = entries[slot].instance {
            instance.willDestroy()
            entries[slot].instance = nil
        }
        // A started one's dependents wait for it again.
        graph.markDestroyed(slot)
        for case let dependency? in graph.nodes[slot].dependencies {
            guard let rank = run.rank(of: dependency) else { continue }
            run.pendingDependents[rank] -= 1
            if run.pendingDependents[rank] == 0 { run.pool?.add(rank) }
        }
        run.remaining -= 1
        if run.remaining == 0, let done = run.done {
            run.done = nil
            done.resume()
        }
    }
}
