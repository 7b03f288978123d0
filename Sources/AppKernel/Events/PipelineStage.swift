/// Where in the event pipeline a step happened; reported to pipeline observers
/// (``Application/addPipelineObserver(_:)``) with the step's ``LifecycleEvent``.
public enum PipelineStage: Sendable, Hashable, CustomStringConvertible {
    /// The event was published to the application's listeners.
    case listeners
    /// The application delegate was called.
    case applicationDelegate
    /// The delegate of the scene with this identifier was called.
    case sceneDelegate(String)
    /// The system decided something on its own (suspension, a task's expiry).
    case system
    /// The event's `before` and `handle` hooks are about to run (reported only where it has hooks).
    case hooks
    /// A `handle` hook stopped the event with this result; listeners, the delegate and `after`
    /// hooks did not run.
    case hookStop(HookResult)
    /// The phase engine with this name (`bootLoader`, `sdk`) started or ended a phase.
    case phases(String)

    /// `listeners`, `app`, the scene's identifier, `system`, `hooks(return)` or the phase engine's name —
    /// the prefixes of trace lines.
    public var description: String {
        switch self {
        case .listeners: "listeners"
        case .applicationDelegate: "app"
        case .sceneDelegate(let id): id
        case .system: "system"
        case .hooks: "hooks"
        case .hookStop(let result): "hooks(\(result))"
        case .phases(let engine): engine
        }
    }
}
