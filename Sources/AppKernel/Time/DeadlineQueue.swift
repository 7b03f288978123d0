/// Many deadlines on the application's clock behind one timer: a min-heap of due times, each with
/// an integer tag, and one timer armed for the earliest; when one passes, `onDue` gets its tag. A
/// thousand services starting with a 20-second deadline each hold one timer and a few bytes
/// each — no task, no closure per deadline.
///
/// Adding and removing a deadline are O(log n) amortised. A removed deadline stays in the heap as
/// a stale entry until it reaches the top or until stale entries outnumber live ones, when the
/// heap is rebuilt (O(n), amortised over the removals); with none live, the heap is emptied. The
/// timer stays armed when the last deadline is removed (re-arming costs a timer each time on a
/// real clock): it fires, finds nothing, and stops — or the owner calls ``releaseTimerIfIdle()``
/// once its work is done.
///
/// ```swift
/// let deadlines = DeadlineQueue(application: app) { tag in timedOut(tag) }
/// let id = deadlines.add(after: .seconds(20), tag: 7)
/// deadlines.remove(id)              // the work finished in time
/// deadlines.releaseTimerIfIdle()
/// ```
@MainActor
package final class DeadlineQueue {
    private struct Item {
        let due: Duration
        let id: Int
    }

    private let application: Application
    private let onDue: @MainActor (Int) -> Void
    private var heap: [Item] = []
    /// The tag of each deadline by `id - base`; `nil` once it fired or was removed.
    private var tags: [Int?] = []
    private var base = 0
    private var live = 0
    private var timer: ScheduledTimer?
    private var armedFor: Duration?

    /// A queue on `application`'s clock that hands `onDue` the tag of each deadline that passes.
    package init(application: Application, onDue: @escaping @MainActor (Int) -> Void) {
        self.application = application
        self.onDue = onDue
    }

    /// The number of deadlines that have neither passed nor been removed.
    package var count: Int { live }

    /// Adds a deadline `delay` from now on the application's clock.
    /// - Returns: Its identifier, for ``remove(_:)``.
    @discardableResult
    package func add(after delay: Duration, tag: Int) -> Int {
        let id = base + tags.count
        let due = application.uptime + delay
        tags.append(tag)
        live += 1
        push(Item(due: due, id: id))
        if armedFor.map({ due < $0 }) ?? true { arm(at: due) }
        return id
    }

    /// Removes a deadline; nothing happens if it already passed or was removed.
    package func remove(_ id: Int) {
        guard take(id) != nil else { return }
        if live == 0 {
            heap.removeAll(keepingCapacity: true)
        } else if heap.count > 64, heap.count > 2 * live {
            rebuild()
        }
    }

    /// Cancels the timer if no deadline is left.
    package func releaseTimerIfIdle() {
        guard live == 0 else { return }
        timer?.cancel()
        timer = nil
        armedFor = nil
        heap = []
        tags = []
    }

    /// Clears the deadline `id` and returns its tag, if it was live.
    private func take(_ id: Int) -> Int? {
        let index = id - base
        guard index >= 0, index < tags.count, let tag = tags[index] else { return nil }
        tags[index] = nil
        live -= 1
        if live == 0 {
            base += tags.count
            tags.removeAll(keepingCapacity: true)
        } else if index == 0 {
            // Drop the cleared prefix once it is half the table.
            let cleared = tags.prefix { $0 == nil }.count
            if cleared * 2 > tags.count {
                tags.removeFirst(cleared)
                base += cleared
            }
        }
        return tag
    }

    // MARK: Firing

    private func arm(at due: Duration) {
        timer?.cancel()
        armedFor = due
        timer = application.scheduleTimer(after: max(due - application.uptime, .zero)) { [weak self] in self?.fire() }
    }

    /// Hands over every deadline that is due, in due order (ties: the order they were added), then
    /// arms the timer for the next one.
    private func fire() {
        timer = nil
        armedFor = nil
        let now = application.uptime
        while let top = heap.first, top.due <= now {
            pop()
            // `onDue` may add or remove deadlines; the heap is consistent between calls.
            if let tag = take(top.id) { onDue(tag) }
        }
        if live == 0 {
            heap.removeAll(keepingCapacity: false)
        } else if let next = heap.first, timer == nil {
            arm(at: next.due)
        }
    }

    // MARK: The heap, ordered by (due, id)

    private static func precedes(_ lhs: Item, _ rhs: Item) -> Bool {
        lhs.due != rhs.due ? lhs.due < rhs.due : lhs.id < rhs.id
    }

    private func push(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, Self.precedes(heap[left], heap[first]) { first = left }
            if right < heap.count, Self.precedes(heap[right], heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }

    /// Drops the removed deadlines and restores the heap order (Floyd's construction, O(n)).
    private func rebuild() {
        heap.removeAll { item in
            let index = item.id - base
            return index < 0 || index >= tags.count || tags[index] == nil
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        if let next = heap.first, armedFor.map({ next.due < $0 }) ?? true { arm(at: next.due) }
    }
}
