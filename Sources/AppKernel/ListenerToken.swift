/// Keeps a listener registered. Cancel it, or let the last reference go, and the listener
/// hears nothing more — cancellation takes effect at once, even in the middle of a delivery.
///
/// The token owns the listener's registration; a dropped token frees the closure (and what it
/// captured) at once — or, if the listener is running at that moment, as soon as it returns.
@MainActor
public final class ListenerToken {
    /// The registration the application calls through; it holds the closure.
    let entry: ListenerEntry
    private let onCancel: @MainActor (ListenerToken) -> Void

    init(handler: ListenerHandler, onCancel: @escaping @MainActor (ListenerToken) -> Void) {
        self.entry = ListenerEntry(handler: handler)
        self.onCancel = onCancel
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { entry.isCancelled }

    /// Stops delivery to the listener. Calling it again does nothing.
    public func cancel() {
        guard !entry.isCancelled else { return }
        entry.cancel()
        onCancel(self)
    }

    #if compiler(>=6.2)
    /// Dropped: delivery stops and the closure goes — at once when the last reference goes on the
    /// main actor (or right after the listener returns, if it is running); a token is Sendable,
    /// so when its last reference goes elsewhere the deinit runs on the main actor right after.
    isolated deinit {
        entry.cancel()
    }
    #else
    deinit {
        // Without isolated deinit (before Swift 6.2) the cancellation hops to the main actor.
        let entry = self.entry
        Task { @MainActor in entry.cancel() }
    }
    #endif
}

/// A registered listener or pipeline observer, held by the application's list and by its token.
///
/// Delivery is the hot path of the whole kernel, so the entry holds its handler by hand: one
/// retain taken at registration, released when the entry is cancelled. The application calls the
/// handler through that reference without retaining it per call. Safety: while a call is in
/// progress (`callsInProgress > 0`) a cancellation — the listener cancelling or dropping its own
/// token, say — only marks the entry; the handler is released when the last call returns, never
/// under a running closure.
///
/// The entry is not actor-isolated so that the delivery loop (``Application`` calls it from a
/// nonisolated helper) carries no executor checks; it is nevertheless only touched on the main
/// actor — by the application, and by its token (whose deinit is main-actor isolated) —
/// hence `@unchecked Sendable`. The stored properties are never accessed across a call that
/// could reach them again (the counter is updated around the call, not during it), so they need
/// no dynamic exclusivity checks.
final class ListenerEntry: @unchecked Sendable {
    @exclusivity(unchecked) private var handler: Unmanaged<ListenerHandler>?
    @exclusivity(unchecked) private var callsInProgress = 0
    /// Whether the token was cancelled or dropped.
    @exclusivity(unchecked) private(set) var isCancelled = false

    init(handler: ListenerHandler) { self.handler = .passRetained(handler) }

    /// Calls `body` with the handler, unless the entry has been cancelled.
    /// - Returns: `false` when cancelled (the caller prunes the entry).
    @inline(__always)
    func withHandler(_ body: (ListenerHandler) -> Void) -> Bool {
        guard !isCancelled, let handler else { return false }
        callsInProgress &+= 1
        handler._withUnsafeGuaranteedRef(body)
        callsInProgress &-= 1
        if isCancelled, callsInProgress == 0 { releaseHandler() }
        return true
    }

    /// Stops delivery; frees the handler now, or when the running call returns.
    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        if callsInProgress == 0 { releaseHandler() }
    }

    private func releaseHandler() {
        // Cleared before the release: what the closure captured may run code (a deinit) that
        // reaches this entry again.
        let released = handler
        handler = nil
        released?.release()
    }

    deinit {
        handler?.release()
    }
}

/// What a token calls. Subclasses carry the closure with its exact type, so delivery needs no
/// existential casts.
@MainActor
class ListenerHandler {}

/// A listener for one event, receiving that event's payload.
@MainActor
final class PayloadHandler<Payload>: ListenerHandler {
    let call: @MainActor (Payload) -> Void
    init(_ call: @escaping @MainActor (Payload) -> Void) { self.call = call }
}

/// A listener for every published event, or a pipeline observer.
@MainActor
final class RecordHandler: ListenerHandler {
    let call: @MainActor (PipelineStage, LifecycleEvent) -> Void
    init(_ call: @escaping @MainActor (PipelineStage, LifecycleEvent) -> Void) { self.call = call }
}
