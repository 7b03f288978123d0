import Foundation

/// A URL on its way through the pipeline to the delegate. Listeners read it; the URL is a
/// variable so that a step earlier in the pipeline can rewrite it for every step after it.
@MainActor
public final class OpenURLRequest {
    /// The URL to open.
    public var url: URL
    /// Why and from where it is opened.
    public let options: OpenURLOptions
    /// The scene that will receive it, for scene apps.
    public let scene: Scene?

    /// Creates a request.
    public init(url: URL, options: OpenURLOptions, scene: Scene?) {
        self.url = url
        self.options = options
        self.scene = scene
    }
}

/// A user activity on its way through the pipeline to the delegate.
@MainActor
public final class UserActivityRequest {
    /// The activity to continue.
    public let userActivity: UserActivity
    /// The scene that will receive it, for scene apps.
    public let scene: Scene?

    /// Creates a request.
    public init(userActivity: UserActivity, scene: Scene?) {
        self.userActivity = userActivity
        self.scene = scene
    }
}

/// A quick action on its way through the pipeline to the delegate.
@MainActor
public final class ShortcutItemRequest {
    /// The quick action.
    public let shortcutItem: ShortcutItem
    /// The scene that will receive it, for scene apps.
    public let scene: Scene?

    /// Creates a request.
    public init(shortcutItem: ShortcutItem, scene: Scene?) {
        self.shortcutItem = shortcutItem
        self.scene = scene
    }
}
