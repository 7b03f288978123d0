/// A running background task.
struct BackgroundTaskRecord {
    let id: BackgroundTaskIdentifier
    let name: String?
    let expirationHandler: (@MainActor () -> Void)?
    /// Begun by the system to keep the app awake until it answers an event.
    let isSystem: Bool

    var label: String { name ?? id.description }
}

extension Application {
    /// The largest value ``backgroundTimeRemaining`` takes: the app is in the foreground and its
    /// background tasks are not limited (UIKit answers `DBL_MAX`).
    public static let unlimitedBackgroundTime = Duration.seconds(Int64.max)

    /// Asks for extra time to finish work in the background — UIKit's
    /// `beginBackgroundTask(withName:expirationHandler:)`.
    ///
    /// A backgrounded app with no running task is suspended after
    /// ``ApplicationConfiguration/suspensionGracePeriod``; with tasks, as soon as the last one ends
    /// or expires. All tasks share the app's background allowance
    /// (``ApplicationConfiguration/backgroundTaskAllowance``, counted from entering the
    /// background); when it runs out each task's `expirationHandler` runs, on the main actor, in
    /// the order the tasks began. A handler should end its task; one that does not has it ended
    /// by the system (reported in ``diagnostics``).
    ///
    /// - Parameters:
    ///   - name: A name for the task, shown in traces and diagnostics.
    ///   - expirationHandler: Runs when the allowance runs out before the task ends.
    /// - Returns: The task's identifier, or ``BackgroundTaskIdentifier/invalid`` when no task can
    ///   begin (the app is not running or is suspended, or its background time is used up).
    public func beginBackgroundTask(name: String? = nil,
                                    expirationHandler: (@MainActor () -> Void)? = nil) -> BackgroundTaskIdentifier {
        beginBackgroundTask(name: name, system: false, expirationHandler: expirationHandler)
    }

    /// Asks for extra time in the background; the expiration handler receives the task's
    /// identifier, so it can end the task without capturing a variable (Swift 6 forbids
    /// mutating a variable captured by the main-actor handler):
    ///
    /// ```swift
    /// let task = app.beginBackgroundTask(name: "upload") { task in
    ///     uploader.cancel()
    ///     app.endBackgroundTask(task)
    /// }
    /// ```
    ///
    /// Otherwise the same as the form whose handler takes no argument.
    public func beginBackgroundTask(name: String? = nil,
                                    expirationHandler: @escaping @MainActor (BackgroundTaskIdentifier) -> Void) -> BackgroundTaskIdentifier {
        var handler: (@MainActor () -> Void)?
        let task = beginBackgroundTask(name: name, system: false) { handler?() }
        handler = { expirationHandler(task) }
        return task
    }

    func beginBackgroundTask(name: String?, system: Bool, expirationHandler: (@MainActor () -> Void)?) -> BackgroundTaskIdentifier {
        let refusal: String? =
            switch state {
            case .notRunning, .terminated, .suspended: "the app is \(state)"
            case .background where backgroundTimeRemaining <= .zero: "the app's background time is used up"
            default: nil
            }
        if let refusal {
            report(.backgroundTaskRefused, subject: name ?? "unnamed task",
                   "beginBackgroundTask returned .invalid because \(refusal); begin tasks before the app leaves the foreground.")
            return .invalid
        }
        let id = BackgroundTaskIdentifier(rawValue: nextTaskNumber)
        nextTaskNumber += 1
        backgroundTasks.append(BackgroundTaskRecord(id: id, name: name, expirationHandler: expirationHandler, isSystem: system))
        if state == .background { scheduleBackgroundTimers() }
        return id
    }

    /// Marks a background task finished — UIKit's `endBackgroundTask(_:)`. When it was the last
    /// one and the app is in the background, the app is suspended (after the current delivery).
    /// (When the system's own task — keeping the app awake until it answers a remote
    /// notification or fetch — is the last to end, the grace period runs first instead.)
    ///
    /// Ending ``BackgroundTaskIdentifier/invalid`` does nothing. Ending an unknown or
    /// already-ended task does nothing either and is recorded in ``diagnostics``; it never traps.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard identifier != .invalid else { return }
        guard let index = backgroundTasks.firstIndex(where: { $0.id == identifier }) else {
            report(.unknownBackgroundTaskEnded, subject: identifier.description,
                   "endBackgroundTask named a task that is not running (already ended, expired, or never begun); nothing happened.")
            return
        }
        let ended = backgroundTasks.remove(at: index)
        guard backgroundTasks.isEmpty, state == .background else { return }
        cancelBackgroundTimers()
        if ended.isSystem {
            // The app answered the event it was woken or launched for: like any backgrounded
            // app with no task, it gets the grace period before it is suspended.
            scheduleBackgroundTimers()
        } else {
            enqueue(.suspendIfIdle)
        }
    }

    /// How long background tasks may still run: ``unlimitedBackgroundTime`` in the foreground,
    /// what is left of the allowance in the background, zero when suspended or not running.
    public var backgroundTimeRemaining: Duration {
        switch state {
        case .inactive, .active:
            return Application.unlimitedBackgroundTime
        case .background:
            guard let enteredAt = backgroundEnteredAt else { return .zero }
            let left = configuration.backgroundTaskAllowance - (clock.elapsed() - enteredAt)
            return max(left, .zero)
        case .notRunning, .suspended, .terminated:
            return .zero
        }
    }

    /// The running background tasks, in the order they began (the system's own, which keep the
    /// app awake until it answers an event, included).
    public var runningBackgroundTasks: [BackgroundTaskIdentifier] { backgroundTasks.map(\.id) }

    /// The running background tasks the app began (not the system's own), by name — or
    /// identifier when unnamed — for the testing kit's end-of-test check.
    package var openBackgroundTaskLabels: [String] { backgroundTasks.filter { !$0.isSystem }.map(\.label) }

    /// The events whose completion handler the app has not called yet (`"remoteNotification"`, …),
    /// for the testing kit's end-of-test check.
    package var unansweredCompletionEvents: [String] { pendingCompletions.values.map(\.event).sorted() }

    // MARK: Background execution

    func beginBackgroundExecution() {
        backgroundEnteredAt = clock.elapsed()
        scheduleBackgroundTimers()
    }

    func endBackgroundExecution() {
        cancelBackgroundTimers()
        backgroundEnteredAt = nil
    }

    /// With tasks: one timer for the end of the allowance. Without: the grace period.
    func scheduleBackgroundTimers() {
        if backgroundTasks.isEmpty {
            expiryTimer?.cancel()
            expiryTimer = nil
            guard graceTimer == nil else { return }
            graceTimer = clock.schedule(configuration.suspensionGracePeriod) { [weak self] in
                self?.graceTimer = nil
                self?.enqueue(.suspendIfIdle)
            }
        } else {
            graceTimer?.cancel()
            graceTimer = nil
            guard expiryTimer == nil else { return }
            expiryTimer = clock.schedule(backgroundTimeRemaining) { [weak self] in
                self?.expiryTimer = nil
                self?.enqueue(.expireBackgroundTasks)
            }
        }
    }

    func cancelBackgroundTimers() {
        graceTimer?.cancel()
        graceTimer = nil
        expiryTimer?.cancel()
        expiryTimer = nil
    }

    func suspendIfIdle() {
        guard state == .background, backgroundTasks.isEmpty else { return }
        cancelBackgroundTimers()
        state = .suspended
        observe(.system, .didSuspend)
    }

    func expireBackgroundTasks() {
        guard state == .background else { return }
        for task in backgroundTasks {
            observe(.system, .backgroundTaskExpired(task.label))
            task.expirationHandler?()
            if let index = backgroundTasks.firstIndex(where: { $0.id == task.id }) {
                backgroundTasks.remove(at: index)
                if !task.isSystem {
                    report(.backgroundTaskExpired, subject: task.label,
                           "the task ran out of background time and its expiration handler did not end it; the system ended it. Call endBackgroundTask in the handler.")
                }
            }
        }
        suspendIfIdle()
    }
}
