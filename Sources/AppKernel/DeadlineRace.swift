/// Decides the race between a piece of async work and its deadline timer: whichever calls
/// ``settle()`` first wins, and the timer is cancelled. The BootLoader's async phases and the
/// SDK manager's launch phases use it with ``Application/scheduleTimer(after:_:)``.
///
/// ```swift
/// let race = DeadlineRace()
/// let work = Task { @MainActor in try await phase(); if race.settle() { finished() } }
/// race.timer = app.scheduleTimer(after: .seconds(20)) { if race.settle() { work.cancel(); timedOut() } }
/// ```
@MainActor
public final class DeadlineRace {
    /// The deadline timer; cancelled when the race is settled.
    public var timer: ScheduledTimer?
    private var settled = false

    /// Creates an unsettled race.
    public init() {}

    /// Whether the race is over.
    public var isSettled: Bool { settled }

    /// Settles the race: `true` for the first caller (the winner), `false` for any later one.
    public func settle() -> Bool {
        guard !settled else { return false }
        settled = true
        timer?.cancel()
        return true
    }
}
