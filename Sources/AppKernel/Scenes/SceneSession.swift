/// The role a scene plays — UIKit's `UISceneSession.Role`.
public struct SceneSessionRole: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The role's name.
    public var rawValue: String
    /// Creates a role from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An interactive window of the app (the default).
    public static let windowApplication = SceneSessionRole(rawValue: "windowApplication")
    /// A non-interactive window on an external display.
    public static let windowExternalDisplayNonInteractive = SceneSessionRole(rawValue: "windowExternalDisplayNonInteractive")
    /// The role's name.
    public var description: String { rawValue }
}

/// A persistent record of one of the app's scenes — UIKit's `UISceneSession`.
///
/// A session outlives its ``Scene``: disconnecting a scene (to free resources) keeps the session in
/// ``Application/openSessions`` so the scene can be connected again; only discarding it (the
/// user closed the window) removes it and calls
/// ``ApplicationDelegate/application(_:didDiscardSceneSessions:)``.
@MainActor
public final class SceneSession: Hashable, Identifiable {
    /// A stable identifier, unique within its application: `"scene-1"`, `"scene-2"`, … in
    /// connection order, so traces are deterministic.
    public nonisolated let persistentIdentifier: String
    /// The scene's role.
    public nonisolated let role: SceneSessionRole
    /// The configuration the delegate chose the last time a scene was connected for this session.
    public internal(set) var configuration: SceneConfiguration
    /// The connected scene, or `nil` while the session is disconnected.
    public internal(set) weak var scene: Scene?
    /// App-defined state kept with the session (UIKit's `userInfo`).
    public var userInfo: [String: JSONValue] = [:]

    /// ``persistentIdentifier``.
    public nonisolated var id: String { persistentIdentifier }

    init(persistentIdentifier: String, role: SceneSessionRole) {
        self.persistentIdentifier = persistentIdentifier
        self.role = role
        self.configuration = SceneConfiguration(name: nil, sessionRole: role)
    }

    /// Sessions are equal when they are the same object.
    public nonisolated static func == (lhs: SceneSession, rhs: SceneSession) -> Bool { lhs === rhs }
    /// Hashes the object's identity.
    public nonisolated func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
