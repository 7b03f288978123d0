public import Foundation

/// Names an event the application publishes to its listeners, and the type of what listeners
/// receive with it — the analogue of UIKit's `UIApplication.didEnterBackgroundNotification` and
/// friends, made type-safe.
///
/// ```swift
/// let token = app.addListener(for: .didEnterBackground) { app in save(app) }
/// let links = app.addListener(for: .openURL) { request in print(request.url) }
/// ```
///
/// Every application event is also a ``HookPoint``: `app.hooks.handle(.openURL) { … }`.
public struct ApplicationEvent<Payload>: HookPoint {
    /// The event's name.
    public let name: LifecycleEvent.Name
    /// The name's ordinal, taken where the event is made (`.didEnterBackground`: a constant), so
    /// that dispatch finds the event's hooks by index.
    let ordinal: Int
    let record: @MainActor @Sendable (Payload) -> LifecycleEvent

    /// Whether listeners hear the event before the delegate's method runs. UIKit documents
    /// `willEnterForegroundNotification` as posted "shortly before" calling
    /// `applicationWillEnterForeground(_:)`; every other notification is posted after its
    /// delegate method ("after calling this method, the app also posts …") or in an order UIKit
    /// leaves open, and events with no notification follow the same rule: the delegate first.
    public var notifiesBeforeDelegate: Bool { name == .willEnterForeground }

    init(_ name: LifecycleEvent.Name, record: @escaping @MainActor @Sendable (Payload) -> LifecycleEvent) {
        self.name = name
        self.ordinal = name.ordinal
        self.record = record
    }

    /// The event's name, as hook errors and traces show it.
    public var hookPointName: String { name.rawValue }

    /// Events are equal when their names are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension ApplicationEvent where Payload == LaunchOptions {
    /// Launching finished (after the delegate's `didFinishLaunching`, as UIKit posts
    /// `didFinishLaunchingNotification`).
    public static var didFinishLaunching: Self { .init(.didFinishLaunching) { .didFinishLaunching($0) } }
}

extension ApplicationEvent where Payload == Application {
    /// The app became active.
    public static var didBecomeActive: Self { .init(.didBecomeActive) { _ in .didBecomeActive } }
    /// The app is about to become inactive.
    public static var willResignActive: Self { .init(.willResignActive) { _ in .willResignActive } }
    /// The app entered the background.
    public static var didEnterBackground: Self { .init(.didEnterBackground) { _ in .didEnterBackground } }
    /// The app is about to enter the foreground.
    public static var willEnterForeground: Self { .init(.willEnterForeground) { _ in .willEnterForeground } }
    /// The app is about to terminate.
    public static var willTerminate: Self { .init(.willTerminate) { _ in .willTerminate } }
    /// The system is low on memory.
    public static var didReceiveMemoryWarning: Self { .init(.didReceiveMemoryWarning) { _ in .didReceiveMemoryWarning } }
    /// The host asked the app to reload its configuration (a process host's SIGHUP). No UIKit
    /// counterpart: parts built on the kernel (the SDK manager's boot config) answer it.
    public static var didReceiveReloadRequest: Self { .init(.didReceiveReloadRequest) { _ in .didReceiveReloadRequest } }
}

extension ApplicationEvent where Payload == BackgroundFetchRequest {
    /// A background fetch began.
    public static var performFetch: Self { .init(.performFetch) { _ in .performFetch } }
}

extension ApplicationEvent where Payload == WatchKitExtensionRequest {
    /// A paired watch app's request arrived. Listeners hear it after the delegate's method, the
    /// general rule: UIKit posts no notification for it, and mPaaS broadcasts it to its global
    /// listeners only once the framework interface's pre-handler answered `.continue`.
    public static var handleWatchKitExtensionRequest: Self {
        .init(.handleWatchKitExtensionRequest) { .handleWatchKitExtensionRequest($0.userInfo) }
    }
}

extension ApplicationEvent where Payload == OpenURLRequest {
    /// A URL is being opened.
    public static var openURL: Self { .init(.openURL) { .openURL($0.url, $0.options, scene: $0.scene?.id) } }
}

extension ApplicationEvent where Payload == UserActivityRequest {
    /// A user activity is being continued.
    public static var continueUserActivity: Self {
        .init(.continueUserActivity) { .continueUserActivity($0.userActivity, scene: $0.scene?.id) }
    }
}

extension ApplicationEvent where Payload == ShortcutItemRequest {
    /// A quick action is being performed.
    public static var performShortcutItem: Self {
        .init(.performShortcutItem) { .performShortcutItem($0.shortcutItem, scene: $0.scene?.id) }
    }
}

extension ApplicationEvent where Payload == Data {
    /// Remote-notification registration succeeded; the payload is the device token.
    public static var didRegisterForRemoteNotifications: Self {
        .init(.didRegisterForRemoteNotifications) { .didRegisterForRemoteNotifications(deviceToken: $0) }
    }
}

extension ApplicationEvent where Payload == RemoteNotificationRegistrationError {
    /// Remote-notification registration failed.
    public static var didFailToRegisterForRemoteNotifications: Self {
        .init(.didFailToRegisterForRemoteNotifications) { .didFailToRegisterForRemoteNotifications($0) }
    }
}

extension ApplicationEvent where Payload == RemoteNotificationRequest {
    /// A remote notification arrived.
    public static var didReceiveRemoteNotification: Self {
        .init(.didReceiveRemoteNotification) { .didReceiveRemoteNotification($0.userInfo) }
    }
}

extension ApplicationEvent where Payload == LocalNotification {
    /// A local notification arrived (or the user tapped it).
    public static var didReceiveLocalNotification: Self {
        .init(.didReceiveLocalNotification) { .didReceiveLocalNotification($0) }
    }
}

extension ApplicationEvent where Payload == LocalNotificationActionRequest {
    /// The user chose an action of a local notification.
    public static var handleLocalNotificationAction: Self {
        .init(.handleLocalNotificationAction) { .handleLocalNotificationAction($0.identifier, $0.notification) }
    }
}

extension ApplicationEvent where Payload == Scene {
    /// A scene is being connected.
    public static var sceneWillConnect: Self { .init(.sceneWillConnect) { .sceneWillConnect(scene: $0.id) } }
    /// A scene was disconnected.
    public static var sceneDidDisconnect: Self { .init(.sceneDidDisconnect) { .sceneDidDisconnect(scene: $0.id) } }
    /// A scene is about to enter the foreground.
    public static var sceneWillEnterForeground: Self { .init(.sceneWillEnterForeground) { .sceneWillEnterForeground(scene: $0.id) } }
    /// A scene became active.
    public static var sceneDidBecomeActive: Self { .init(.sceneDidBecomeActive) { .sceneDidBecomeActive(scene: $0.id) } }
    /// A scene is about to resign active.
    public static var sceneWillResignActive: Self { .init(.sceneWillResignActive) { .sceneWillResignActive(scene: $0.id) } }
    /// A scene entered the background.
    public static var sceneDidEnterBackground: Self { .init(.sceneDidEnterBackground) { .sceneDidEnterBackground(scene: $0.id) } }
}
