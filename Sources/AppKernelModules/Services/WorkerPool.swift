import AppKernelCore

/// Numbered pieces of work (services to start or shut down) and the main-actor workers that await the body
/// with each, one after another. Before each call a worker schedules one standby if more work waits; it runs
/// once every worker is suspended, so calls that do not suspend run back to back in one task and each that
/// does (I/O) gets the next begun beside it, up to `limit` at once. The work is taken first come, first
/// served, or — with `lowestFirst` — the lowest number first (a shutdown's ranks).
@MainActor
final class WorkerPool {
    /// A task that calls the pool's body for one piece of work after another.
    final class Worker {
        var task: Task<Void, Never>?
        /// Its call ran out of time: it no longer counts against the limit and takes nothing more.
        var abandoned = false
    }

    /// The work waiting (one value: each operation on it is one access).
    private var waiting: Waiting
    /// Whether a worker has been created and has not run yet.
    private var standby = false
    /// The workers counting against the limit.
    private var active = 0
    private let limit: Int
    private let body: @MainActor (Int, Worker) async -> Void
    /// Worker tasks this pool has created (tests count them).
    private(set) var tasksCreated = 0

    /// A pool calling `body` with each piece of work, at most `limit` at once.
    init(limit: Int = .max, lowestFirst: Bool = false, _ body: @escaping @MainActor (Int, Worker) async -> Void) {
        self.limit = limit
        self.waiting = Waiting(lowestFirst: lowestFirst)
        self.body = body
    }

    func add(_ work: Int) {
        waiting.add(work)
        schedule()
    }

    /// `worker` ran out of time on its call: stop counting it, cancel its task, let another take over.
    func abandon(_ worker: Worker) {
        guard !worker.abandoned else { return }
        worker.abandoned = true
        active -= 1
        worker.task?.cancel()
        schedule()
    }

    private func schedule() {
        guard !standby, active < limit, !waiting.isEmpty else { return }
        standby = true
        active += 1
        tasksCreated += 1
        let worker = Worker()
        worker.task = Task { @MainActor in
            self.standby = false
            await self.work(worker)
        }
    }

    private func work(_ worker: Worker) async {
        while !worker.abandoned, let work = waiting.take() {
            schedule()   // a standby, in case this call suspends
            await body(work, worker)
        }
        if !worker.abandoned { active -= 1 }
        schedule()
    }
}

/// What waits for a worker, earliest first: by arrival or — with `lowestFirst` — by number. Core's
/// `DueQueue` keeps what arrives in order (the usual case) in O(1) and the rest in a heap.
private struct Waiting {
    let lowestFirst: Bool
    var queue = DueQueue<Int, Int>()
    var arrivals = 0
    var isEmpty: Bool { queue.count == 0 }

    mutating func add(_ work: Int) {
        arrivals += 1
        let key = lowestFirst ? work : arrivals
        queue.insert(key, id: key, value: work)
    }

    mutating func take() -> Int? {
        guard let item = queue.first(isLiveItem: { _ in true }) else { return nil }
        queue.removeFirst(item)
        return item.value
    }
}
