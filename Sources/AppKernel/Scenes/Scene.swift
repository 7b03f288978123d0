/// One instance of the app's user interface — UIKit's `UIWindowScene`.
///
/// The application creates scenes (never the app itself): when it launches in the foreground,
/// when the host connects another one, or when a disconnected session is connected again. The
/// scene keeps its ``delegate`` alive, as UIKit does, and its windows.
@MainActor
public final class Scene: Identifiable {
    /// The session this scene represents.
    public let session: SceneSession
    /// The scene's delegate, built from the session's ``SceneConfiguration``.
    public internal(set) var delegate: (any SceneDelegate)?
    /// Whether the scene is on screen and active.
    public internal(set) var activationState: SceneActivationState = .unattached
    /// A title for the scene (shown in window switchers on other platforms).
    public var title: String = ""
    /// The scene's windows, in creation order.
    public private(set) var windows: [Window] = []
    /// The application the scene belongs to.
    public private(set) weak var application: Application?

    /// The session's persistent identifier (`"scene-1"`, …).
    public nonisolated var id: String { session.persistentIdentifier }

    /// The key window, if one was made key.
    public var keyWindow: Window? { windows.first { $0.isKeyWindow } }

    init(session: SceneSession, application: Application) {
        self.session = session
        self.application = application
    }

    func attach(_ window: Window) { windows.append(window) }

    func makeKey(_ window: Window) {
        for other in windows where other !== window { other.isKeyWindow = false }
    }

    func detachWindows() {
        for window in windows { window.sceneDidDisconnect() }
        windows.removeAll()
    }
}
