/// The activation state of a ``Scene`` — UIKit's `UIScene.ActivationState`.
public enum SceneActivationState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not connected to the application (before `willConnect`, after `didDisconnect`).
    case unattached
    /// On screen, not receiving events.
    case foregroundInactive
    /// On screen and receiving events.
    case foregroundActive
    /// Off screen.
    case background

    /// Whether the scene is on screen.
    public var isForeground: Bool { self == .foregroundInactive || self == .foregroundActive }

    /// The state's name, as written in the case.
    public var description: String { rawValue }
}
