/// Keeps a listener registered. Cancel it, or let the last reference go, and the listener
/// hears nothing more — cancellation takes effect at once, even in the middle of a delivery.
///
/// The token owns the listener's closure; the application only refers to it weakly, so a
/// dropped token frees the closure (and what it captured) at once.
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
    public var isCancelled: Bool { entry.handler == nil }

    /// Stops delivery to the listener. Calling it again does nothing.
    public func cancel() {
        guard entry.handler != nil else { return }
        entry.handler = nil
        onCancel(self)
    }

    deinit {
        // Dropped: the closure (and what it captured) goes now, and delivery stops; the
        // application prunes the empty entry at its next delivery.
        entry.handler = nil
    }
}

/// A registered listener or pipeline observer, held by the application's list and by its token.
/// It holds the closure until the token is cancelled or dropped. The application holds entries
/// strongly and reads `handler` with a plain load: no weak reference (whose side table would
/// make every retain and release of the token slow) on the delivery path.
///
/// `@unchecked Sendable`: `handler` is read and written on the main actor — and set to `nil` by
/// the token's deinit, which runs where the token's last reference goes: a token is a
/// non-Sendable main-actor object, so that is main-actor code.
final class ListenerEntry: @unchecked Sendable {
    var handler: ListenerHandler?
    init(handler: ListenerHandler) { self.handler = handler }
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
