/// Observers of one kind of event, each kept by a ``ListenerToken`` — the one observation model
/// of AppKernel, for any type that tells others what happened (the account manager's account
/// events, the SDK manager's user changes; a fake in your tests).
///
/// ```swift
/// let changes = ObserverList<UserChange>()
/// let token = changes.add { change in print(change) }   // keep the token
/// changes.notify(change)                                // observers run in registration order
/// ```
///
/// Observers added during a notification hear the next one; an observer whose token is cancelled
/// or dropped hears nothing more, at once.
@MainActor
public final class ObserverList<Payload> {
    private let list = ListenerList()

    /// An empty list.
    public init() {}

    /// The number of observers still registered.
    public var count: Int { list.count }

    /// Adds an observer. Keep the token: cancelling it or letting it go removes the observer.
    public func add(_ handler: @escaping @MainActor (Payload) -> Void) -> ListenerToken {
        list.add(handler)
    }

    /// Calls every observer with `payload`, in registration order.
    public func notify(_ payload: Payload) {
        list.deliver(payload)
    }
}
