/// Keeps a listener registered. Cancel it, or let the last reference go, and the listener
/// hears nothing more — cancellation takes effect at once, even in the middle of a delivery.
///
/// The token owns the listener's closure; the application only refers to it weakly, so a
/// dropped token frees the closure (and what it captured) at once.
@MainActor
public final class ListenerToken {
    var handler: ListenerHandler?
    private let onCancel: @MainActor (ListenerToken) -> Void

    init(handler: ListenerHandler, onCancel: @escaping @MainActor (ListenerToken) -> Void) {
        self.handler = handler
        self.onCancel = onCancel
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { handler == nil }

    /// Stops delivery to the listener. Calling it again does nothing.
    public func cancel() {
        guard handler != nil else { return }
        handler = nil
        onCancel(self)
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
