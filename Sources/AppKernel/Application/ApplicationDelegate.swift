public import Foundation

/// The object that handles the application's life cycle — UIKit's `UIApplicationDelegate`.
///
/// Every method is optional: a protocol extension supplies the default, which does nothing or
/// gives UIKit's default answer. Calls arrive synchronously on the main actor. The
/// ``Application`` keeps its delegate alive (UIKit holds it weakly), so a test may pass a
/// temporary.
///
/// Apps with scenes (the default, ``ApplicationConfiguration/usesScenes``) receive the
/// foreground/background callbacks through their ``SceneDelegate``s, as in UIKit; the
/// application-level ones below (`applicationDidBecomeActive`, …) are then not called, while
/// listeners still hear the application-level events. Apps without scenes receive them here.
///
/// ```swift
/// final class AppDelegate: ApplicationDelegate {
///     func application(_ application: Application,
///                      didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
///         if options.location { startLocationUpdates() }
///         return true
///     }
/// }
/// ```
@MainActor
public protocol ApplicationDelegate: AnyObject {
    /// Launching has begun; state restoration has not run yet. Return `false` to refuse the
    /// launch's URL, user activity or shortcut item (apps without scenes only).
    func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool
    /// Launching is almost done. Return `false` to refuse the launch's URL, user activity or
    /// shortcut item (apps without scenes only; scene apps get them in the connection options).
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool
    /// The app became active (apps without scenes).
    func applicationDidBecomeActive(_ application: Application)
    /// The app is about to become inactive (apps without scenes).
    func applicationWillResignActive(_ application: Application)
    /// The app entered the background (apps without scenes).
    func applicationDidEnterBackground(_ application: Application)
    /// The app is about to enter the foreground (apps without scenes).
    func applicationWillEnterForeground(_ application: Application)
    /// The app is about to terminate. Not called for a suspended app, which the system ends
    /// without notice, as on iOS.
    func applicationWillTerminate(_ application: Application)
    /// The system is low on memory: free what can be rebuilt.
    func applicationDidReceiveMemoryWarning(_ application: Application)
    /// Open a URL (apps without scenes). Return whether it was handled. Default: `false`.
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool
    /// Continue a user activity (apps without scenes). Return whether it was handled. Default: `false`.
    func application(_ application: Application, continue userActivity: UserActivity) -> Bool
    /// Continue a user activity (apps without scenes), UIKit's full form: hand the root
    /// controllers that continue it to `restorationHandler` (optional, at most once; now or
    /// later, on the main actor). Return whether it was handled. This is the one the kernel
    /// calls; its default calls ``application(_:continue:)``, so implement either.
    func application(_ application: Application, continue userActivity: UserActivity,
                     restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> Bool
    /// Perform a quick action (apps without scenes). Call `completionHandler` exactly once with
    /// whether it was handled. Default: answers `false`.
    func application(_ application: Application, performActionFor shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void)
    /// Registration for remote notifications succeeded.
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// Registration for remote notifications failed.
    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError)
    /// A remote notification arrived. Call `completionHandler` exactly once, within
    /// ``ApplicationConfiguration/completionDeadline``, with what it produced. Default: `.noData`.
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void)
    /// The system grants time to fetch data in the background. Call `completionHandler` exactly
    /// once, within ``ApplicationConfiguration/completionDeadline``. Default: `.noData`.
    func application(_ application: Application,
                     performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void)
    /// A paired watch app asks for something. Call `reply` exactly once, within
    /// ``ApplicationConfiguration/completionDeadline`` (else the system replies with an empty
    /// dictionary and records a ``Diagnostic``). A suspended app is woken in the background and
    /// kept awake until it replies. Default: replies with an empty dictionary at once.
    func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                     reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void)
    /// A local notification arrived while the app ran, or the user tapped it.
    func application(_ application: Application, didReceive notification: LocalNotification)
    /// The user chose the action `identifier` of a local notification. Call `completionHandler`
    /// exactly once when done. Default: calls it at once.
    func application(_ application: Application, handleActionWithIdentifier identifier: String,
                     for notification: LocalNotification, completionHandler: @escaping @MainActor @Sendable () -> Void)
    /// Choose the configuration for a scene being connected. Default: a configuration named
    /// `"Default Configuration"` with no scene delegate.
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration
    /// The user closed scenes for good; release what belonged to their sessions.
    func application(_ application: Application, didDiscardSceneSessions sessions: Set<SceneSession>)
}

extension ApplicationDelegate {
    /// Answers `true`.
    public func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool { true }
    /// Answers `true`.
    public func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool { true }
    /// Does nothing.
    public func applicationDidBecomeActive(_ application: Application) {}
    /// Does nothing.
    public func applicationWillResignActive(_ application: Application) {}
    /// Does nothing.
    public func applicationDidEnterBackground(_ application: Application) {}
    /// Does nothing.
    public func applicationWillEnterForeground(_ application: Application) {}
    /// Does nothing.
    public func applicationWillTerminate(_ application: Application) {}
    /// Does nothing.
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
    /// Answers `false` (not handled).
    public func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool { false }
    /// Answers `false` (not handled).
    public func application(_ application: Application, continue userActivity: UserActivity) -> Bool { false }
    /// Answers what ``application(_:continue:)`` answers and leaves the restoration handler uncalled.
    public func application(_ application: Application, continue userActivity: UserActivity,
                            restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> Bool {
        self.application(application, continue: userActivity)
    }
    /// Answers `false` (not handled).
    public func application(_ application: Application, performActionFor shortcutItem: ShortcutItem,
                            completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        completionHandler(false)
    }
    /// Does nothing.
    public func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}
    /// Does nothing.
    public func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) {}
    /// Answers `.noData`.
    public func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                            fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        completionHandler(.noData)
    }
    /// Answers `.noData`.
    public func application(_ application: Application,
                            performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        completionHandler(.noData)
    }
    /// Replies with an empty dictionary.
    public func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                            reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) {
        reply([:])
    }
    /// Does nothing.
    public func application(_ application: Application, didReceive notification: LocalNotification) {}
    /// Calls `completionHandler` at once.
    public func application(_ application: Application, handleActionWithIdentifier identifier: String,
                            for notification: LocalNotification, completionHandler: @escaping @MainActor @Sendable () -> Void) {
        completionHandler()
    }
    /// Answers a configuration named `"Default Configuration"` without a scene delegate.
    public func application(_ application: Application, configurationForConnecting session: SceneSession,
                            options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Default Configuration", sessionRole: session.role)
    }
    /// Does nothing.
    public func application(_ application: Application, didDiscardSceneSessions sessions: Set<SceneSession>) {}
}

/// An application delegate that overrides nothing: every callback has its default behaviour.
/// Handy in tests and for apps that only use listeners.
@MainActor
public final class DefaultApplicationDelegate: ApplicationDelegate {
    /// Creates the delegate.
    public init() {}
}

/// Why registering for remote notifications failed — the error UIKit hands to
/// `application(_:didFailToRegisterForRemoteNotificationsWithError:)`.
public struct RemoteNotificationRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as the push service said it.
    public var reason: String
    /// Creates the error.
    public init(reason: String) { self.reason = reason }
    /// "remote-notification registration failed: <reason>".
    public var description: String { "remote-notification registration failed: \(reason)" }
}
