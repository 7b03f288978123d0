import AppKernelCore
public import AppKernel

/// A virtual clock for deterministic tests: time moves only when the test advances it.
///
/// It serves two kinds of waiting:
/// - **Kernel timers** (background-task expiry, suspension, completion deadlines), scheduled
///   through `SchedulingClock`: run synchronously on the main actor, in deadline order, while
///   ``advance(by:)`` moves time — fully deterministic.
/// - **Sleepers** (`try await clock.sleep(for:)` in app code): resumed in deadline order; after
///   resuming one, the clock yields so the woken task can run before time moves on.
///
/// ```swift
/// let clock = TestClock()
/// let host = SimulatedHost(clock: clock)
/// let app = try host.launch(delegate: AppDelegate())
/// try host.moveToBackground()
/// await clock.advance(by: .seconds(5))   // the grace period passes
/// #expect(app.state == .suspended)
/// ```
public final class TestClock: SchedulingClock, Sendable {
    /// An instant on a ``TestClock``: the time since the clock's origin.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration
        /// Creates the instant `offset` after the origin.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier instants sort first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// "t+1.5 seconds".
        public var description: String { "t+\(offset)" }
    }

    private enum Waiter {
        case sleeper(CheckedContinuation<Void, any Error>)
        case timer(@MainActor @Sendable () -> Void)
    }

    /// One timer or sleeper, from its creation to its end. The queue holds it, so an advance
    /// finds what is due without a lookup by identifier (a hash probe per waiter — a cache miss
    /// each once thousands wait).
    ///
    /// `@unchecked Sendable`: its one mutable property is read and written only while holding
    /// the clock's `state` lock.
    private final class Slot: @unchecked Sendable {
        enum Phase {
            /// A sleeper not yet in the queue.
            case unregistered
            /// Waiting in the queue.
            case pending(Waiter)
            /// A sleeper cancelled before it reached the queue.
            case cancelledEarly
            /// Fired, woken or cancelled.
            case done
        }

        var phase: Phase

        init(_ phase: Phase) { self.phase = phase }

        var isPending: Bool { if case .pending = phase { true } else { false } }
    }

    private struct State {
        var now: Instant
        var nextID = 0
        /// The waiters in deadline order (ties: first scheduled); cancelled ones are dropped when
        /// they reach the front, or compacted away once they outnumber the live ones. O(1)
        /// schedule and pop for timers scheduled in deadline order, O(log n) otherwise; O(1)
        /// cancel.
        var queue = DueQueue<Instant, Slot>()
        /// Waiters in the queue that are still pending, and how many of them are sleepers.
        var pendingCount = 0
        var sleeperCount = 0

        mutating func insert(_ waiter: Waiter, deadline: Instant, in slot: Slot) {
            nextID += 1
            slot.phase = .pending(waiter)
            if case .sleeper = waiter { sleeperCount += 1 }
            pendingCount += 1
            queue.insert(deadline, id: nextID, value: slot)
            if queue.count > 64, queue.count > 2 * pendingCount {
                queue.compact(isLiveItem: { $0.value.isPending })
            }
        }

        /// Ends `slot`'s wait; returns its waiter if it was pending.
        mutating func take(_ slot: Slot) -> Waiter? {
            guard case .pending(let waiter) = slot.phase else { return nil }
            slot.phase = .done
            pendingCount -= 1
            if case .sleeper = waiter { sleeperCount -= 1 }
            return waiter
        }

        /// The earliest pending waiter.
        mutating func top() -> DueQueue<Instant, Slot>.Item? {
            queue.first(isLiveItem: { $0.value.isPending })
        }

        /// Removes and returns the earliest waiter due at or before `limit` (ties: first scheduled).
        mutating func popDue(notAfter limit: Instant) -> Waiter? {
            guard let first = top(), first.key <= limit else { return nil }
            queue.removeFirst(first)
            if first.key > now { now = first.key }
            return take(first.value)
        }

        /// The pending waiters, earliest first.
        var ordered: [(deadline: Instant, waiter: Waiter)] {
            queue.items
                .filter { $0.value.isPending }
                .sorted { $0.key < $1.key || ($0.key == $1.key && $0.id < $1.id) }
                .compactMap { item in
                    guard case .pending(let waiter) = item.value.phase else { return nil }
                    return (item.key, waiter)
                }
        }
    }

    /// Under an `NSLock`, not a `Mutex`: ThreadSanitizer models the first (AppKernelCore's `Locked`).
    private let state: Locked<State>

    /// Creates a clock whose time starts at `now` (the origin by default).
    public init(now: Instant = Instant(offset: .zero)) {
        state = Locked(State(now: now))
    }

    /// The current virtual time.
    public var now: Instant { state.withLock { $0.now } }

    /// Suspends for `duration` of virtual time, on the caller's actor (see
    /// ``sleep(until:tolerance:)``).
    /// - Throws: `CancellationError` if the task is cancelled first.
    nonisolated(nonsending)
    public func sleep(for duration: Duration, tolerance: Duration? = nil) async throws {
        try await sleep(until: now.advanced(by: duration), tolerance: tolerance)
    }

    /// Zero: virtual time has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Suspends until the clock is advanced to `deadline` (returns at once if it has passed).
    ///
    /// It runs on the caller's actor (`nonisolated(nonsending)`): a main-actor task woken by
    /// ``advance(by:)`` goes straight back to the main actor's queue, never through the global
    /// executor, so the yields that follow run it in a fixed order.
    /// - Throws: `CancellationError` if the task is cancelled first.
    nonisolated(nonsending)
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let slot = Slot(.unregistered)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Bool, CancellationError> = state.withLock { state in
                    if case .cancelledEarly = slot.phase { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(true) }
                    state.insert(.sleeper(continuation), deadline: deadline, in: slot)
                    return .success(false)
                }
                switch outcome {
                case .failure(let error): continuation.resume(throwing: error)
                case .success(true): continuation.resume()
                case .success(false): break
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                if case .unregistered = slot.phase {
                    slot.phase = .cancelledEarly
                    return nil
                }
                guard case .sleeper(let continuation)? = state.take(slot) else { return nil }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Schedules a main-actor timer `delay` from now (`SchedulingClock`).
    @MainActor
    public func scheduleTimer(after delay: Duration, _ action: @escaping @MainActor @Sendable () -> Void) -> ScheduledTimer {
        let slot = Slot(.done)
        state.withLock { state in
            state.insert(.timer(action), deadline: state.now.advanced(by: max(delay, .zero)), in: slot)
        }
        return ScheduledTimer { [weak self] in
            _ = self?.state.withLock { state in state.take(slot) }
        }
    }

    /// Moves time forward by `duration`, running every timer and waking every sleeper that
    /// falls due on the way, in deadline order.
    @MainActor
    public func advance(by duration: Duration = .zero) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves time forward to `deadline` (never backward), running every timer and waking every
    /// sleeper that falls due on the way, in deadline order.
    @MainActor
    public func advance(to deadline: Instant) async {
        await advance(to: deadline, yieldingAlways: true)
    }

    /// Moves time forward to `deadline`; yields to woken tasks after each woken sleeper, and at
    /// the end only when `yieldingAlways` or a sleeper woke (the lifecycle explorer's fast path:
    /// an app that only uses timers runs without a single hop of the main actor).
    @MainActor
    func advance(to deadline: Instant, yieldingAlways: Bool) async {
        var woke = false
        while let due = state.withLock({ $0.popDue(notAfter: deadline) }) {
            switch due {
            case .timer(let action):
                action()
            case .sleeper(let continuation):
                continuation.resume()
                woke = true
                await TestClock.yieldToWokenTasks()
            }
        }
        state.withLock { state in
            if deadline > state.now { state.now = deadline }
        }
        if yieldingAlways || woke { await TestClock.yieldToWokenTasks() }
    }

    /// Ends every pending wait without moving time: each sleeper is resumed with
    /// `CancellationError` (its task goes on, as after a cancel) and each timer dropped unrun.
    /// What a test's end does, so that no task stays suspended on a clock nobody advances.
    /// - Returns: How many sleepers and timers were ended.
    @discardableResult
    public func cancelPending() -> (sleepers: Int, timers: Int) {
        let ended: [Waiter] = state.withLock { state in
            var ended: [Waiter] = []
            while let first = state.top() {
                state.queue.removeFirst(first)
                if let waiter = state.take(first.value) { ended.append(waiter) }
            }
            return ended
        }
        var counts = (sleepers: 0, timers: 0)
        for waiter in ended {
            switch waiter {
            case .sleeper(let continuation):
                continuation.resume(throwing: CancellationError())
                counts.sleepers += 1
            case .timer:
                counts.timers += 1
            }
        }
        return counts
    }

    /// Moves time forward by `duration` without running anything: what happens while the main
    /// actor is busy with synchronous work. Timers that fall due meanwhile run at the next
    /// ``advance(by:)``, late, as they would on a real main actor. Use it inside a synchronous
    /// hook to make it "take" time (slow-hook reports).
    public func simulateWork(for duration: Duration) {
        state.withLock { state in state.now = state.now.advanced(by: max(duration, .zero)) }
    }

    /// Advances to each pending deadline in turn until nothing is pending.
    /// - Parameter maxSteps: A guard against work that keeps rescheduling itself forever.
    /// - Throws: ``TestClockError/runaway(steps:pending:)`` when `maxSteps` deadlines passed and
    ///   work is still pending.
    @MainActor
    public func run(maxSteps: Int = 10_000) async throws(TestClockError) {
        var steps = 0
        while let next = nextDeadline {
            guard steps < maxSteps else { throw .runaway(steps: steps, pending: pendingCount) }
            await advance(to: next)
            steps += 1
        }
    }

    /// How many timers and sleepers are waiting.
    public var pendingCount: Int { state.withLock { $0.pendingCount } }

    /// How many tasks are asleep on this clock (timers not counted).
    public var sleeperCount: Int {
        state.withLock { $0.sleeperCount }
    }

    /// Yields the main actor until at least `count` tasks sleep on this clock: the way to let
    /// tasks a test started reach their `sleep` before it advances time.
    /// - Parameters:
    ///   - count: How many sleepers to wait for.
    ///   - maxYields: A guard against waiting for a sleep that never comes.
    /// - Throws: ``TestClockError/stalled(expected:sleeping:)`` after `maxYields` yields.
    @MainActor
    public func waitForSleepers(_ count: Int, maxYields: Int = 10_000) async throws(TestClockError) {
        for _ in 0..<maxYields {
            if sleeperCount >= count { return }
            await Task.yield()
        }
        if sleeperCount < count { throw .stalled(expected: count, sleeping: sleeperCount) }
    }

    /// The earliest deadline anything waits for.
    public var nextDeadline: Instant? { state.withLock { $0.top()?.key } }

    /// One timer or sleeper waiting on the clock.
    public struct PendingWaiter: Sendable, Hashable, CustomStringConvertible {
        /// What waits.
        public enum Kind: String, Sendable, Hashable {
            /// A kernel timer (`SchedulingClock`): a background deadline, a completion deadline, a
            /// phase deadline, a grace period.
            case timer
            /// A task in `clock.sleep(for:)`.
            case sleeper
        }

        /// What waits.
        public var kind: Kind
        /// When it is due.
        public var deadline: Instant

        /// "a timer due at t+5.0 seconds".
        public var description: String { "a \(kind.rawValue) due at \(deadline)" }
    }

    /// Every timer and sleeper waiting, earliest first (ties: first scheduled) — what the
    /// `appKernel` test trait's exhaustive check reports when a test ends with work pending.
    public var pendingWaiters: [PendingWaiter] {
        state.withLock { state in
            state.ordered.map { pending in
                switch pending.waiter {
                case .sleeper: PendingWaiter(kind: .sleeper, deadline: pending.deadline)
                case .timer: PendingWaiter(kind: .timer, deadline: pending.deadline)
                }
            }
        }
    }

    /// Throws when anything is still waiting: a test that ends with pending work usually forgot
    /// to advance the clock, or left a task or a timer running.
    /// - Throws: ``TestClockError/pendingWork(_:)`` listing what waits and when it is due.
    public func checkNothingPending() throws(TestClockError) {
        let waiting = pendingWaiters.map(\.description)
        if !waiting.isEmpty { throw .pendingWork(waiting) }
    }

    /// Lets tasks woken by a resumed sleeper run before time moves on. Resuming a continuation
    /// enqueues its task; yielding the main actor a few times lets it (and what it awaits next)
    /// run first.
    @MainActor
    private static func yieldToWokenTasks() async {
        for _ in 0..<16 { await Task.yield() }
    }
}

/// What ``TestClock`` reports when a test leaves work behind.
public enum TestClockError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Work was still waiting; each string says what and when it is due.
    case pendingWork([String])
    /// ``TestClock/run(maxSteps:)`` gave up after `steps` deadlines with `pending` waiters left.
    case runaway(steps: Int, pending: Int)
    /// ``TestClock/waitForSleepers(_:maxYields:)`` expected `expected` sleepers and saw `sleeping`.
    case stalled(expected: Int, sleeping: Int)

    /// What is wrong and how to fix the test.
    public var description: String {
        switch self {
        case .pendingWork(let waiting):
            "the test clock still has pending work: \(waiting.joined(separator: "; ")). Advance the clock past these deadlines (clock.advance(by:) or clock.run()), or cancel what scheduled them."
        case .runaway(let steps, let pending):
            "TestClock.run() passed \(steps) deadlines and \(pending) waiters are still pending: something reschedules itself forever. Advance by a fixed duration instead."
        case .stalled(let expected, let sleeping):
            "waited for \(expected) tasks to sleep on the test clock, but only \(sleeping) did: the work under test finished, failed or waits on something else."
        }
    }
}
