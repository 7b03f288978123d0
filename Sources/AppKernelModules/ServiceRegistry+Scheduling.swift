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
//
// Memory: when dependencies are drawn at random, Kahn's order reaches services in random order,
// and with 100,000 of them what each start touches is out of the cache. So a start touches per
// service little that is not contiguous: the service's ``Record`` when it is prepared (48 bytes),
// the graph's 4-byte node, its run of dependents; the queued ``WorkerPool/Job`` carries what the
// worker's call needs (no second look at the record), a boot's run waits in one bitset (no entry
// per service), and a shutdown hands services out in order with no counting while none suspends.
// What is left is read ahead: once per batch, the workers read what the next batches will
// touch, a level at a time, so the cache misses of a batch overlap (``WorkerPool/readAhead``).
extension ServiceRegistry {
    /// What a service was registered with that only failures, lookups and groups read — not the
    /// starts and shutdowns themselves (their fields are in its ``Record``).
    struct Entry {
        let mode: ServiceStartMode
        let policy: ServiceFailurePolicy
        /// Its failure in the registry's ``ServiceFailureLog`` (its state is `.failed`).
        var failure: Int?
        /// The link naming who needed it, in the failure log, and the graph's chain version it
        /// was built at (it is stale at any other).
        var chainLink: (version: Int, link: Int)?
    }

    /// What starting and shutting down one service read and write, in one 48-byte record per
    /// service kept in an array by slot: Kahn's order reaches services in random order, so what
    /// preparing a start touches per service is one record (rather than an object and a list
    /// elsewhere), small enough that the records of 100,000 services mostly stay in the cache.
    struct Record {
        /// Its instance, from its creation until it is destroyed or unregistered.
        var instance: (any Service)?
        /// The start (or shutdown) under way whose outcome still counts: its deadline's
        /// identifier in the registry's ``DeadlineQueue``, or ``noDeadline``; ``noCall``: none.
        /// A timeout or unregistration clears it, and so does a shutdown's outcome; a start's
        /// outcome leaves it (the start's ``WorkerPool/Job`` carries the deadline): it is read
        /// only while the service is `.starting` or a shutdown of it is under way.
        var call = Record.noCall
        /// Makes its instance.
        let factory: @MainActor () -> any Service
        /// Its start deadline: an index into the registry's `startDeadlines`.
        let startDeadline: Int32

        /// `call` when no call is under way.
        static let noCall = Int.min
        /// `call` when a call is under way without a deadline.
        static let noDeadline = -1

        init(factory: @escaping @MainActor () -> any Service, startDeadline: Int32) {
            self.factory = factory
            self.startDeadline = startDeadline
        }

        /// What a start needs first: the factory if the instance is still to be made, and the
        /// start deadline's index.
        var preparation: (factory: (@MainActor () -> any Service)?, startDeadline: Int) {
            (instance == nil ? factory : nil, Int(startDeadline))
        }

        /// A value read from the part a shutdown touches.
        var touchCall: Int { (instance == nil ? 0 : 1) &+ call }

        /// A value read from the whole record (both its cache lines, if it spans two).
        var touchAll: Int { touchCall &+ Int(startDeadline) }

        /// A start (or shutdown) begins, with its deadline's identifier (``noDeadline``: none).
        mutating func beginCall(deadlineID: Int) {
            call = deadlineID
        }

        /// Ends the call under way — its outcome came, its deadline passed, or it was abandoned.
        /// - Returns: `nil` if no call was in flight; else its deadline's identifier
        ///   (``noDeadline``: none), which the caller removes.
        mutating func endCall() -> Int? {
            guard call != Record.noCall else { return nil }
            defer { call = Record.noCall }
            return call
        }
    }

    /// Ends the call under way in `slot` — its outcome came, its deadline passed, or it was
    /// abandoned — removing its deadline (unless that is what fired: clear it first, with
    /// `forgetDeadline(of:)`).
    /// - Returns: Whether the call was still in flight (its outcome counts).
    func endCall(_ slot: Slot) -> Bool {
        guard let deadlineID = records[slot].endCall() else { return false }
        if deadlineID >= 0 { deadlines.remove(deadlineID) }
        return true
    }

    /// The deadline of the call under way in `slot` passed: the call goes on without one.
    func forgetDeadline(of slot: Slot) {
        if records[slot].call >= 0 { records[slot].call = Record.noDeadline }
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
    ///
    /// A pool with an order (shutdowns) hands out the services in that order while no call is
    /// under way — each is then ready, since everything before it has finished — and needs no
    /// bookkeeping for that. Once a worker asks for work while another's call is suspended,
    /// `becameConcurrent` is told (it returns the ranks ready from then on) and the pool takes,
    /// of the ranks it is given (``add(rank:)``), the lowest first.
    @MainActor
    final class WorkerPool {
        /// A service for a worker, with what preparing its start made (so that the call does
        /// not look it up again: by then it is far out of the cache).
        struct Job {
            let slot: Slot
            var instance: (any Service)?
            /// Its deadline's identifier in the registry's ``DeadlineQueue``, or ``Record/noDeadline``.
            var deadlineID = Record.noDeadline
        }

        private let queue = EventQueue<Job>()
        /// The slot at each rank; `nil`: first come, first served.
        private let order: [Slot]?
        /// With an order, before it became concurrent: the next rank to hand out.
        private var frontier = 0
        /// With an order: whether calls have overlapped (then `ranked` holds the ranks ready).
        private(set) var isConcurrent = false
        private var ranked = RankSet(capacity: 0)
        /// With an order: told when calls first overlap, with the first rank not handed out yet;
        /// returns the ranks ready from then on.
        var becameConcurrent: (@MainActor (Int) -> [Int])?
        /// How many workers are inside a call.
        private var busy = 0
        /// The worker whose call began last and the service it calls, while that call is under
        /// way; the others under way are in `suspended`. (A call that begins finds the one
        /// before it either over or suspended — only then can another worker run — so the
        /// usual run of calls that never suspend writes nothing per call but this.)
        private var lastBegun: (worker: Worker, slot: Slot)?
        /// The workers whose call is under way and suspended (other than `lastBegun`), by the
        /// service they call.
        private var suspended: [Slot: Worker] = [:]
        private var pending = false
        private var active = 0
        private let limit: Int
        private let body: @MainActor (Job) async -> Void
        /// Reads ahead (see ``readAheadIfDue()``); `nil`: never.
        var readAhead: (@MainActor (inout ServiceGraph.ReadAhead) -> Void)?
        private var readAheadCountdown = 0
        private var stages = ServiceGraph.ReadAhead()
        /// With an order: the rank taken last.
        private var lastRank = 0
        /// How many services a read-ahead covers.
        static let readAheadBatch = 16

        /// A pool taking services first come, first served — or, with an `order`, in that order
        /// (see the type's description).
        init(limit: Int = .max, order: [Slot]? = nil, _ body: @escaping @MainActor (Job) async -> Void) {
            self.limit = limit
            self.order = order
            self.body = body
        }

        private var isEmpty: Bool {
            guard let order else { return queue.isEmpty }
            return isConcurrent ? ranked.isEmpty : frontier == order.count
        }

        private func take() -> Job? {
            guard let order else { return queue.dequeue() }
            if !isConcurrent {
                if busy == 0 {
                    guard frontier < order.count else { return nil }
                    lastRank = frontier
                    frontier += 1
                    return Job(slot: order[lastRank])
                }
                // A call is suspended: from now on, who is ready is counted.
                isConcurrent = true
                ranked = RankSet(capacity: order.count)
                if let becameConcurrent { for rank in becameConcurrent(frontier) { ranked.insert(rank) } }
            }
            guard let rank = ranked.removeFirst() else { return nil }
            lastRank = rank
            return Job(slot: order[rank])
        }

        /// Queues `job` for a worker (a pool without an order).
        func add(_ job: Job) {
            queue.enqueue(job)
            schedule()
        }

        /// Queues the service at `rank` in the pool's order for a worker (once concurrent).
        func add(rank: Int) {
            ranked.insert(rank)
            schedule()
        }

        /// Lets a worker start taking services (a pool with an order).
        func begin() {
            schedule()
        }

        /// The worker calling the service in `slot`, if a call of it is under way.
        func worker(calling slot: Slot) -> Worker? {
            if let lastBegun, lastBegun.slot == slot { return lastBegun.worker }
            return suspended[slot]
        }

        /// Whether a call of the service in `slot` is under way in this pool.
        func isCalling(_ slot: Slot) -> Bool { worker(calling: slot) != nil }

        /// The call of the service in `slot` ran out of time (or its service was unregistered):
        /// gives up its worker, if it has one — see ``abandon(_:)``.
        func abandonWorker(calling slot: Slot) {
            if let worker = worker(calling: slot) { abandon(worker) }
        }

        /// `worker` ran out of time on its service: stop counting it, and let another take over.
        private func abandon(_ worker: Worker) {
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

        /// Once per batch of services taken, hands `readAhead` the batch three batches after the
        /// next one (the services that come next in the order or the queue, ready or not): it
        /// reads some of what they will touch now, and more of it on each of the next three
        /// calls, so that what a batch's calls touch is in the cache when they run and the cache
        /// misses of a batch overlap instead of each stalling its own call.
        private func readAheadIfDue() {
            guard let readAhead else { return }
            readAheadCountdown -= 1
            guard readAheadCountdown <= 0 else { return }
            let batch = Self.readAheadBatch
            readAheadCountdown = batch
            stages.handOn()
            if let order {
                let first = min(lastRank + 3 * batch, order.count), end = min(lastRank + 4 * batch, order.count)
                stages.first.append(contentsOf: order[first ..< end])
            } else {
                for offset in 3 * batch ..< 4 * batch {
                    guard let job = queue.peek(offset) else { break }
                    stages.first.append(job.slot)
                }
            }
            readAhead(&stages)
        }

        private func work(_ worker: Worker) async {
            while !worker.abandoned, let job = take() {
                let slot = job.slot
                // A standby, in case this service's call suspends.
                schedule()
                readAheadIfDue()
                if let previous = lastBegun { suspended[previous.slot] = previous.worker }
                lastBegun = (worker, slot)
                busy += 1
                await body(job)
                busy -= 1
                if let last = lastBegun, last.worker === worker { lastBegun = nil } else { suspended[slot] = nil }
            }
            if !worker.abandoned { active -= 1 }
            schedule()
        }

        #if DEBUG
        /// Worker tasks this pool has created (debug builds; tests count them).
        private(set) var tasksCreated = 0
        #endif
    }

    /// The runs (not wide ones) waiting for one service, in 8 bytes: almost always one, kept
    /// without an array (more share a box).
    enum RunList {
        case none
        case one(Run)
        case many(Runs)

        /// Two or more runs.
        final class Runs {
            var runs: [Run]
            init(_ runs: [Run]) { self.runs = runs }
        }

        init() { self = .none }

        var isEmpty: Bool { if case .none = self { true } else { false } }

        func contains(_ run: Run) -> Bool {
            switch self {
            case .none: false
            case .one(let only): only === run
            case .many(let box): box.runs.contains { $0 === run }
            }
        }

        mutating func append(_ run: Run) {
            switch self {
            case .none: self = .one(run)
            case .one(let only): self = .many(Runs([only, run]))
            case .many(let box): box.runs.append(run)
            }
        }

        /// Removes `run`; returns whether it was there.
        @discardableResult
        mutating func remove(_ run: Run) -> Bool {
            switch self {
            case .none: return false
            case .one(let only):
                guard only === run else { return false }
                self = .none
                return true
            case .many(let box):
                let count = box.runs.count
                box.runs.removeAll { $0 === run }
                if box.runs.count == 1 { self = .one(box.runs[0]) } else if box.runs.isEmpty { self = .none }
                return box.runs.count < count
            }
        }

        /// Empties the list, returning what it held (without building an array for the usual one).
        mutating func takeAll() -> (first: Run?, rest: [Run]) {
            defer { self = .none }
            switch self {
            case .none: return (nil, [])
            case .one(let only): return (only, [])
            case .many(let box): return (box.runs.first, Array(box.runs.dropFirst()))
            }
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
        /// For a wide run (see ``ServiceRegistry/wideRuns``): the services it still waits for.
        /// A run that is not wide is in the waiting list of each service it waits for instead
        /// (``ServiceRegistry/listedRuns``).
        var pending: SlotSet?
        /// When it began, among the registry's runs: of the runs one service settles, the
        /// older is told first.
        let number: Int
        init(waitingFor: [Slot], number: Int) {
            self.waitingFor = waitingFor
            self.number = number
            remaining = waitingFor.count
        }

        /// Whether it still waits for the service in `slot` (a wide run only).
        func isPending(_ slot: Slot) -> Bool { pending?.contains(slot) ?? false }
    }

    /// Whether a run waits for the service in `slot`.
    func isWanted(_ slot: Slot) -> Bool {
        for run in wideRuns where run.isPending(slot) { return true }
        return listedWaits > 0 && listedRuns[slot] != nil
    }

    /// Whether `run` still waits for the service in `slot`.
    private func waits(_ run: Run, for slot: Slot) -> Bool {
        run.pending != nil ? run.isPending(slot) : listedRuns[slot]?.contains(run) ?? false
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
        runsBegun += 1
        let run = Run(waitingFor: waitingFor, number: runsBegun)
        if waitingFor.count >= 64, waitingFor.count * 8 >= graph.slotCount {
            // Wide: one bitset instead of an entry in each service's list.
            run.pending = SlotSet(waitingFor, capacity: graph.slotCount)
            wideRuns.append(run)
            // (Only here: reserving a little more each time would copy the array each time.)
            startedSlots.reserveCapacity(startedSlots.count + waitingFor.count)
        } else {
            for slot in waitingFor { listedRuns[slot, default: RunList()].append(run) }
            listedWaits += waitingFor.count
        }
        var timer: ScheduledTimer?
        if let deadline {
            timer = deadlines.scheduleTimer(after: deadline) { [weak self, weak run] in
                guard let self, let run, run.continuation != nil else { return }
                let starting = run.waitingFor.filter { self.waits(run, for: $0) }.map { self.graph.name(of: $0) }
                self.complete(run, error: ServiceError(code: .bootTimedOut, service: starting.sorted().joined(separator: ", "), detail: "\(deadline)"))
            }
        }
        for slot in waitingFor { if let job = prepare(slot) { starts.add(job) } }
        // Starts finish on later turns of the main actor; failures of dependencies can be known now.
        if run.remaining > 0 && run.error == nil {
            await withCheckedContinuation { run.continuation = $0 }
        }
        timer?.cancel()
        deadlines.releaseTimerIfIdle()
        if run.pending != nil {
            wideRuns.removeAll { $0 === run }
        } else if run.remaining > 0 {
            // Each service that settled took the run off its list; when all did, none is left.
            for slot in run.waitingFor where listedRuns[slot]?.remove(run) == true {
                listedWaits -= 1
                if listedRuns[slot]?.isEmpty == true { listedRuns[slot] = nil }
            }
        }
        if let error = run.error { throw error }
    }

    /// Makes the service in `slot` ready to start — created, `.starting`, its deadline running —
    /// if it is wanted and the graph says it is ready; fails it (and what waits on it) if a
    /// dependency failed.
    /// - Returns: The start for a worker, or `nil`.
    private func prepare(_ slot: Slot) -> WorkerPool.Job? {
        guard isWanted(slot) else { return nil }
        // Into a local first: switching over a query on the stored graph would copy the graph.
        let readiness = graph.markStartingIfReady(slot)
        switch readiness {
        case .idle, .waiting: return nil
        case .dependencyFailed(let dependency):
            fail(slot, .dependencyFailed, detail: graph.name(of: dependency), cause: dependency)
            return nil
        case .ready: break
        }
        let (factory, startDeadline) = records[slot].preparation
        var instance = factory == nil ? records[slot].instance : nil
        if let factory {
            // The factory and `didCreate` run outside any access to the records: they may look
            // services up.
            let created = factory()
            records[slot].instance = created
            created.didCreate()
            instance = created
        }
        let deadlineID = startDeadlines[startDeadline].map { deadlines.add(after: $0, tag: slot) } ?? Record.noDeadline
        records[slot].beginCall(deadlineID: deadlineID)
        return WorkerPool.Job(slot: slot, instance: instance, deadlineID: deadlineID)
    }

    /// The deadline of the call under way in `slot` passed (the ``DeadlineQueue`` already forgot it).
    func deadlinePassed(_ slot: Slot) {
        forgetDeadline(of: slot)
        // A service is `.starting` only while its start is under way; otherwise this is a
        // shutdown's deadline.
        if graph.state(of: slot) != .starting {
            if let run = shutdownRuns.first(where: { $0.pool?.isCalling(slot) ?? false }) { shutdownTimedOut(slot, in: run) }
            return
        }
        // A start: it is cancelled and fails.
        guard endCall(slot) else { return }
        starts.abandonWorker(calling: slot)
        fail(slot, .timedOut, detail: "\(startDeadlines[Int(records[slot].startDeadline)].map { "\($0)" } ?? "")")
    }

    /// Reads ahead of the workers (see ``WorkerPool/readAhead``): the graph (see
    /// ``ServiceGraph/readAhead(_:withDependencies:)``), then, for starts, the records of the
    /// dependents likely to be made ready (their starts are prepared from them) and, for
    /// shutdowns, the records of the batch handed in and — once shutdowns overlap — the pending
    /// counts of the dependencies found.
    func readAhead(_ stages: inout ServiceGraph.ReadAhead, shutdown run: ShutdownRun?) {
        let concurrent = run?.pool?.isConcurrent ?? false
        graph.readAhead(&stages, withDependencies: concurrent)
        var sink = stages.sink
        if let run {
            for slot in stages.first { sink &+= records[slot].touchCall }
            if concurrent { sink &+= run.touchPendingDependents(of: stages.dependencies) }
        } else {
            for slot in stages.ready { sink &+= records[slot].touchAll }
        }
        stages.sink = sink
    }

    /// Runs one service's start and takes its outcome, unless a timeout or unregistration came
    /// first (a start worker's body).
    func start(_ job: WorkerPool.Job) async {
        let slot = job.slot
        // A start is under way while its service is `.starting`: a timeout fails the service,
        // unregistration removes it (and each ends the call).
        guard graph.state(of: slot) == .starting, let instance = job.instance else { return }
        let outcome: Result<Void, any Error>
        do {
            try await instance.start()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // Timed out or unregistered meanwhile: the outcome does not count (and the deadline is
        // gone).
        guard graph.state(of: slot) == .starting else { return }
        if job.deadlineID >= 0 { deadlines.remove(job.deadlineID) }
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
            if let job = prepare(dependent) { starts.add(job) }
        }
        readyScratch = ready
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

    /// Tells the runs waiting for the service in `slot`.
    func settle(_ slot: Slot, error: ServiceError?) {
        var (first, rest): (Run?, [Run]) = (nil, [])
        if listedWaits > 0 {
            if var list = listedRuns.removeValue(forKey: slot) { (first, rest) = list.takeAll() }
            listedWaits -= (first == nil ? 0 : 1) + rest.count
        }
        guard let first else {
            for run in wideRuns where run.isPending(slot) {
                run.pending?.remove(slot)
                settle(run, error: error)
            }
            return
        }
        guard !wideRuns.isEmpty else {
            settle(first, error: error)
            for run in rest { settle(run, error: error) }
            return
        }
        // Both kinds: the older run first, as they began.
        var runs = wideRuns.filter { $0.isPending(slot) }
        for run in runs { run.pending?.remove(slot) }
        runs += [first] + rest
        runs.sort { $0.number < $1.number }
        for run in runs { settle(run, error: error) }
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
