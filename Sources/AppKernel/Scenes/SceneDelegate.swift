/// The object that manages one scene's life cycle — UIKit's `UISceneDelegate` and
/// `UIWindowSceneDelegate`. Every method is optional (a protocol extension supplies an empty
/// default), and every call arrives synchronously on the main actor.
///
/// Order of calls (each scene on its own; see DESIGN.md for how they interleave with the
/// application's): `scene(_:willConnectTo:options:)` → `sceneWillEnterForeground` →
/// `sceneDidBecomeActive` ⇄ `sceneWillResignActive` → `sceneDidEnterBackground` → … →
/// `sceneDidDisconnect`.
@MainActor
public protocol SceneDelegate: AnyObject {
    /// The scene is being added to the app. Create its windows here.
    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions)
    /// The scene was removed from the app (its session stays open unless discarded).
    func sceneDidDisconnect(_ scene: Scene)
    /// The scene is about to come on screen.
    func sceneWillEnterForeground(_ scene: Scene)
    /// The scene became active and receives events.
    func sceneDidBecomeActive(_ scene: Scene)
    /// The scene is about to stop receiving events (an interruption, or on its way to the background).
    func sceneWillResignActive(_ scene: Scene)
    /// The scene went off screen.
    func sceneDidEnterBackground(_ scene: Scene)
    /// The scene is asked to open URLs (after it was connected; URLs that connected it arrive in
    /// the connection options instead).
    func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext])
    /// The scene is asked to continue a user activity.
    func scene(_ scene: Scene, continue userActivity: UserActivity)
    /// The user chose a quick action while the scene was connected. Call `completionHandler`
    /// exactly once with whether it was handled (later calls are ignored and reported in
    /// ``Application/diagnostics``). The default answers `false`.
    func windowScene(_ scene: Scene, performActionFor shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void)
}

extension SceneDelegate {
    /// Does nothing.
    public func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {}
    /// Does nothing.
    public func sceneDidDisconnect(_ scene: Scene) {}
    /// Does nothing.
    public func sceneWillEnterForeground(_ scene: Scene) {}
    /// Does nothing.
    public func sceneDidBecomeActive(_ scene: Scene) {}
    /// Does nothing.
    public func sceneWillResignActive(_ scene: Scene) {}
    /// Does nothing.
    public func sceneDidEnterBackground(_ scene: Scene) {}
    /// Does nothing.
    public func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {}
    /// Does nothing.
    public func scene(_ scene: Scene, continue userActivity: UserActivity) {}
    /// Answers `false` (not handled).
    public func windowScene(_ scene: Scene, performActionFor shortcutItem: ShortcutItem,
                            completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        completionHandler(false)
    }
}
