/// A window that shows one ``RootController`` — UIKit's `UIWindow`, headless.
///
/// A scene delegate creates its window in `scene(_:willConnectTo:options:)`, installs a root
/// controller and calls ``makeKeyAndVisible()``:
///
/// ```swift
/// func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
///     let window = Window(windowScene: scene)
///     window.rootController = PlaceholderController(message: "Loading…")
///     window.makeKeyAndVisible()
///     self.window = window
/// }
/// ```
@MainActor
public final class Window {
    /// The scene the window belongs to; `nil` for apps without scenes, or once the scene is gone.
    public private(set) weak var windowScene: Scene?
    /// Whether the window is hidden. New windows are hidden until ``makeKeyAndVisible()``.
    public private(set) var isHidden = true
    /// Whether this is its scene's key window.
    public internal(set) var isKeyWindow = false

    /// The controller whose content the window shows. Replacing it while the window is visible
    /// makes the old one disappear and then the new one appear.
    public var rootController: (any RootController)? {
        didSet {
            guard oldValue !== rootController, !isHidden else { return }
            if let oldValue { Window.disappear(oldValue) }
            if let rootController { Window.appear(rootController) }
        }
    }

    /// Creates a hidden window in `windowScene` (or without a scene, for apps without scenes).
    public init(windowScene: Scene? = nil) {
        self.windowScene = windowScene
        windowScene?.attach(self)
    }

    /// Shows the window and makes it its scene's key window; the root controller appears.
    public func makeKeyAndVisible() {
        windowScene?.makeKey(self)
        isKeyWindow = true
        guard isHidden else { return }
        isHidden = false
        if let rootController { Window.appear(rootController) }
    }

    /// Hides the window; the root controller disappears.
    public func hide() {
        guard !isHidden else { return }
        isHidden = true
        isKeyWindow = false
        if let rootController { Window.disappear(rootController) }
    }

    /// Called by the scene when it disconnects.
    func sceneDidDisconnect() {
        hide()
        windowScene = nil
    }

    private static func appear(_ controller: any RootController) {
        controller.viewWillAppear()
        controller.viewDidAppear()
    }

    private static func disappear(_ controller: any RootController) {
        controller.viewWillDisappear()
        controller.viewDidDisappear()
    }
}
