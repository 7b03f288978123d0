/// The execution state of an ``Application`` — UIKit's `UIApplication.State`, extended with the
/// states UIKit only describes in prose (not running, suspended, terminated).
///
/// The legal transitions are UIKit's:
///
/// ```
/// notRunning ──launch──▶ inactive ⇄ active          (interruptions: deactivate / activate)
/// notRunning ──launch (background)──▶ background
/// inactive ──▶ background ──▶ suspended ──(event)──▶ background ──▶ inactive
/// any running state ──terminate──▶ terminated        (terminal: launch a new Application)
/// ```
public enum ApplicationState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The application has not been launched yet.
    case notRunning
    /// In the foreground but not receiving events (launching, or interrupted).
    case inactive
    /// In the foreground and receiving events.
    case active
    /// Running in the background.
    case background
    /// In the background and not executing code; an event (a remote notification, a background
    /// fetch) wakes it, a foreground request resumes it.
    case suspended
    /// Terminated. Terminal: no event is accepted any more.
    case terminated

    /// Whether the application is in the foreground (`.inactive` or `.active`).
    public var isForeground: Bool { self == .inactive || self == .active }

    /// Whether the application is running: launched and not terminated.
    public var isRunning: Bool { self != .notRunning && self != .terminated }

    /// The state's name, as written in the case (`"background"`).
    public var description: String { rawValue }
}
