/// Many deadlines on the application's clock behind one timer: a min-heap of due times, and one
/// timer armed for the earliest. Adding and removing a deadline are O(log n) amortised and cost
/// no task; a thousand services starting with a 20-second deadline each hold one timer, not a
/// thousand sleeping tasks.
///
/// Removed deadlines stay in the heap as stale entries until they reach the top or until they
/// outnumber the live ones, when the heap is rebuilt (O(n), amortised over the removals). When no
/// live deadline is left, the heap is emptied and the timer cancelled.
///
/// ```swift
/// let deadlines = DeadlineQueue(application: app)
/// let id = deadlines.add(after: .seconds(20)) { timedOut() }
/// deadlines.remove(id)              // the work finished in time
/// ```
@MainActor
package final class DeadlineQueue {
    private struct Item {
        let due: Duration
        let id: Int
    }

    private let application: Application
    private var heap: [Item] = []
    private var actions: [Int: @MainActor () -> Void] = [:]
    private var nextID = 0
    private var timer: ScheduledTimer?
    private var armedFor: Duration?

    /// A queue on `application`'s clock.
    package init(application: Application) { self.application = application }

    /// The number of deadlines that have neither fired nor been removed.
    package var count: Int { actions.count }

    /// Runs `action` once `delay` has passed on the application's clock, unless removed first.
    /// - Returns: The deadline's identifier, for ``remove(_:)``.
    @discardableResult
    package func add(after delay: Duration, _ action: @escaping @MainActor () -> Void) -> Int {
        let id = nextID
        nextID += 1
        let due = application.uptime + delay
        actions[id] = action
        push(Item(due: due, id: id))
        if armedFor.map({ due < $0 }) ?? true { arm(at: due) }
        return id
    }

    /// Removes a deadline; nothing happens if it already fired or was removed.
    package func remove(_ id: Int) {
        guard actions.removeValue(forKey: id) != nil else { return }
        if actions.isEmpty {
            heap.removeAll(keepingCapacity: false)
            timer?.cancel()
            timer = nil
            armedFor = nil
        } else if heap.count > 64, heap.count > 2 * actions.count {
            rebuild()
        }
    }

    // MARK: Firing

    private func arm(at due: Duration) {
        timer?.cancel()
        armedFor = due
        timer = application.scheduleTimer(after: max(due - application.uptime, .zero)) { [weak self] in self?.fire() }
    }

    /// Runs every deadline that is due, in due order (ties: the order they were added), then arms
    /// the timer for the next one.
    private func fire() {
        timer = nil
        armedFor = nil
        let now = application.uptime
        while let top = heap.first, top.due <= now {
            pop()
            // An action may add or remove deadlines; the heap is consistent between actions.
            if let action = actions.removeValue(forKey: top.id) { action() }
        }
        if actions.isEmpty {
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
        heap.removeAll { actions[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        if let next = heap.first, armedFor.map({ next.due != $0 }) ?? true { arm(at: next.due) }
    }
}
