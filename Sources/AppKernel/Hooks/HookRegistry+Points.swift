/// The registration methods for the kernel's two kinds of hook point — application events and
/// BootLoader phases — so that `app.hooks.before(.didEnterBackground)` and
/// `app.hooks.before(BootPhase.showWindow)` read naturally. Other modules add theirs (the SDK
/// manager's launch phases). Each returns the registration's token: keep it, since dropping it
/// removes the hook.
extension HookRegistry {
    /// Registers an observer that runs before the handlers of an application event.
    public func before<Payload>(_ event: ApplicationEvent<Payload>, priority: Int = 0, label: String? = nil,
                                fileID: String = #fileID, line: Int = #line,
                                _ body: @escaping @MainActor (Payload) throws -> Void) -> ListenerToken {
        register(event, .event(event.name), .before, priority, label, fileID, line, observing(body))
    }

    /// Registers a handler of an application event.
    public func handle<Payload>(_ event: ApplicationEvent<Payload>, priority: Int = 0, label: String? = nil,
                                fileID: String = #fileID, line: Int = #line,
                                _ body: @escaping @MainActor (Payload) throws -> HookResult) -> ListenerToken {
        register(event, .event(event.name), .handle, priority, label, fileID, line, body)
    }

    /// Registers an observer that runs after an application event was delivered.
    public func after<Payload>(_ event: ApplicationEvent<Payload>, priority: Int = 0, label: String? = nil,
                               fileID: String = #fileID, line: Int = #line,
                               _ body: @escaping @MainActor (Payload) throws -> Void) -> ListenerToken {
        register(event, .event(event.name), .after, priority, label, fileID, line, observing(body))
    }

    /// Registers an observer that runs before a BootLoader phase's handlers; a throw fails the phase.
    public func before(_ phase: BootPhase, priority: Int = 0, label: String? = nil,
                       fileID: String = #fileID, line: Int = #line,
                       _ body: @escaping @MainActor (Application) throws -> Void) -> ListenerToken {
        before(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }

    /// Registers a handler of a BootLoader phase; a stop skips the phase's body (the boot goes on).
    public func handle(_ phase: BootPhase, priority: Int = 0, label: String? = nil,
                       fileID: String = #fileID, line: Int = #line,
                       _ body: @escaping @MainActor (Application) throws -> HookResult) -> ListenerToken {
        handle(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }

    /// Registers an observer that runs after a BootLoader phase's body; a throw fails the phase.
    public func after(_ phase: BootPhase, priority: Int = 0, label: String? = nil,
                      fileID: String = #fileID, line: Int = #line,
                      _ body: @escaping @MainActor (Application) throws -> Void) -> ListenerToken {
        after(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }
}
