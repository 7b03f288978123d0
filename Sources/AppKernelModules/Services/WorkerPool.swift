/// Numbered pieces of work (services to start or shut down) waiting for a worker, and the workers:
/// main-actor tasks that each take pieces one after another and await the body with each.
///
/// Workers, not a task per service: before each call a worker makes sure a standby worker is
/// scheduled when more work waits — the standby runs only once the main actor is free, that is,
/// once every worker is suspended inside a call. So calls that do not suspend run back to back
/// in one task, and each call that does suspend (I/O) gets the next piece of work begun beside
/// it: as many concurrent calls as there are suspended ones, up to `limit`. At most one worker is
/// pending (created, not yet running) at a time.
///
/// The work is taken first come, first served, or — with `lowestFirst` — the lowest number
/// first (from a binary heap).
@MainActor
final class WorkerPool {
    /// A task that calls the pool's body for one piece of work after another.
    final class Worker {
        var task: Task<Void, Never>?
        /// Given up on: its current call ran out of time. It no longer counts against the
        /// pool's limit and takes nothing more, even if that call returns one day.
        var abandoned = false
    }

    /// The work waiting: a queue from `head` on, or (`lowestFirst`) a binary min-heap.
    private var waiting: [Int] = []
    private var head = 0
    private let lowestFirst: Bool
    /// Whether a worker has been created and has not run yet.
    private var standby = false
    /// The workers that count against the limit.
    private var active = 0
    private let limit: Int
    private let body: @MainActor (Int, Worker) async -> Void
    /// Worker tasks this pool has created (tests count them).
    private(set) var tasksCreated = 0

    /// A pool calling `body` with each piece of work, at most `limit` at once.
    init(limit: Int = .max, lowestFirst: Bool = false, _ body: @escaping @MainActor (Int, Worker) async -> Void) {
        self.limit = limit
        self.lowestFirst = lowestFirst
        self.body = body
    }

    /// Queues `work` for a worker.
    func add(_ work: Int) {
        waiting.append(work)
        if lowestFirst { siftUp(waiting.count - 1) }
        schedule()
    }

    /// `worker` ran out of time on its call: stop counting it, cancel its task, and let another
    /// worker take over.
    func abandon(_ worker: Worker) {
        guard !worker.abandoned else { return }
        worker.abandoned = true
        active -= 1
        worker.task?.cancel()
        schedule()
    }

    private var isEmpty: Bool { head == waiting.count }

    private func take() -> Int? {
        guard !isEmpty else { return nil }
        guard lowestFirst else {
            let work = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return work
        }
        let lowest = waiting[0]
        let last = waiting.removeLast()
        if !waiting.isEmpty {
            waiting[0] = last
            siftDown(0)
        }
        return lowest
    }

    private func siftUp(_ index: Int) {
        var child = index
        while child > 0, waiting[(child - 1) / 2] > waiting[child] {
            waiting.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    private func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var lowest = parent
            if left < waiting.count, waiting[left] < waiting[lowest] { lowest = left }
            if right < waiting.count, waiting[right] < waiting[lowest] { lowest = right }
            guard lowest != parent else { return }
            waiting.swapAt(parent, lowest)
            parent = lowest
        }
    }

    private func schedule() {
        guard !standby, active < limit, !isEmpty else { return }
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
        while !worker.abandoned, let work = take() {
            // A standby, in case this call suspends.
            schedule()
            await body(work, worker)
        }
        if !worker.abandoned { active -= 1 }
        schedule()
    }
}
