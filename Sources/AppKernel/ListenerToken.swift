/// Keeps a listener registered. Cancel it, or let the last reference go, and the listener
/// hears nothing more — cancellation takes effect at once, even in the middle of a delivery.
///
/// The token owns the listener's closure; the application only refers to it weakly, so a
/// dropped token frees the closure (and what it captured) at once.
@MainActor
public final class ListenerToken {
    var handler: (@MainActor (LifecycleEvent, Any) -> Void)?
    private let onCancel: @MainActor (ListenerToken) -> Void

    init(handler: @escaping @MainActor (LifecycleEvent, Any) -> Void, onCancel: @escaping @MainActor (ListenerToken) -> Void) {
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
