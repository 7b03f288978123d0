import AppKernel

// The scheduler: what the graph makes ready starts on a ``WorkerPool`` while a ``ServiceRegistry/Run``
// (a boot, a lookup) waits for it, its deadline in the ``DeadlineQueue``; each service that settles
// (starts, fails, is unregistered) tells the runs that wait for it.
extension ServiceRegistry {
    /// A start or shutdown under way: its deadline's identifier, the worker calling it, a shutdown's run.
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

    /// The runs waiting for one service, oldest first; the first apart (there is almost always one).
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

    /// One call of ``shutdown(deadline:)``: the started services, newest start first (a service's
    /// rank is its position in `order`), and by rank the started dependents not finished yet.
    final class ShutdownRun {
        let deadline: Duration?
        let order: [Slot]
        /// The rank of each slot; `-1`: not in `order`.
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
        func rank(of slot: Slot) -> Int? { slot < ranks.count && ranks[slot] >= 0 ? ranks[slot] : nil }
    }

    /// Whether a run waits for the service in `slot`.
    func isWanted(_ slot: Slot) -> Bool { entries[slot].runs.first != nil }
    /// How many waits for a service all runs have left (none once every call returned).
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
                // A failed `failLaunch` service fails the run at once; a `continueWithout` one is settled.
                guard entries[slot].policy == .failLaunch else { continue }
                let detail = failure(ofSlot: slot)?.description ?? ""
                throw ServiceError(code: .startFailed, service: graph.name(of: slot), detail: detail,
                                   shared: ServiceError.Shared(log: failures, link: chainLink(to: slot), cause: nil))
            default: waitingFor.append(slot)
            }
        }
        guard !waitingFor.isEmpty else { return }
        // A boot's starts in one allocation (not a lookup's: that would copy each time).
        if waitingFor.count > startedSlots.count { startedSlots.reserveCapacity(startedSlots.count + waitingFor.count) }
        let run = Run(waitingFor: waitingFor)
        for slot in waitingFor { entries[slot].runs.append(run) }
        let timer = deadline.map { deadline in
            deadlines.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { self.entries[$0].runs.contains(run) }.map(self.graph.name(of:))
                let service = starting.sorted().joined(separator: ", ")
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: service, detail: "\(deadline)"))
            }
        }
        for slot in waitingFor where prepare(slot) { starts.add(slot) }
        // Starts finish on later turns of the main actor; dependencies' failures may be known now.
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

    /// Makes the service in `slot`, if wanted and ready, `.starting`, created, its deadline running, and
    /// returns `true`; fails it (and what waits on it) if a dependency failed.
    private func prepare(_ slot: Slot) -> Bool {
        guard isWanted(slot) else { return false }
        switch graph.readiness(of: slot) {
        case .idle, .waiting: return false
        case .dependencyFailed(let dependency):
            fail(slot, .dependencyFailed, detail: graph.name(of: dependency), cause: dependency)
            return false
        case .ready: graph.markStarting(slot)
        }
        if entries[slot].instance == nil { create(slot) }
        entries[slot].call = Call(deadlineID: entries[slot].startDeadline.map { deadlines.add(after: $0, tag: slot) })
        return true
    }

    /// Makes the service in `slot` and tells it `didCreate` (both may look services up: no access is open).
    func create(_ slot: Slot) {
        let factory = entries[slot].factory
        let created = factory()
        entries[slot].instance = created
        created.didCreate()
    }

    /// A start worker's body: runs the start and takes its outcome, unless a timeout or unregistration came first.
    func start(_ slot: Slot, worker: WorkerPool.Worker) async {
        guard graph.state(of: slot) == .starting, let instance = entries[slot].instance else { return }
        entries[slot].call?.worker = worker
        var failure: (any Error)?
        // Reported to the application's activity observers (a launch timeline), when there are any.
        let activities = application?.activities
        let activity = activities?.isObserved == true ? Activity(kind: .service, name: graph.name(of: slot)) : nil
        if let activity { activities?.report(.started(activity)) }
        do { try await instance.start() } catch { failure = error }
        guard graph.state(of: slot) == .starting, endCall(slot) != nil else { return }
        if let failure {
            fail(slot, .startFailed, detail: "\(failure)")
            if let activity { activities?.report(.failed(activity, message: self.failure(ofSlot: slot)?.description ?? "\(failure)")) }
            return
        }
        if let activity { activities?.report(.ended(activity)) }
        let ready = graph.markStarted(slot)
        startedSlots.append(slot)
        settle(slot, error: nil)
        for dependent in ready where prepare(dependent) { starts.add(dependent) }
    }

    /// Ends the call under way in `slot` (its outcome came, or it was abandoned) and its deadline.
    /// - Returns: The call; `nil` if none was under way (its outcome no longer counts).
    @discardableResult
    func endCall(_ slot: Slot) -> Call? {
        guard let call = entries[slot].call else { return nil }
        entries[slot].call = nil
        if let deadlineID = call.deadlineID { deadlines.remove(deadlineID) }
        return call
    }

    /// The deadline of the call under way in `slot` passed: its worker is given up, and a start
    /// fails with ``ServiceError/Code/timedOut``, a shutdown destroys the service.
    func deadlinePassed(_ slot: Slot) {
        guard let call = endCall(slot) else { return }   // its deadline is gone already: removing it does nothing
        if let run = call.shutdown {
            if let worker = call.worker { run.pool?.abandon(worker) }
            finish(slot, in: run)
        } else {
            if let worker = call.worker { starts.abandon(worker) }
            fail(slot, .timedOut, detail: entries[slot].startDeadline.map { "\($0)" } ?? "")
            if let activities = application?.activities, activities.isObserved {
                activities.report(.failed(Activity(kind: .service, name: graph.name(of: slot)), message: failure(ofSlot: slot)?.description ?? "timed out"))
            }
        }
    }

    /// The service in `slot` failed (`code`: it threw, timed out, or its dependency `cause` failed), and
    /// so does every wanted dependent that can no longer start; each failure is recorded once.
    private func fail(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot? = nil) {
        let dependents = graph.markFailed(slot) { isWanted($0) }
        record(slot, code, detail: detail, cause: cause)
        for failure in dependents {
            record(failure.slot, .dependencyFailed, detail: graph.name(of: failure.dependency), cause: failure.dependency)
        }
    }

    /// Records the failure of `slot` and tells the runs waiting (they fail with it if it is `failLaunch`).
    private func record(_ slot: Slot, _ code: ServiceError.Code, detail: String, cause: Slot?) {
        let record = failures.record(code, service: graph.name(of: slot), detail: detail, link: chainLink(to: slot),
                                     cause: cause.flatMap { entries[$0].failure })
        entries[slot].failure = record
        settle(slot, error: entries[slot].policy == .failLaunch ? failures.error(at: record) : nil)
    }

    /// The failure log's link naming who needed `slot` (`root → … → name`), built once per chain
    /// version and reused by what it needed: the chains of n failing services cost O(n) together.
    private func chainLink(to slot: Slot) -> Int {
        let version = graph.chainVersion
        if let built = entries[slot].chainLink, built.version == version { return built.link }
        let walk = graph.neededByWalk(from: slot) { entries[$0].chainLink?.version == version }
        let parent = walk.known.flatMap { entries[$0].chainLink?.link }
        let first = failures.appendChain(walk.slots.reversed().map(graph.name(of:)), under: parent)
        // A walk that came back on itself is not every service's chain: only its own.
        if !walk.closesLoop {
            for (offset, walked) in walk.slots.reversed().enumerated() {
                entries[walked].chainLink = (version, first + offset)
            }
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
            if run.remaining == 0 || run.error != nil || error != nil { complete(run, error: error) }
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
        let deadlineID = run.deadline.map { deadlines.add(after: $0, tag: slot) }
        entries[slot].call = Call(deadlineID: deadlineID, worker: worker, shutdown: run)
        await instance.shutdown()
        if endCall(slot) != nil { finish(slot, in: run) }
    }

    /// The service in `slot` shut down or ran out of time: destroy it; queue what it was the last started dependent of.
    private func finish(_ slot: Slot, in run: ShutdownRun) {
        if let instance = entries[slot].instance {
            instance.willDestroy()
            entries[slot].instance = nil
        }
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
