public import AppKernel

/// The SDK manager's launch phases, in the order they run — the Mobile SDK's launch sequence.
///
/// Each phase is a `HookPoint` whose hooks receive the manager:
/// `manager.hooks.handle(.passcode) { manager in .return }` skips the passcode check.
public enum LaunchPhase: String, Sendable, Hashable, CaseIterable, HookPoint, CustomStringConvertible {
    /// Load and validate the boot config.
    case config
    /// Initialise the SDK's parts and the registered services.
    case sdkInit
    /// Verify the app passcode, if one is set.
    case passcode
    /// Log in if there is no current user and the config says to authenticate.
    case auth
    /// Set up the user's stores and syncs, then install the app's root controller.
    case rootController

    /// What the phase's hooks receive.
    public typealias Payload = SDKManager

    /// The phase's name (`"sdkInit"`).
    public var hookPointName: String { rawValue }
    /// The phase's name (`"sdkInit"`).
    public var description: String { rawValue }
}

extension HookRegistry {
    /// Registers an observer that runs before a launch phase's handlers. A throwing observer
    /// fails the launch with a ``LaunchError`` naming the phase and the hook.
    public func before(_ phase: LaunchPhase, priority: Int = 0, label: String? = nil, fileID: String = #fileID, line: Int = #line,
                       _ body: @escaping @MainActor (SDKManager) throws -> Void) -> ListenerToken {
        before(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }

    /// Registers a handler of a launch phase: `.continue` runs the phase's default work, a stop
    /// (`.return`, …) skips it and the launch goes on to the next phase.
    public func handle(_ phase: LaunchPhase, priority: Int = 0, label: String? = nil, fileID: String = #fileID, line: Int = #line,
                       _ body: @escaping @MainActor (SDKManager) throws -> HookResult) -> ListenerToken {
        handle(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }

    /// Registers an observer that runs after a launch phase's default work (not after a stop).
    public func after(_ phase: LaunchPhase, priority: Int = 0, label: String? = nil, fileID: String = #fileID, line: Int = #line,
                      _ body: @escaping @MainActor (SDKManager) throws -> Void) -> ListenerToken {
        after(point: phase, priority: priority, label: label, fileID: fileID, line: line, body)
    }
}
