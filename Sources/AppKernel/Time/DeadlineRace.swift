
/// Decides the race between a piece of async work and its deadline timer: whichever calls
/// ``settle()`` first wins, and the timer is cancelled. The BootLoader's async phases and the
/// service registry's starts use it with ``Application/scheduleTimer(after:_:)``; to simply await
/// work with a deadline, use ``Application/run(withDeadline:_:)``.
///
/// ```swift
/// let race = DeadlineRace()
/// let work = Task { @MainActor in try await phase(); if race.settle() { finished() } }
/// race.timer = app.scheduleTimer(after: .seconds(20)) { if race.settle() { work.cancel(); timedOut() } }
/// ```
@MainActor
package final class DeadlineRace {
    /// The deadline timer; cancelled when the race is settled.
    package var timer: ScheduledTimer?
    private var settled = false

    /// Creates an unsettled race.
    package init() {}

    /// Whether the race is over.
    package var isSettled: Bool { settled }

    /// Settles the race: `true` for the first caller (the winner), `false` for any later one.
    package func settle() -> Bool {
        guard !settled else { return false }
        settled = true
        timer?.cancel()
        return true
    }
}

extension Application {
    /// Runs `body` in a main-actor task and waits for it — at most `deadline` on the
    /// application's clock. When the deadline passes first, the task is cancelled and the result
    /// is `nil`; when the waiting task is cancelled, so is `body`'s.
    package func run<T: Sendable>(withDeadline deadline: Duration, _ body: @escaping @MainActor () async -> T) async -> T? {
        let work = CancellationRelay()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                let race = DeadlineRace()
                let task = Task { @MainActor in
                    let value = await body()
                    if race.settle() { continuation.resume(returning: value) }
                }
                work.set { task.cancel() }
                race.timer = scheduleTimer(after: deadline) {
                    guard race.settle() else { return }
                    work.fire()
                    continuation.resume(returning: nil)
                }
            }
        } onCancel: {
            work.fire()
        }
    }
}
