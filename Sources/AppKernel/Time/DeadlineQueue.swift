@_spi(AppKernelInternals) import AppKernelCore

/// Many deadlines on the application's clock behind one timer: a ``DueQueue`` of due times, each
/// with an integer tag, and one timer armed for the earliest; when one passes, `onDue` gets its tag. A
/// thousand services starting with a 20-second deadline each hold one timer and a few bytes
/// each — no task, no closure per deadline.
///
/// Adding and removing a deadline are O(1) amortised when deadlines are added in due order (the
/// same delay each time) and O(log n) otherwise. A removed deadline stays queued as a stale entry
/// until it reaches the front or until stale entries outnumber live ones, when the queue is
/// compacted (O(n), amortised over the removals); with none live, the queue is emptied. The
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
    private let application: Application
    private let onDue: @MainActor (Int) -> Void
    private var queue = DueQueue<Duration, Void>()
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
        queue.insert(due, id: id)
        if armedFor.map({ due < $0 }) ?? true { arm(at: due) }
        return id
    }

    /// Removes a deadline; nothing happens if it already passed or was removed.
    package func remove(_ id: Int) {
        guard take(id) != nil else { return }
        if live == 0 {
            queue.removeAll()
        } else if queue.count > 64, queue.count > 2 * live {
            queue.compact(isLive: isLive)
        }
    }

    /// Cancels the timer if no deadline is left.
    package func releaseTimerIfIdle() {
        guard live == 0 else { return }
        timer?.cancel()
        timer = nil
        armedFor = nil
        queue = DueQueue()
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
        while let first = queue.first(isLive: isLive), first.key <= now {
            queue.removeFirst(first)
            // `onDue` may add or remove deadlines; the queue is consistent between calls.
            if let tag = take(first.id) { onDue(tag) }
        }
        if live == 0 {
            queue = DueQueue()
        } else if let next = queue.first(isLive: isLive), timer == nil {
            arm(at: next.key)
        }
    }

    private func isLive(_ id: Int) -> Bool {
        let index = id - base
        return index >= 0 && index < tags.count && tags[index] != nil
    }
}
