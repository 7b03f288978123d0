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
/// first. Numbers usually come in increasing order (a shutdown's services become ready about in
/// reverse order of their starts), so those wait in the queue, which is then sorted, and only a
/// number lower than the queue's last waits in a binary heap beside it.
@MainActor
final class WorkerPool {
    /// A task that calls the pool's body for one piece of work after another.
    final class Worker {
        var task: Task<Void, Never>?
        /// Given up on: its current call ran out of time. It no longer counts against the
        /// pool's limit and takes nothing more, even if that call returns one day.
        var abandoned = false
    }

    /// The work waiting (one value: each operation on it is one access).
    private var waiting: Waiting
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
        self.waiting = Waiting(lowestFirst: lowestFirst)
        self.body = body
    }

    /// Queues `work` for a worker.
    func add(_ work: Int) {
        waiting.add(work)
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
            // A standby, in case this call suspends.
            schedule()
            await body(work, worker)
        }
        if !worker.abandoned { active -= 1 }
        schedule()
    }
}

/// What waits for a worker: a queue from `head` on (sorted, with `lowestFirst`) and, with
/// `lowestFirst`, a binary min-heap of the work that came out of order.
private struct Waiting {
    let lowestFirst: Bool
    var queue: [Int] = []
    var head = 0
    var heap: [Int] = []

    init(lowestFirst: Bool) { self.lowestFirst = lowestFirst }

    mutating func add(_ work: Int) {
        if lowestFirst, head < queue.count, work < queue[queue.count - 1] {
            heap.append(work)
            siftUp(heap.count - 1)
        } else {
            queue.append(work)
        }
    }

    var isEmpty: Bool { head == queue.count && heap.isEmpty }

    mutating func take() -> Int? {
        if let lowest = heap.first, head == queue.count || lowest < queue[head] {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            siftDown(0)
            return lowest
        }
        guard head < queue.count else { return nil }
        let work = queue[head]
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return work
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0, heap[(child - 1) / 2] > heap[child] {
            heap.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var lowest = parent
            if left < heap.count, heap[left] < heap[lowest] { lowest = left }
            if right < heap.count, heap[right] < heap[lowest] { lowest = right }
            guard lowest != parent else { return }
            heap.swapAt(parent, lowest)
            parent = lowest
        }
    }
}
