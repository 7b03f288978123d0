/// A clock that can also run main-actor timers itself, deterministically.
///
/// The kernel schedules its timers (background-task expiry, suspension, completion deadlines)
/// on the injected clock. With any `Clock` it does so by sleeping in a task. A clock that adopts
/// this protocol — AppKernelTesting's `TestClock` — runs them instead, synchronously and in
/// deadline order, when time is advanced: no task hop, no yield, no flakiness.
public protocol SchedulingClock: Clock where Duration == Swift.Duration {
    /// Runs `action` on the main actor once `delay` has passed on this clock, unless the
    /// returned timer is cancelled first. Timers due at the same instant run in the order they
    /// were scheduled.
    @MainActor
    func scheduleTimer(after delay: Swift.Duration, _ action: @escaping @MainActor @Sendable () -> Void) -> ScheduledTimer
}

/// A timer scheduled on a clock; cancel it to stop it from firing.
public final class ScheduledTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    /// Creates a timer handle that calls `onCancel` when cancelled.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Stops the timer from firing. Calling it after it fired, or twice, does nothing.
    public func cancel() { onCancel() }
}

/// The application's view of its injected clock: elapsed time and timers, without the clock's
/// generic instant type leaking into the kernel.
struct KernelClock: Sendable {
    let elapsed: @Sendable () -> Duration
    let schedule: @MainActor @Sendable (Duration, @escaping @MainActor @Sendable () -> Void) -> ScheduledTimer

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        if let scheduling = clock as? any SchedulingClock {
            schedule = { delay, action in scheduling.scheduleTimer(after: delay, action) }
        } else {
            schedule = { delay, action in
                let deadline = clock.now.advanced(by: delay)
                let task = Task { @MainActor in
                    do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                    action()
                }
                return ScheduledTimer { task.cancel() }
            }
        }
    }
}
