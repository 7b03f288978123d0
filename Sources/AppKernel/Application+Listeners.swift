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

/// Where the application keeps its listeners: per event name for typed listeners, one list for
/// listeners of every event, one for pipeline observers.
enum ListenerList: Hashable {
    case event(LifecycleEvent.Name)
    case everyEvent
    case pipeline
}

extension Application {
    /// Listens for one event — the analogue of observing a UIKit notification.
    ///
    /// The listener runs synchronously on the main actor, before the delegate (see DESIGN.md),
    /// once per event. A listener added while an event is being delivered hears the next event,
    /// not the current one. Keep the token: cancelling it or letting it go stops delivery at once.
    ///
    /// ```swift
    /// let token = app.addListener(for: .didEnterBackground) { app in cache.flush() }
    /// ```
    public func addListener<Payload>(for event: ApplicationEvent<Payload>,
                                     _ handler: @escaping @MainActor (Payload) -> Void) -> ListenerToken {
        register(PayloadHandler(handler), in: .event(event.name))
    }

    /// Listens for every published event, as ``LifecycleEvent`` values.
    public func addListener(_ handler: @escaping @MainActor (LifecycleEvent) -> Void) -> ListenerToken {
        register(RecordHandler { _, event in handler(event) }, in: .everyEvent)
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
        if state == .terminated {
            continuation.finish()
        } else {
            streams.append(continuation)
        }
        return stream
    }

    /// Observes every step of the pipeline: each publication to listeners, each delegate call and
    /// each decision of the system's, in order. For instrumentation (traces, launch timelines);
    /// apps use listeners.
    public func addPipelineObserver(_ handler: @escaping @MainActor (PipelineStage, LifecycleEvent) -> Void) -> ListenerToken {
        register(RecordHandler(handler), in: .pipeline)
    }

    private func register(_ handler: ListenerHandler, in list: ListenerList) -> ListenerToken {
        let token = ListenerToken(handler: handler) { [weak self] token in
            self?.removeEntries(in: list) { $0.isCancelled }
        }
        switch list {
        case .event(let name): listeners[name, default: []].append(token.entry)
        case .everyEvent: everyEventListeners.append(token.entry)
        case .pipeline: pipelineObservers.append(token.entry)
        }
        return token
    }

    // MARK: Publishing

    /// One pass through the pipeline: `before` hooks → `handle` hooks (a stop ends the pass) →
    /// listeners → `deliver` (the delegate; reported to pipeline observers as `stage`, `nil`
    /// when no delegate is called) → `after` hooks. Hook failures are reported and the pass goes
    /// on. `runAfterHooks: false` leaves the `after` hooks to the caller (the launch runs them
    /// when the BootLoader has finished).
    @discardableResult
    func publish<Payload, Result>(_ event: ApplicationEvent<Payload>, _ payload: Payload, to stage: PipelineStage?,
                                  runAfterHooks: Bool = true, _ deliver: () -> Result) -> Delivery<Result> {
        let chain = hooks.chain(at: event)
        if let chain {
            observe(.hooks, event.record(payload))
            let policy = HookFailurePolicy.report(reportHookError)
            _ = try? hooks.run(.before, of: chain, event, payload, policy)
            let result = (try? hooks.run(.handle, of: chain, event, payload, policy)) ?? .continue
            if result.stops {
                observe(.hookStop(result), event.record(payload))
                return .stopped(result)
            }
        }
        // The record (a `LifecycleEvent`) is built only for those who take records.
        let wantsRecord = !pipelineObservers.isEmpty || !everyEventListeners.isEmpty || !streams.isEmpty
        let record = wantsRecord ? event.record(payload) : nil
        if let record { observe(.listeners, record) }
        forEachHandler(in: .event(event.name)) { handler in
            // The name fixes the payload type: ApplicationEvent's initialiser is internal and
            // each name is declared once, with one payload type.
            unsafeDowncast(handler, to: PayloadHandler<Payload>.self).call(payload)
        }
        if let record {
            forEachHandler(in: .everyEvent) { handler in (handler as? RecordHandler)?.call(.listeners, record) }
        }
        if let record, !streams.isEmpty {
            streams.removeAll { continuation in
                if case .terminated = continuation.yield(record) { return true }
                return false
            }
        }
        if let stage, let record { observe(stage, record) }
        let value = deliver()
        if let chain, runAfterHooks { _ = try? hooks.run(.after, of: chain, event, payload, .report(reportHookError)) }
        return .delivered(value)
    }

    /// Runs the `after` hooks of `event`, reporting failures.
    func runAfterHooksNow<Payload>(_ event: ApplicationEvent<Payload>, _ payload: Payload) {
        try? hooks.runAfter(event, payload, onFailure: .report(reportHookError))
    }

    /// Reports a pipeline step to the observers.
    func observe(_ stage: PipelineStage, _ event: LifecycleEvent) {
        forEachHandler(in: .pipeline) { handler in (handler as? RecordHandler)?.call(stage, event) }
    }

    /// Calls each live handler of a snapshot of `list`: entries added meanwhile wait for the next
    /// event; entries cancelled meanwhile are skipped; dropped tokens are pruned.
    private func forEachHandler(in list: ListenerList, _ body: (ListenerHandler) -> Void) {
        let entries: [ListenerEntry]
        switch list {
        case .event(let name): entries = listeners[name] ?? []
        case .everyEvent: entries = everyEventListeners
        case .pipeline: entries = pipelineObservers
        }
        guard !entries.isEmpty else { return }
        let sawDropped = Self.deliver(to: entries, body)
        if sawDropped { removeEntries(in: list) { $0.isCancelled } }
    }

    /// Calls `body` with each live entry's handler; tells whether it met a cancelled entry.
    ///
    /// Nonisolated so that the per-entry closure carries no executor check; `body` runs in the
    /// caller's isolation (the main actor). `entries` keeps every entry alive until the loop
    /// ends, so each is read as an unretained reference: no retain and release per listener.
    private nonisolated static func deliver(to entries: [ListenerEntry], _ body: (ListenerHandler) -> Void) -> Bool {
        var sawDropped = false
        entries.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: Unmanaged<ListenerEntry>.self) { entries in
                for index in entries.indices where !entries[index]._withUnsafeGuaranteedRef({ $0.withHandler(body) }) {
                    sawDropped = true
                }
            }
        }
        return sawDropped
    }

    private func removeEntries(in list: ListenerList, where shouldRemove: (ListenerEntry) -> Bool) {
        switch list {
        case .event(let name): listeners[name]?.removeAll(where: shouldRemove)
        case .everyEvent: everyEventListeners.removeAll(where: shouldRemove)
        case .pipeline: pipelineObservers.removeAll(where: shouldRemove)
        }
    }

    func finishStreams() {
        for continuation in streams { continuation.finish() }
        streams.removeAll()
    }
}
