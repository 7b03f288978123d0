public import Foundation

/// Why the application was launched — UIKit's launch-options dictionary, as typed properties.
///
/// An empty value means the user launched the app. A key is present only for the reason that
/// applies, as in UIKit:
///
/// ```swift
/// LaunchOptions()                                                  // the user tapped the icon
/// LaunchOptions(url: URL(string: "myapp://item/42")!, sourceApplication: "com.example.mail")
/// LaunchOptions(remoteNotification: ["aps": ["content-available": 1]])   // a silent push
/// ```
///
/// For scene-based apps the URL, user activity and shortcut item are handed to the first scene in
/// its ``SceneConnectionOptions`` (and not delivered again), as UIKit does. For apps without
/// scenes they are delivered after `didFinishLaunching` returns `true` — see ``Application``.
public struct LaunchOptions: Sendable, Hashable {
    /// The URL the app was asked to open (`UIApplication.LaunchOptionsKey.url`).
    public var url: URL?
    /// The app that asked to open ``url`` (`.sourceApplication`).
    public var sourceApplication: String?
    /// The payload of the remote notification that launched the app (`.remoteNotification`).
    public var remoteNotification: [String: JSONValue]?
    /// Whether the app was launched to handle a location event (`.location`).
    public var location: Bool
    /// The quick action that launched the app (`.shortcutItem`).
    public var shortcutItem: ShortcutItem?
    /// The activity the app was launched to continue (`.userActivityDictionary`).
    public var userActivity: UserActivity?
    /// Whether the system launched the app to perform a background fetch.
    public var backgroundFetch: Bool

    /// Creates launch options; every reason defaults to "absent" (a launch by the user).
    public init(url: URL? = nil, sourceApplication: String? = nil,
                remoteNotification: [String: JSONValue]? = nil, location: Bool = false,
                shortcutItem: ShortcutItem? = nil, userActivity: UserActivity? = nil,
                backgroundFetch: Bool = false) {
        self.url = url
        self.sourceApplication = sourceApplication
        self.remoteNotification = remoteNotification
        self.location = location
        self.shortcutItem = shortcutItem
        self.userActivity = userActivity
        self.backgroundFetch = backgroundFetch
    }

    /// The reasons a launch can have, one per option.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// The user launched the app.
        case user
        /// To open a URL.
        case url
        /// For a remote notification.
        case remoteNotification
        /// For a location event.
        case location
        /// For a quick action.
        case shortcutItem
        /// To continue a user activity.
        case userActivity
        /// For a background fetch.
        case backgroundFetch
    }

    /// Every reason present, in the order of ``Reason``'s cases; `[.user]` when none is.
    public var reasons: [Reason] {
        var found: [Reason] = []
        if url != nil { found.append(.url) }
        if remoteNotification != nil { found.append(.remoteNotification) }
        if location { found.append(.location) }
        if shortcutItem != nil { found.append(.shortcutItem) }
        if userActivity != nil { found.append(.userActivity) }
        if backgroundFetch { found.append(.backgroundFetch) }
        return found.isEmpty ? [.user] : found
    }

    /// Whether the user launched the app (no other reason is present).
    public var isUserLaunch: Bool { reasons == [.user] }

    /// The connection options UIKit gives the first scene of a launch with these options.
    public var sceneConnectionOptions: SceneConnectionOptions {
        SceneConnectionOptions(
            urlContexts: url.map { [OpenURLContext(url: $0, options: OpenURLOptions(sourceApplication: sourceApplication))] } ?? [],
            userActivities: userActivity.map { [$0] } ?? [],
            shortcutItem: shortcutItem,
            sourceApplication: sourceApplication,
            remoteNotification: remoteNotification)
    }
}
