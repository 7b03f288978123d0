import AppKernelCore

/// How a pass through the pipeline ended.
enum Delivery<Result> {
    /// Listeners and the delegate heard the event; the delegate answered this.
    case delivered(Result)
    /// A `handle` hook stopped the event.
    case stopped(HookResult)

    /// The yes/no answer for the system: the delegate's, or the stop's.
    func answer() -> Bool where Result == Bool {
        switch self {
        case .delivered(let answer): answer
        case .stopped(let result): result.answer ?? true
        }
    }
}

extension Application {
    /// Listens for one event — the analogue of observing a UIKit notification.
    ///
    /// The listener runs synchronously on the main actor, once per event, where UIKit posts the
    /// event's notification: after the delegate's method, except for `willEnterForeground`
    /// (``ApplicationEvent/notifiesBeforeDelegate``). A listener added while an event is being
    /// delivered hears the next event, not the current one. Keep the token: cancelling it or
    /// letting it go stops delivery at once.
    ///
    /// ```swift
    /// let token = app.addListener(for: .didEnterBackground) { app in cache.flush() }
    /// ```
    public func addListener<Payload>(for event: ApplicationEvent<Payload>,
                                     _ handler: @escaping @MainActor (Payload) -> Void) -> ListenerToken {
        listeners.makeList(event.name).add(handler)
    }

    /// Listens for every published event, as ``LifecycleEvent`` values.
    public func addListener(_ handler: @escaping @MainActor (LifecycleEvent) -> Void) -> ListenerToken {
        everyEventListeners.add(handler)
    }

    /// The published events as an asynchronous sequence, from now on. The sequence ends when
    /// the application terminates; stop iterating to unsubscribe.
    ///
    /// ```swift
    /// for await event in app.lifecycleEvents() { print(event) }
    /// ```
    public func lifecycleEvents(
        bufferingPolicy: AsyncStream<LifecycleEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<LifecycleEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LifecycleEvent.self, bufferingPolicy: bufferingPolicy)
        guard state != .terminated else {
            continuation.finish()
            return stream
        }
        // A stream is an every-event listener that yields; it ends its own registration when its
        // consumer has gone.
        let box = StreamRegistration()
        box.token = everyEventListeners.add { [weak self] (event: LifecycleEvent) in
            guard case .terminated = continuation.yield(event), let token = box.token else { return }
            token.cancel()
            self?.streams.removeAll { $0.token === token }
        }
        if let token = box.token {
            streams.removeAll { $0.token.isCancelled }
            streams.append((continuation, token))
        }
        return stream
    }

    /// Observes every step of the pipeline: each publication to listeners, each delegate call and
    /// each decision of the system's, in order. For instrumentation (traces, launch timelines);
    /// apps use listeners.
    public func addPipelineObserver(_ handler: @escaping @MainActor (PipelineStage, LifecycleEvent) -> Void) -> ListenerToken {
        pipelineObservers.add { (step: PipelineStep) in handler(step.stage, step.event) }
    }

    // MARK: Publishing

    /// One pass through the pipeline: `before` hooks → `handle` hooks (a stop ends the pass) →
    /// `deliver` (the delegate; reported to pipeline observers as `stage`, `nil` when no delegate
    /// is called) → listeners → `after` hooks; for an event UIKit posts before calling its
    /// delegate (``ApplicationEvent/notifiesBeforeDelegate``), listeners before `deliver`. Hook
    /// failures are reported and the pass goes on. `runAfterHooks: false` leaves the `after`
    /// hooks to the caller (the launch runs them when the BootLoader has finished).
    ///
    /// `deliver` is handed the payload — the application for application-level events, the scene
    /// for scene events: a closure that reaches the delegate through it captures nothing, which
    /// spares the hot paths a retain and release of the application or scene per event (a slow,
    /// side-table one: both are weakly referenced).
    @discardableResult
    func publish<Payload, Result>(_ event: ApplicationEvent<Payload>, _ payload: Payload, to stage: PipelineStage?,
                                  runAfterHooks: Bool = true, _ deliver: (Payload) -> Result) -> Delivery<Result> {
        // One snapshot of the point's hooks (and of the budget) for the whole dispatch.
        let hookRun = hooks.snapshot(at: event)
        if let hookRun {
            if !pipelineObservers.isEmpty { observe(.hooks, event.record(payload)) }
            _ = try? hooks.run(hookRun.before, event, payload, hookFailurePolicy, budget: hookRun.budget, activities: hookRun.activities)
            let result = (try? hooks.run(hookRun.handle, event, payload, hookFailurePolicy, budget: hookRun.budget,
                                         activities: hookRun.activities)) ?? .continue
            if result.stops {
                if !pipelineObservers.isEmpty { observe(.hookStop(result), event.record(payload)) }
                return .stopped(result)
            }
        }
        // The record (a `LifecycleEvent`) is built only for those who take records.
        let wantsRecord = !pipelineObservers.isEmpty || !everyEventListeners.isEmpty
        let record = wantsRecord ? event.record(payload) : nil
        // UIKit's order: the delegate method, then the notification ("after calling this
        // method, the app also posts …Notification"), except where UIKit posts first.
        if event.notifiesBeforeDelegate { notifyListeners(event, payload, record) }
        if let stage, let record { observe(stage, record) }
        let value = deliver(payload)
        if !event.notifiesBeforeDelegate { notifyListeners(event, payload, record) }
        if let hookRun, runAfterHooks {
            _ = try? hooks.run(hookRun.after, event, payload, hookFailurePolicy, budget: hookRun.budget, activities: hookRun.activities)
        }
        return .delivered(value)
    }

    /// The listeners' part of a pass: the event's own listeners, then the every-event ones.
    private func notifyListeners<Payload>(_ event: ApplicationEvent<Payload>, _ payload: Payload, _ record: LifecycleEvent?) {
        if let record { observe(.listeners, record) }
        // The name fixes the payload type: ApplicationEvent's initialiser is internal and each
        // name is declared once, with one payload type.
        listeners.list(event.name)?.deliver(payload)
        if let record { everyEventListeners.deliver(record) }
    }

    /// Runs the `after` hooks of `event`, reporting failures.
    func runAfterHooksNow<Payload>(_ event: ApplicationEvent<Payload>, _ payload: Payload) {
        try? hooks.runAfter(event, payload, onFailure: hookFailurePolicy)
    }

    /// Reports a pipeline step to the observers.
    func observe(_ stage: PipelineStage, _ event: LifecycleEvent) {
        pipelineObservers.deliver(PipelineStep(stage: stage, event: event))
    }

    func finishStreams() {
        for stream in streams {
            stream.continuation.finish()
            stream.token.cancel()
        }
        streams.removeAll()
    }
}

/// What a pipeline observer receives: the step and its event.
struct PipelineStep {
    let stage: PipelineStage
    let event: LifecycleEvent
}

/// Holds a stream's token so that its own listener can end it.
@MainActor
final class StreamRegistration {
    var token: ListenerToken?
}
