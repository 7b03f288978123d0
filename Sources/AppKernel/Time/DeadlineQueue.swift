import AppKernelCore

/// Many deadlines on the application's clock behind one timer: a ``DueQueue`` of due times, each
/// with an integer tag, and one timer armed for the earliest; when one passes, `onDue` gets its tag. A
/// thousand services starting with a 20-second deadline each hold one timer and a few bytes
/// each — no task, no closure per deadline.
///
/// Adding and removing a deadline are O(1) amortised when deadlines are added in due order (the
/// same delay each time) and O(log n) otherwise. A removed deadline stays queued as a stale entry
/// until it reaches the front or until stale entries outnumber live ones, when the queue is
/// compacted (O(n), amortised over the removals); with none live, the queue is emptied. The
/// table of tags drops its cleared prefix once that is half of it, so deadlines removed in about
/// the order they were added (a stream of starts) keep it about twice the live ones. The
/// timer stays armed when the last deadline is removed (re-arming costs a timer each time on a
/// real clock): it fires, finds nothing, and stops — or the owner calls ``releaseTimerIfIdle()``
/// once its work is done.
///
/// The queue keeps the application's clock, not the application: its owner may outlive the
/// application (a service registry shutting down after its application was freed) and the
/// deadlines still pass.
///
/// ```swift
/// let deadlines = DeadlineQueue(application: app) { tag in timedOut(tag) }
/// let id = deadlines.add(after: .seconds(20), tag: 7)
/// deadlines.remove(id)              // the work finished in time
/// deadlines.releaseTimerIfIdle()
/// ```
@MainActor
package final class DeadlineQueue {
    /// The application's clock (a value: the queue never keeps the application alive).
    private let clock: KernelClock
    private let onDue: @MainActor (Int) -> Void
    /// The deadlines themselves, in one value: each operation is one access to it (not one per
    /// field, each checked for exclusivity at run time).
    private var state = State()
    private var timer: ScheduledTimer?
    private var armedFor: Duration?

    /// The due times and tags.
    private struct State {
        var queue = DueQueue<Duration, Void>()
        /// The tag of each deadline by `id - base`; `nil` once it fired or was removed.
        var tags: [Int?] = []
        var base = 0
        /// Where the first live deadline is in `tags` (every one before it is cleared).
        var firstLive = 0
        var live = 0

        /// Adds a deadline due at `due`; returns its identifier.
        mutating func add(due: Duration, tag: Int) -> Int {
            let id = base + tags.count
            tags.append(tag)
            live += 1
            queue.insert(due, id: id)
            return id
        }

        /// Removes a deadline, if live; keeps the queue at most about twice the live deadlines.
        mutating func remove(_ id: Int) {
            guard take(id) != nil else { return }
            if live == 0 {
                queue.removeAll()
            } else if queue.count > 64, queue.count > 2 * live {
                compact()
            }
        }

        /// Drops every removed deadline from the queue (its copy of `tags` is gone when it returns).
        mutating func compact() {
            let tags = self.tags, base = self.base
            queue.compact { id in Self.isLive(id, tags: tags, base: base) }
        }

        /// Clears the deadline `id` and returns its tag, if it was live. The cleared prefix of
        /// `tags` is dropped once it is half the table, so removing deadlines in the order they
        /// were added keeps the table about twice the live ones.
        mutating func take(_ id: Int) -> Int? {
            let index = id - base
            guard index >= 0, index < tags.count, let tag = tags[index] else { return nil }
            tags[index] = nil
            live -= 1
            if live == 0 {
                base += tags.count
                tags.removeAll(keepingCapacity: true)
                firstLive = 0
            } else if index == firstLive {
                while tags[firstLive] == nil { firstLive += 1 }
                if firstLive > 64, firstLive * 2 > tags.count {
                    tags.removeFirst(firstLive)
                    base += firstLive
                    firstLive = 0
                }
            }
            return tag
        }

        /// Takes the earliest deadline due by `now`, if any: its tag (dead entries are dropped).
        mutating func takeDue(by now: Duration) -> Int? {
            while let first = first(), first.key <= now {
                queue.removeFirst(first)
                if let tag = take(first.id) { return tag }
            }
            return nil
        }

        /// The earliest live deadline (dead entries before it are dropped). Its copy of `tags` is
        /// gone when it returns, so the table is not copied when it is next written.
        mutating func first() -> DueQueue<Duration, Void>.Item? {
            let tags = self.tags, base = self.base
            return queue.first { Self.isLive($0, tags: tags, base: base) }
        }

        static func isLive(_ id: Int, tags: [Int?], base: Int) -> Bool {
            let index = id - base
            return index >= 0 && index < tags.count && tags[index] != nil
        }
    }

    /// A queue on `application`'s clock that hands `onDue` the tag of each deadline that passes.
    package init(application: Application, onDue: @escaping @MainActor (Int) -> Void) {
        self.clock = application.clock
        self.onDue = onDue
    }

    /// The number of deadlines that have neither passed nor been removed.
    package var count: Int { state.live }

    /// Adds a deadline `delay` from now on the application's clock.
    /// - Returns: Its identifier, for ``remove(_:)``.
    @discardableResult
    package func add(after delay: Duration, tag: Int) -> Int {
        let due = clock.elapsed() + delay
        let id = state.add(due: due, tag: tag)
        if armedFor.map({ due < $0 }) ?? true { arm(at: due) }
        return id
    }

    /// Removes a deadline; nothing happens if it already passed or was removed.
    package func remove(_ id: Int) {
        state.remove(id)
    }

    /// Runs `action` once `delay` has passed on the queue's clock — a one-off timer outside the
    /// queue (a whole run's deadline), which works after the application is freed too.
    package func scheduleTimer(after delay: Duration, _ action: @escaping @MainActor @Sendable () -> Void) -> ScheduledTimer {
        clock.schedule(delay, action)
    }

    /// Cancels the timer if no deadline is left.
    package func releaseTimerIfIdle() {
        guard state.live == 0 else { return }
        timer?.cancel()
        timer = nil
        armedFor = nil
        state = State(base: state.base)
    }

    // MARK: Firing

    private func arm(at due: Duration) {
        timer?.cancel()
        armedFor = due
        timer = clock.schedule(max(due - clock.elapsed(), .zero)) { [weak self] in self?.fire() }
    }

    /// Hands over every deadline that is due, in due order (ties: the order they were added), then
    /// arms the timer for the next one.
    private func fire() {
        timer = nil
        armedFor = nil
        let now = clock.elapsed()
        // `onDue` may add or remove deadlines; the queue is consistent between calls.
        while let tag = state.takeDue(by: now) { onDue(tag) }
        if state.live == 0 {
            state = State(base: state.base)
        } else if let next = state.first()?.key, timer == nil {
            arm(at: next)
        }
    }
}
