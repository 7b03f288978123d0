/// Identifies a background task — UIKit's `UIBackgroundTaskIdentifier`.
public struct BackgroundTaskIdentifier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The number; `0` is ``invalid``.
    public var rawValue: Int
    /// Wraps a number.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The identifier returned when a task cannot begin (the app is suspended or terminated, or
    /// its background time has run out). Ending it does nothing.
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)
    /// "task-N", or "invalid".
    public var description: String { self == .invalid ? "invalid" : "task-\(rawValue)" }
}
