/// The object that owns a window's content — the role UIKit's root `UIViewController` plays.
///
/// A ``Window`` tells its root controller when it appears (the window is made visible with the
/// controller in it, or the controller is installed in a visible window) and when it disappears
/// (it is replaced, the window is hidden, or the window's scene disconnects). Going to the
/// background is not a disappearance, as in UIKit. Every method is optional.
@MainActor
public protocol RootController: AnyObject {
    /// The controller is about to appear.
    func viewWillAppear()
    /// The controller appeared.
    func viewDidAppear()
    /// The controller is about to disappear.
    func viewWillDisappear()
    /// The controller disappeared.
    func viewDidDisappear()
}

extension RootController {
    /// Does nothing.
    public func viewWillAppear() {}
    /// Does nothing.
    public func viewDidAppear() {}
    /// Does nothing.
    public func viewWillDisappear() {}
    /// Does nothing.
    public func viewDidDisappear() {}
}

/// An empty root controller to show while the real content is not ready — the forceios
/// template's `InitialViewController`, or a launch screen.
@MainActor
public final class PlaceholderController: RootController {
    /// A short text saying what the placeholder stands for (e.g. "Loading…").
    public let message: String
    /// Whether the placeholder is on screen now.
    public private(set) var isVisible = false

    /// Creates a placeholder.
    public init(message: String = "") { self.message = message }

    /// Records that the placeholder is on screen.
    public func viewDidAppear() { isVisible = true }
    /// Records that the placeholder left the screen.
    public func viewDidDisappear() { isVisible = false }
}
