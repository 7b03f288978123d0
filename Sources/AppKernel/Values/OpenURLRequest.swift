public import Foundation

/// A URL on its way through the pipeline to the delegate. The URL is a variable: a `handle` hook
/// that rewrites it and answers `.continue` makes every later step — other handlers, listeners,
/// the delegate, `after` hooks — see the new URL (mPaaS's `newURL`).
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
    /// Hands back the root controllers that continue the activity (UIKit's restoration
    /// handler); optional to call, at most once — a second call is ignored and reported.
    public let restorationHandler: @MainActor @Sendable ([any RootController]) -> Void

    /// Creates a request; without a restoration handler, one that keeps nothing.
    public init(userActivity: UserActivity, scene: Scene?,
                restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void = { _ in }) {
        self.userActivity = userActivity
        self.scene = scene
        self.restorationHandler = restorationHandler
    }
}

/// A quick action on its way through the pipeline to the delegate. A `handle` hook that takes it
/// over (`.return`) answers through ``completionHandler``; `.returnYes` / `.returnNo` answer for it.
@MainActor
public final class ShortcutItemRequest {
    /// The quick action.
    public let shortcutItem: ShortcutItem
    /// The scene that will receive it, for scene apps.
    public let scene: Scene?
    /// Answers whether the action was handled; the first call counts.
    public let completionHandler: @MainActor @Sendable (Bool) -> Void

    /// Creates a request.
    public init(shortcutItem: ShortcutItem, scene: Scene?, completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        self.shortcutItem = shortcutItem
        self.scene = scene
        self.completionHandler = completionHandler
    }
}

/// A remote notification on its way through the pipeline. A `handle` hook that takes it over
/// (any stop) answers through ``completionHandler``; otherwise the delegate does (its default
/// answers `.noData`), and the system answers `.failed` at the deadline if nobody does.
@MainActor
public final class RemoteNotificationRequest {
    /// The notification's payload.
    public let userInfo: [String: JSONValue]
    /// Reports what the notification produced; the first call counts.
    public let completionHandler: @MainActor @Sendable (BackgroundFetchResult) -> Void

    /// Creates a request.
    public init(userInfo: [String: JSONValue], completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        self.userInfo = userInfo
        self.completionHandler = completionHandler
    }
}

/// A background fetch on its way through the pipeline, like ``RemoteNotificationRequest``.
@MainActor
public final class BackgroundFetchRequest {
    /// Reports what the fetch produced; the first call counts.
    public let completionHandler: @MainActor @Sendable (BackgroundFetchResult) -> Void

    /// Creates a request.
    public init(completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        self.completionHandler = completionHandler
    }
}

/// The user chose an action of a local notification. A `handle` hook that takes it over answers
/// through ``completionHandler``; on `.continue` the delegate does (its default answers at once).
@MainActor
public final class LocalNotificationActionRequest {
    /// The action the user chose.
    public let identifier: String
    /// The notification it belongs to.
    public let notification: LocalNotification
    /// Reports that the action is done; the first call counts.
    public let completionHandler: @MainActor @Sendable () -> Void

    /// Creates a request.
    public init(identifier: String, notification: LocalNotification, completionHandler: @escaping @MainActor @Sendable () -> Void) {
        self.identifier = identifier
        self.notification = notification
        self.completionHandler = completionHandler
    }
}
