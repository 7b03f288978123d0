/// Why a scene is being connected — UIKit's `UIScene.ConnectionOptions`.
///
/// Read it in ``ApplicationDelegate/application(_:configurationForConnecting:options:)`` and in
/// ``SceneDelegate/scene(_:willConnectTo:options:)``. A URL, activity or shortcut item that
/// arrives here is not delivered again through the scene's `openURLContexts`, `continue` or
/// `performActionFor` callbacks.
public struct SceneConnectionOptions: Sendable, Hashable {
    /// URLs to open.
    public var urlContexts: [OpenURLContext]
    /// Activities to continue.
    public var userActivities: [UserActivity]
    /// The quick action the user chose, if any.
    public var shortcutItem: ShortcutItem?
    /// The app that caused the connection, if any.
    public var sourceApplication: String?
    /// The payload of the notification the user tapped, if any.
    public var remoteNotification: [String: JSONValue]?

    /// Creates connection options; every value defaults to "absent".
    public init(urlContexts: [OpenURLContext] = [], userActivities: [UserActivity] = [],
                shortcutItem: ShortcutItem? = nil, sourceApplication: String? = nil,
                remoteNotification: [String: JSONValue]? = nil) {
        self.urlContexts = urlContexts
        self.userActivities = userActivities
        self.shortcutItem = shortcutItem
        self.sourceApplication = sourceApplication
        self.remoteNotification = remoteNotification
    }

    /// Whether nothing was passed (a plain new window).
    public var isEmpty: Bool {
        urlContexts.isEmpty && userActivities.isEmpty && shortcutItem == nil
            && sourceApplication == nil && remoteNotification == nil
    }
}
