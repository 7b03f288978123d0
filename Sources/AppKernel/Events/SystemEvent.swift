public import Foundation

/// An event the host (the system) sends to an ``Application`` — the one port through which
/// launches, transitions and deliveries enter the kernel. `SimulatedHost` (tests) and the process
/// host (a real Linux process) both speak it; see ``Application/handle(_:)``.
///
/// A scene named by identifier must be one of ``Application/connectedScenes``; `nil` means
/// "every scene the event applies to" (for transitions) or "the scene the system would pick"
/// (for deliveries: the active one, else a foreground one, else the first connected, else a
/// new one).
public enum SystemEvent {
    /// Launch the app, in the foreground or the background.
    indirect case launch(LaunchOptions, inBackground: Bool)
    /// Bring the app (or one scene) to the foreground and activate it.
    case enterForeground(scene: String?)
    /// Send the app (or one scene) to the background.
    case enterBackground(scene: String?)
    /// Interrupt the app (or one scene): active → inactive.
    case resignActive(scene: String?)
    /// End an interruption: inactive → active.
    case becomeActive(scene: String?)
    /// The system is low on memory.
    case memoryWarning
    /// Configuration changed: reload it (a process host's SIGHUP). Published to listeners and
    /// hooks as ``ApplicationEvent/didReceiveReloadRequest``; there is no delegate method.
    case reloadConfiguration
    /// Open a URL; the app comes to the foreground if it was not.
    indirect case openURL(URL, OpenURLOptions, scene: String?)
    /// Continue a user activity; the app comes to the foreground if it was not. What the app
    /// hands its restoration handler is kept in `restoration` for the host (the kernel makes
    /// one when the host gives none).
    indirect case continueUserActivity(UserActivity, scene: String?, restoration: UserActivityRestoration? = nil)
    /// Perform a quick action; the app comes to the foreground if it was not.
    indirect case performShortcutItem(ShortcutItem, scene: String?, completion: Completion<Bool>)
    /// The push service issued a device token.
    case registeredForRemoteNotifications(deviceToken: Data)
    /// The push service refused the registration.
    indirect case failedToRegisterForRemoteNotifications(RemoteNotificationRegistrationError)
    /// A remote notification arrived; a suspended app is woken in the background to handle it.
    case remoteNotification([String: JSONValue], completion: Completion<BackgroundFetchResult>)
    /// The system grants a background fetch; a suspended app is woken for it.
    case backgroundFetch(completion: Completion<BackgroundFetchResult>)
    /// A paired watch app asks the app for something (UIKit's
    /// `application(_:handleWatchKitExtensionRequest:reply:)`); a suspended app is woken in the
    /// background to answer. The reply is answered exactly once: by the app, or by the system
    /// with the completion's fallback — make it `[:]`, an empty reply — at the deadline or at
    /// termination. `ProcessHost` has no source for it.
    case watchKitExtensionRequest([String: JSONValue], completion: Completion<[String: JSONValue]>)
    /// A local notification fires while the app runs, or the user taps it (the app comes to
    /// the foreground if it was not).
    indirect case localNotification(LocalNotification)
    /// The user chose an action of a local notification; the app handles it where it is
    /// (a suspended app is woken in the background).
    indirect case localNotificationAction(String, LocalNotification, completion: Completion<Void>)
    /// Connect a scene (a new session, or an open session named by identifier), in the
    /// foreground or the background.
    indirect case connectScene(SceneConnectionOptions, session: String?, inForeground: Bool)
    /// Disconnect a scene; its session stays open.
    case disconnectScene(scene: String)
    /// The user closed sessions for good.
    case discardSessions([String])
    /// Terminate the app. A suspended app is ended without callbacks, as on iOS.
    case terminate

    /// The event's name, as used in errors and in the legality table.
    public var name: String { kind.rawValue }

    /// The event's kind, without its data.
    public var kind: Kind {
        switch self {
        case .launch(_, let inBackground): inBackground ? .launchInBackground : .launch
        case .enterForeground: .enterForeground
        case .enterBackground: .enterBackground
        case .resignActive: .resignActive
        case .becomeActive: .becomeActive
        case .memoryWarning: .memoryWarning
        case .reloadConfiguration: .reloadConfiguration
        case .openURL: .openURL
        case .continueUserActivity: .continueUserActivity
        case .performShortcutItem: .performShortcutItem
        case .registeredForRemoteNotifications: .registeredForRemoteNotifications
        case .failedToRegisterForRemoteNotifications: .failedToRegisterForRemoteNotifications
        case .remoteNotification: .remoteNotification
        case .backgroundFetch: .backgroundFetch
        case .watchKitExtensionRequest: .watchKitExtensionRequest
        case .localNotification: .localNotification
        case .localNotificationAction: .localNotificationAction
        case .connectScene: .connectScene
        case .disconnectScene: .disconnectScene
        case .discardSessions: .discardSessions
        case .terminate: .terminate
        }
    }

    /// The event's kind, without its data: the one list of the system events. Its raw value is
    /// its name (`"memoryWarning"`), as errors show it; its row in ``LifecycleRules/isLegal(_:in:)``
    /// says where it is legal.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// ``SystemEvent/launch(_:inBackground:)`` in the foreground.
        case launch
        /// ``SystemEvent/launch(_:inBackground:)`` in the background.
        case launchInBackground
        /// ``SystemEvent/enterForeground(scene:)``.
        case enterForeground
        /// ``SystemEvent/enterBackground(scene:)``.
        case enterBackground
        /// ``SystemEvent/resignActive(scene:)``.
        case resignActive
        /// ``SystemEvent/becomeActive(scene:)``.
        case becomeActive
        /// ``SystemEvent/memoryWarning``.
        case memoryWarning
        /// ``SystemEvent/reloadConfiguration``.
        case reloadConfiguration
        /// ``SystemEvent/openURL(_:_:scene:)``.
        case openURL
        /// ``SystemEvent/continueUserActivity(_:scene:restoration:)``.
        case continueUserActivity
        /// ``SystemEvent/performShortcutItem(_:scene:completion:)``.
        case performShortcutItem
        /// ``SystemEvent/registeredForRemoteNotifications(deviceToken:)``.
        case registeredForRemoteNotifications
        /// ``SystemEvent/failedToRegisterForRemoteNotifications(_:)``.
        case failedToRegisterForRemoteNotifications
        /// ``SystemEvent/remoteNotification(_:completion:)``.
        case remoteNotification
        /// ``SystemEvent/backgroundFetch(completion:)``.
        case backgroundFetch
        /// ``SystemEvent/watchKitExtensionRequest(_:completion:)``.
        case watchKitExtensionRequest
        /// ``SystemEvent/localNotification(_:)``.
        case localNotification
        /// ``SystemEvent/localNotificationAction(_:_:completion:)``.
        case localNotificationAction
        /// ``SystemEvent/connectScene(_:session:inForeground:)``.
        case connectScene
        /// ``SystemEvent/disconnectScene(scene:)``.
        case disconnectScene
        /// ``SystemEvent/discardSessions(_:)``.
        case discardSessions
        /// ``SystemEvent/terminate``.
        case terminate
    }
}

/// The kernel's answer to a ``SystemEvent``.
public enum SystemResponse {
    /// The event was processed; it has no answer.
    case done
    /// The event was processed; the app answered (launch: whether both launch callbacks returned
    /// `true`; open URL / continue activity: whether the app handled it).
    case answered(Bool)
    /// A scene was connected.
    case connected(Scene)
    /// The event arrived while another was being delivered; it was queued and will be processed
    /// (or refused, with a ``Diagnostic``) as soon as the current one is done, FIFO.
    case queued
}
