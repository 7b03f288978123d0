public import AppKernel
import Foundation

/// A scene delegate that implements every callback and writes each to a ``CallLog`` as
/// `<scene id>.<callback>`: `scene-1.willConnect`, `scene-1.willEnterForeground`,
/// `scene-1.didBecomeActive`, `scene-1.openURLContexts(myapp://a)`, `scene-1.continue(<type>)`,
/// `scene-1.performAction(<type>)`, `scene-1.willResignActive`, `scene-1.didEnterBackground`,
/// `scene-1.didDisconnect`.
///
/// When it connects, it makes a `Window` showing a ``RecordingRootController`` and makes the
/// window key and visible. Shortcut actions are answered `true` at once.
@MainActor
public final class RecordingSceneDelegate: SceneDelegate {
    /// Where the callbacks are written.
    public let log: CallLog
    /// Whether lines begin with the scene's id (`scene-1.willConnect`) or with `scene`
    /// (`scene.willConnect`: one-scene tests that need not say which).
    public let identifiesScene: Bool
    /// The window made when the scene connected.
    public var window: Window?
    /// The options the scene connected with.
    public var connectionOptions: SceneConnectionOptions?
    /// The window's root controller.
    public var root = RecordingRootController()

    /// Creates a delegate writing to `log`; with `identifiesScene` false, lines begin with
    /// `scene` instead of the scene's id.
    public init(log: CallLog, identifiesScene: Bool = true) {
        self.log = log
        self.identifiesScene = identifiesScene
    }

    private func record(_ scene: Scene, _ callback: String) {
        log.append("\(identifiesScene ? scene.id : "scene").\(callback)")
    }

    /// Records `willConnect`, keeps the options and shows a window with ``root``.
    public func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        record(scene, "willConnect")
        connectionOptions = options
        let window = Window(windowScene: scene)
        window.rootController = root
        window.makeKeyAndVisible()
        self.window = window
    }
    /// Records `didDisconnect`.
    public func sceneDidDisconnect(_ scene: Scene) { record(scene, "didDisconnect") }
    /// Records `willEnterForeground`.
    public func sceneWillEnterForeground(_ scene: Scene) { record(scene, "willEnterForeground") }
    /// Records `didBecomeActive`.
    public func sceneDidBecomeActive(_ scene: Scene) { record(scene, "didBecomeActive") }
    /// Records `willResignActive`.
    public func sceneWillResignActive(_ scene: Scene) { record(scene, "willResignActive") }
    /// Records `didEnterBackground`.
    public func sceneDidEnterBackground(_ scene: Scene) { record(scene, "didEnterBackground") }
    /// Records `openURLContexts(<url>,<url>…)`.
    public func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {
        record(scene, "openURLContexts(\(urlContexts.map(\.url.absoluteString).joined(separator: ",")))")
    }
    /// Records `continue(<activity type>)`.
    public func scene(_ scene: Scene, continue userActivity: UserActivity) {
        record(scene, "continue(\(userActivity.activityType))")
    }
    /// Records `performAction(<shortcut type>)` and answers `true`.
    public func windowScene(_ scene: Scene, performActionFor shortcutItem: ShortcutItem,
                            completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        record(scene, "performAction(\(shortcutItem.type))")
        completionHandler(true)
    }
}
