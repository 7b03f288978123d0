/// The answer to an event that carries a completion handler (a remote notification, a
/// background fetch, a quick action, a watch app's request), guaranteed to be given exactly once.
///
/// The app calls its completion handler; the first call decides the answer and later calls
/// are ignored (and reported in ``Application/diagnostics``). If the app does not answer within
/// ``ApplicationConfiguration/completionDeadline``, the system answers with the default
/// (`.failed`, `false`, an empty reply); if the app terminates first, likewise. The host awaits ``value()``.
@MainActor
public final class Completion<Value: Sendable> {
    /// The name of the event this answers (`"remoteNotification"`, …).
    public let event: String
    /// The answer, once given.
    public private(set) var result: Value?
    /// Whether the app gave the answer (`false` when the system answered for it).
    public private(set) var answeredByApp = false
    /// How many times the app called the handler after the answer was given (each ignored).
    public private(set) var ignoredCalls = 0

    let fallback: Value
    private var waiters: [CheckedContinuation<Value, Never>] = []
    private var deadline: ScheduledTimer?
    var onFinish: [@MainActor (Completion<Value>) -> Void] = []
    weak var application: Application?

    /// Creates a pending completion for `event`, answered with `fallback` when the app does not answer.
    public init(event: String, fallback: Value) {
        self.event = event
        self.fallback = fallback
    }

    /// Whether the answer has been given.
    public var isCompleted: Bool { result != nil }

    /// The handler the app receives: it answers on the first call and ignores later ones.
    public var handler: @MainActor @Sendable (Value) -> Void {
        { [self] value in self.finish(value, byApp: true) }
    }

    /// Waits for the answer (returns at once when it has been given).
    public func value() async -> Value {
        if let result { return result }
        return await withCheckedContinuation { waiters.append($0) }
    }

    func arm(clock: KernelClock, after delay: Duration) {
        guard result == nil, deadline == nil else { return }
        deadline = clock.schedule(delay) { [weak self] in
            guard let self, self.result == nil else { return }
            self.application?.report(.completionDeadlineExceeded, subject: self.event,
                                     "the completion handler was not called within \(delay); the system answered \(self.fallback) for the app. Call it on every path, including failures.")
            self.finish(self.fallback, byApp: false)
        }
    }

    /// The system answers with the fallback (termination, expiry). Does nothing once answered.
    func abandon() { answerForApp(fallback) }

    /// The system answers `value` on the app's behalf. Does nothing once answered.
    func answerForApp(_ value: Value) {
        guard result == nil else { return }
        finish(value, byApp: false)
    }

    private func finish(_ value: Value, byApp: Bool) {
        guard result == nil else {
            if byApp {
                ignoredCalls += 1
                application?.report(.completionCalledTwice, subject: event,
                                    "the completion handler was called again with \(value); the first answer (\(result.map { "\($0)" } ?? "?")) stands and this call was ignored.")
            }
            return
        }
        result = value
        answeredByApp = byApp
        deadline?.cancel()
        deadline = nil
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter.resume(returning: value) }
        let finishers = onFinish
        onFinish.removeAll()
        for finisher in finishers { finisher(self) }
    }
}
