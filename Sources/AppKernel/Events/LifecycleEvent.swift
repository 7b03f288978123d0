public import Foundation

/// A record of one step of the event pipeline: a callback made, a notification published, or a
/// decision the system took. Values are `Sendable` and `Hashable`, so they travel through
/// ``Application/lifecycleEvents(bufferingPolicy:)`` and compare in whole-trace assertions.
///
/// Listeners hear the published subset (UIKit's notifications, see ``ApplicationEvent``);
/// the other cases (`willFinishLaunching`, `configurationForConnecting`, `didDiscardSceneSessions`,
/// `didSuspend`, `backgroundTaskExpired`, `phase`) are delegate queries or system decisions that only the
/// pipeline's instrumentation reports (the trace recorder in AppKernelTesting shows them).
public enum LifecycleEvent: Sendable, Hashable, CustomStringConvertible {
    /// `application(_:willFinishLaunchingWithOptions:)`.
    indirect case willFinishLaunching(LaunchOptions)
    /// `application(_:didFinishLaunchingWithOptions:)` / `didFinishLaunchingNotification`.
    indirect case didFinishLaunching(LaunchOptions)
    /// The app became active.
    case didBecomeActive
    /// The app is about to become inactive.
    case willResignActive
    /// The app entered the background.
    case didEnterBackground
    /// The app is about to enter the foreground.
    case willEnterForeground
    /// The app is about to terminate.
    case willTerminate
    /// The system is low on memory.
    case didReceiveMemoryWarning
    /// The host asked the app to reload its configuration.
    case didReceiveReloadRequest
    /// A URL is being opened (in `scene`, for scene apps).
    indirect case openURL(URL, OpenURLOptions, scene: String?)
    /// A user activity is being continued (in `scene`, for scene apps).
    indirect case continueUserActivity(UserActivity, scene: String?)
    /// A quick action is being performed (in `scene`, for scene apps).
    indirect case performShortcutItem(ShortcutItem, scene: String?)
    /// Remote-notification registration succeeded.
    case didRegisterForRemoteNotifications(deviceToken: Data)
    /// Remote-notification registration failed.
    indirect case didFailToRegisterForRemoteNotifications(RemoteNotificationRegistrationError)
    /// A remote notification arrived.
    case didReceiveRemoteNotification([String: JSONValue])
    /// A background fetch began.
    case performFetch
    /// A paired watch app's request arrived (its `userInfo`).
    case handleWatchKitExtensionRequest([String: JSONValue])
    /// A local notification arrived.
    indirect case didReceiveLocalNotification(LocalNotification)
    /// The user chose the action `identifier` of a local notification.
    indirect case handleLocalNotificationAction(String, LocalNotification)
    /// The delegate is asked for the configuration of the session `session`.
    case configurationForConnecting(session: String)
    /// Sessions were discarded.
    case didDiscardSceneSessions([String])
    /// Scene `scene` is being connected.
    case sceneWillConnect(scene: String)
    /// Scene `scene` was disconnected.
    case sceneDidDisconnect(scene: String)
    /// Scene `scene` is about to enter the foreground.
    case sceneWillEnterForeground(scene: String)
    /// Scene `scene` became active.
    case sceneDidBecomeActive(scene: String)
    /// Scene `scene` is about to resign active.
    case sceneWillResignActive(scene: String)
    /// Scene `scene` entered the background.
    case sceneDidEnterBackground(scene: String)
    /// The system suspended the app.
    case didSuspend
    /// The background task `name` (or its identifier, when unnamed) ran out of time.
    case backgroundTaskExpired(String)
    /// A phase engine (the BootLoader, the SDK manager's launch) started the phase with this name.
    case phase(String)
    /// A phase engine's phase ended (finished or failed).
    case phaseEnded(String)

    /// The event's name without its data, for filtering and for traces: the one list of the
    /// events the application publishes. Everything else about a name derives from its case —
    /// its text (``rawValue``, the case as written) and its ordinal (its place in `allCases`,
    /// which hook tables index) — so adding an event here is the whole of naming it.
    public enum Name: Sendable, Hashable, CaseIterable {
        /// The name of ``LifecycleEvent/willFinishLaunching(_:)``.
        case willFinishLaunching
        /// The name of ``LifecycleEvent/didFinishLaunching(_:)``.
        case didFinishLaunching
        /// The name of ``LifecycleEvent/didBecomeActive``.
        case didBecomeActive
        /// The name of ``LifecycleEvent/willResignActive``.
        case willResignActive
        /// The name of ``LifecycleEvent/didEnterBackground``.
        case didEnterBackground
        /// The name of ``LifecycleEvent/willEnterForeground``.
        case willEnterForeground
        /// The name of ``LifecycleEvent/willTerminate``.
        case willTerminate
        /// The name of ``LifecycleEvent/didReceiveMemoryWarning``.
        case didReceiveMemoryWarning
        /// The name of ``LifecycleEvent/didReceiveReloadRequest``.
        case didReceiveReloadRequest
        /// The name of ``LifecycleEvent/openURL(_:_:scene:)``.
        case openURL
        /// The name of ``LifecycleEvent/continueUserActivity(_:scene:)``.
        case continueUserActivity
        /// The name of ``LifecycleEvent/performShortcutItem(_:scene:)``.
        case performShortcutItem
        /// The name of ``LifecycleEvent/didRegisterForRemoteNotifications(deviceToken:)``.
        case didRegisterForRemoteNotifications
        /// The name of ``LifecycleEvent/didFailToRegisterForRemoteNotifications(_:)``.
        case didFailToRegisterForRemoteNotifications
        /// The name of ``LifecycleEvent/didReceiveRemoteNotification(_:)``.
        case didReceiveRemoteNotification
        /// The name of ``LifecycleEvent/performFetch``.
        case performFetch
        /// The name of ``LifecycleEvent/handleWatchKitExtensionRequest(_:)``.
        case handleWatchKitExtensionRequest
        /// The name of ``LifecycleEvent/didReceiveLocalNotification(_:)``.
        case didReceiveLocalNotification
        /// The name of ``LifecycleEvent/handleLocalNotificationAction(_:_:)``.
        case handleLocalNotificationAction
        /// The name of ``LifecycleEvent/configurationForConnecting(session:)``.
        case configurationForConnecting
        /// The name of ``LifecycleEvent/didDiscardSceneSessions(_:)``.
        case didDiscardSceneSessions
        /// The name of ``LifecycleEvent/sceneWillConnect(scene:)``.
        case sceneWillConnect
        /// The name of ``LifecycleEvent/sceneDidDisconnect(scene:)``.
        case sceneDidDisconnect
        /// The name of ``LifecycleEvent/sceneWillEnterForeground(scene:)``.
        case sceneWillEnterForeground
        /// The name of ``LifecycleEvent/sceneDidBecomeActive(scene:)``.
        case sceneDidBecomeActive
        /// The name of ``LifecycleEvent/sceneWillResignActive(scene:)``.
        case sceneWillResignActive
        /// The name of ``LifecycleEvent/sceneDidEnterBackground(scene:)``.
        case sceneDidEnterBackground
        /// The name of ``LifecycleEvent/didSuspend``.
        case didSuspend
        /// The name of ``LifecycleEvent/backgroundTaskExpired(_:)``.
        case backgroundTaskExpired
        /// The name of ``LifecycleEvent/phase(_:)``.
        case phase
        /// The name of ``LifecycleEvent/phaseEnded(_:)``.
        case phaseEnded
    }

    /// The event's name.
    public var name: Name {
        switch self {
        case .willFinishLaunching: .willFinishLaunching
        case .didFinishLaunching: .didFinishLaunching
        case .didBecomeActive: .didBecomeActive
        case .willResignActive: .willResignActive
        case .didEnterBackground: .didEnterBackground
        case .willEnterForeground: .willEnterForeground
        case .willTerminate: .willTerminate
        case .didReceiveMemoryWarning: .didReceiveMemoryWarning
        case .didReceiveReloadRequest: .didReceiveReloadRequest
        case .openURL: .openURL
        case .continueUserActivity: .continueUserActivity
        case .performShortcutItem: .performShortcutItem
        case .didRegisterForRemoteNotifications: .didRegisterForRemoteNotifications
        case .didFailToRegisterForRemoteNotifications: .didFailToRegisterForRemoteNotifications
        case .didReceiveRemoteNotification: .didReceiveRemoteNotification
        case .performFetch: .performFetch
        case .handleWatchKitExtensionRequest: .handleWatchKitExtensionRequest
        case .didReceiveLocalNotification: .didReceiveLocalNotification
        case .handleLocalNotificationAction: .handleLocalNotificationAction
        case .configurationForConnecting: .configurationForConnecting
        case .didDiscardSceneSessions: .didDiscardSceneSessions
        case .sceneWillConnect: .sceneWillConnect
        case .sceneDidDisconnect: .sceneDidDisconnect
        case .sceneWillEnterForeground: .sceneWillEnterForeground
        case .sceneDidBecomeActive: .sceneDidBecomeActive
        case .sceneWillResignActive: .sceneWillResignActive
        case .sceneDidEnterBackground: .sceneDidEnterBackground
        case .didSuspend: .didSuspend
        case .backgroundTaskExpired: .backgroundTaskExpired
        case .phase: .phase
        case .phaseEnded: .phaseEnded
        }
    }

    /// The scene the event concerns, for scene events and for URLs, activities and quick actions
    /// delivered to a scene.
    public var sceneID: String? {
        switch self {
        case .sceneWillConnect(let scene), .sceneDidDisconnect(let scene), .sceneWillEnterForeground(let scene),
             .sceneDidBecomeActive(let scene), .sceneWillResignActive(let scene), .sceneDidEnterBackground(let scene):
            scene
        case .openURL(_, _, let scene), .continueUserActivity(_, let scene), .performShortcutItem(_, let scene):
            scene
        default:
            nil
        }
    }

    /// The name, with the event's main datum in parentheses where it has one:
    /// `openURL(myapp://x)`, `backgroundTaskExpired(upload)`.
    public var description: String {
        switch self {
        case .openURL(let url, _, _): "openURL(\(url.absoluteString))"
        case .continueUserActivity(let activity, _): "continueUserActivity(\(activity.activityType))"
        case .performShortcutItem(let item, _): "performShortcutItem(\(item.type))"
        case .didReceiveRemoteNotification(let payload): "didReceiveRemoteNotification(\(JSONValue.object(payload)))"
        case .handleWatchKitExtensionRequest(let userInfo): "handleWatchKitExtensionRequest(\(JSONValue.object(userInfo)))"
        case .didFailToRegisterForRemoteNotifications(let error): "didFailToRegisterForRemoteNotifications(\(error.reason))"
        case .configurationForConnecting(let session): "configurationForConnecting(\(session))"
        case .didDiscardSceneSessions(let sessions): "didDiscardSceneSessions(\(sessions.joined(separator: ",")))"
        case .backgroundTaskExpired(let task): "backgroundTaskExpired(\(task))"
        case .phase(let phase): "phase(\(phase))"
        case .phaseEnded(let phase): "phaseEnded(\(phase))"
        case .didReceiveLocalNotification(let notification): "didReceiveLocalNotification(\(notification.identifier))"
        case .handleLocalNotificationAction(let action, let notification):
            "handleLocalNotificationAction(\(action), \(notification.identifier))"
        default: name.rawValue
        }
    }
}

extension LifecycleEvent.Name {
    /// The name as written in its case (`"didEnterBackground"`), as traces and hook errors show it.
    public var rawValue: String { Self.texts[ordinal] }

    /// The name written `rawValue`, if there is one.
    public init?(rawValue: String) {
        guard let index = Self.texts.firstIndex(of: rawValue) else { return nil }
        self = Self.allCases[index]
    }

    /// The name's place in `allCases` (declaration order): dense from 0 and unique, for tables
    /// indexed without hashing (the hook registry's chains of application events). For a name
    /// known where it is used (`.didEnterBackground`), the optimiser computes it at compile time.
    var ordinal: Int {
        guard let index = Self.allCases.firstIndex(of: self) else { preconditionFailure("every name is in allCases") }
        return index
    }

    /// Every name's text, by ordinal: each case's own spelling, read once from the enumeration
    /// (what `print` shows for a case without a payload).
    private static let texts: [String] = allCases.map { String(describing: $0) }
}
