/// A registered listener or pipeline observer. The token owns the closure; the application holds
/// the token weakly, so a dropped token unregisters itself.
struct ListenerEntry {
    let name: LifecycleEvent.Name?
    weak var token: ListenerToken?
}

extension Application {
    /// Listens for one event — the analogue of observing a UIKit notification.
    ///
    /// The listener runs synchronously on the main actor, after the hooks and before the
    /// delegate (see DESIGN.md), once per event. A listener added while an event is being
    /// delivered hears the next event, not the current one. Keep the token: cancelling it or
    /// letting it go stops delivery at once.
    ///
    /// ```swift
    /// let token = app.addListener(for: .didEnterBackground) { app in cache.flush() }
    /// ```
    public func addListener<Payload>(for event: ApplicationEvent<Payload>,
                                     _ handler: @escaping @MainActor (Payload) -> Void) -> ListenerToken {
        register(in: \.listeners, name: event.name) { _, payload in
            if let payload = payload as? Payload { handler(payload) }
        }
    }

    /// Listens for every published event, as ``LifecycleEvent`` values.
    public func addListener(_ handler: @escaping @MainActor (LifecycleEvent) -> Void) -> ListenerToken {
        register(in: \.listeners, name: nil) { event, _ in handler(event) }
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
            streams[nextRegistrationID] = continuation
            nextRegistrationID += 1
        }
        return stream
    }

    /// Observes every step of the pipeline: each publication to listeners, each delegate call and
    /// each decision of the system's, in order. For instrumentation (traces, launch timelines);
    /// apps use listeners.
    public func addPipelineObserver(_ handler: @escaping @MainActor (PipelineStage, LifecycleEvent) -> Void) -> ListenerToken {
        register(in: \.pipelineObservers, name: nil) { event, stage in
            if let stage = stage as? PipelineStage { handler(stage, event) }
        }
    }

    private func register(in list: ReferenceWritableKeyPath<Application, [ListenerEntry]>, name: LifecycleEvent.Name?,
                          handler: @escaping @MainActor (LifecycleEvent, Any) -> Void) -> ListenerToken {
        let token = ListenerToken(handler: handler) { [weak self] token in
            self?[keyPath: list].removeAll { $0.token === token || $0.token == nil }
        }
        self[keyPath: list].append(ListenerEntry(name: name, token: token))
        return token
    }

    // MARK: Publishing

    /// One pass through the pipeline: listeners hear `event`, then `deliver` calls the delegate
    /// (reported to pipeline observers as `stage`; `nil` when no delegate is called).
    @discardableResult
    func publish<Payload, Result>(_ event: ApplicationEvent<Payload>, _ payload: Payload, to stage: PipelineStage?,
                                  _ deliver: () -> Result) -> Result {
        let record = event.record(payload)
        observe(.listeners, record)
        notify(\.listeners, record, payload)
        for (id, continuation) in streams.sorted(by: { $0.key < $1.key }) {
            if case .terminated = continuation.yield(record) { streams[id] = nil }
        }
        if let stage { observe(stage, record) }
        return deliver()
    }

    /// Reports a pipeline step to the observers.
    func observe(_ stage: PipelineStage, _ event: LifecycleEvent) {
        if !pipelineObservers.isEmpty { notify(\.pipelineObservers, event, stage) }
    }

    /// Calls each live entry of a snapshot of `list`: entries added meanwhile wait for the next
    /// event; entries cancelled meanwhile are skipped; dropped tokens are pruned.
    private func notify(_ list: ReferenceWritableKeyPath<Application, [ListenerEntry]>, _ event: LifecycleEvent, _ payload: Any) {
        var sawDropped = false
        for entry in self[keyPath: list] {
            guard let token = entry.token else {
                sawDropped = true
                continue
            }
            guard entry.name == nil || entry.name == event.name, let handler = token.handler else { continue }
            handler(event, payload)
        }
        if sawDropped { self[keyPath: list].removeAll { $0.token == nil } }
    }

    func finishStreams() {
        for continuation in streams.values { continuation.finish() }
        streams.removeAll()
    }
}
