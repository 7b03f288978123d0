/// Keeps a registration alive — a listener, a hook, a user-change or account observer: the one
/// token type of AppKernel. Cancel it, or let its last reference go, and the registration ends at
/// once, even in the middle of a delivery.
///
/// ```swift
/// let token = app.addListener(for: .didEnterBackground) { app in cache.flush() }
/// // … later
/// token.cancel()        // or just drop the token
/// ```
///
/// A dropped token frees the registered closure (and what it captured) at once — or, if that
/// closure is running at that moment, as soon as it returns.
@MainActor
public final class ListenerToken {
    /// The registration and what holds it (a listener list, a hook chain): the token ends it
    /// through them, with no closure to allocate per registration. Three words: every listener
    /// has a token, so its size counts.
    private let registration: AnyObject?
    private var registrar: (any Registrar)?

    /// A token for `registration`, which `registrar` holds and ends.
    package init(registration: AnyObject, registrar: any Registrar) {
        self.registration = registration
        self.registrar = registrar
    }

    /// A token for any registration `onCancel` removes.
    package init(onCancel: @escaping @MainActor () -> Void) {
        self.registration = nil
        self.registrar = ClosureRegistrar(onCancel)
    }

    /// Whether ``cancel()`` has been called (or the token dropped).
    public var isCancelled: Bool { registrar == nil }

    /// Ends the registration. Calling it again does nothing.
    public func cancel() {
        guard let registrar else { return }
        self.registrar = nil
        registrar.cancelRegistration(registration)
    }

    /// Keeps the token in `tokens` (as Combine's `store(in:)` does): the registration lasts as
    /// long as the array holds it.
    ///
    /// ```swift
    /// var tokens: [ListenerToken] = []
    /// app.hooks.before(.didEnterBackground) { _ in cache.flush() }.store(in: &tokens)
    /// ```
    public func store(in tokens: inout [ListenerToken]) {
        tokens.append(self)
    }

    #if compiler(>=6.2)
    /// Dropped: the registration ends — at once when the last reference goes on the main actor
    /// (or right after a running listener returns); a token is Sendable, so when its last
    /// reference goes elsewhere the deinit runs on the main actor right after.
    isolated deinit {
        cancel()
    }
    #else
    deinit {
        // Without isolated deinit (before Swift 6.2) the cancellation hops to the main actor.
        guard let registrar else { return }
        // `nonisolated(unsafe)`: the token is gone, so nothing else reads these two references;
        // the task hands them to the main actor, the only place they are used.
        nonisolated(unsafe) let registration = self.registration, owner = registrar
        Task { @MainActor in owner.cancelRegistration(registration) }
    }
    #endif
}

/// What holds registrations that tokens end: a listener list, a hook chain.
@MainActor
package protocol Registrar: AnyObject {
    /// Ends `registration` — the object given to the token's ``ListenerToken/init(registration:registrar:)``
    /// (`nil` for a closure's token) — once.
    func cancelRegistration(_ registration: AnyObject?)
}

/// The registrar of a token made with a closure (a launch gate, a stream): it runs the closure.
@MainActor
final class ClosureRegistrar: Registrar {
    private let onCancel: @MainActor () -> Void

    init(_ onCancel: @escaping @MainActor () -> Void) { self.onCancel = onCancel }

    func cancelRegistration(_ registration: AnyObject?) { onCancel() }
}

