public import Foundation

/// The app's customisation of each system event, mPaaS style — `DTFrameworkInterface`.
///
/// Every method is optional; the defaults do nothing and answer ``HookResult/continue``. An
/// interface is sugar over the hook registry: installing one (pass it at launch) registers its
/// methods as hooks — `before…`/`after…` as `before`/`after` observers, the others as `handle`
/// hooks — labelled `FrameworkInterface.<method>`, ahead of hooks registered later.
///
/// The method names coincide with ``ApplicationDelegate``'s where UIKit's and mPaaS's do
/// (`applicationWillResignActive(_:)` returns `Void` on the delegate and ``HookResult`` here):
/// a type adopts one protocol or the other for a given event. The interface's method runs first
/// (it is a `handle` hook); the delegate's runs only if every handler answered `.continue`.
///
/// ```swift
/// final class Framework: FrameworkInterface {
///     func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult {
///         options.url?.scheme == "legacy" ? .returnNo : .continue
///     }
///     func application(_ application: Application, openURL url: URL, newURL: inout URL?,
///                      sourceApplication: String?, annotation: JSONValue?) -> HookResult {
///         newURL = url.rewrittenForV2   // everything after sees the new URL
///         return .continue
///     }
/// }
/// ```
@MainActor
public protocol FrameworkInterface: AnyObject {
    /// Before the framework's launch logic (after `willFinishLaunching`).
    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions)
    /// Decides the launch: `.returnYes` / `.returnNo` answer the system at once and skip the
    /// delegate's `didFinishLaunching`, the BootLoader and `after`; `.continue` goes on.
    func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult
    /// After all launch logic (the delegate's `didFinishLaunching` and the BootLoader).
    func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions)
    /// Pre-handles a remote notification. On a stop, the app answers through `completionHandler`.
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult
    /// Pre-handles a local notification.
    func application(_ application: Application, didReceiveLocalNotification notification: LocalNotification) -> HookResult
    /// Pre-handles a local notification's action. On a stop, the app answers through `completionHandler`.
    func application(_ application: Application, handleActionWithIdentifier identifier: String,
                     forLocalNotification notification: LocalNotification,
                     completionHandler: @escaping @MainActor @Sendable () -> Void) -> HookResult
    /// Pre-handles a device token.
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) -> HookResult
    /// Pre-handles a failed push registration.
    func application(_ application: Application,
                     didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) -> HookResult
    /// Pre-handles a URL. Set `newURL` and answer `.continue` to make everything after see
    /// another URL; `.returnYes` / `.returnNo` answer the system at once.
    func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                     sourceApplication: String?, annotation: JSONValue?) -> HookResult
    /// Pre-handles `willResignActive`.
    func applicationWillResignActive(_ application: Application) -> HookResult
    /// Pre-handles `didEnterBackground`.
    func applicationDidEnterBackground(_ application: Application) -> HookResult
    /// Pre-handles `willEnterForeground`.
    func applicationWillEnterForeground(_ application: Application) -> HookResult
    /// Pre-handles `didBecomeActive`; on `.continue` the framework also runs the BootLoader if
    /// the app is not fully loaded yet (after a background launch).
    func applicationDidBecomeActive(_ application: Application) -> HookResult
    /// Pre-handles `willTerminate`.
    func applicationWillTerminate(_ application: Application) -> HookResult
    /// Pre-handles a memory warning.
    func applicationDidReceiveMemoryWarning(_ application: Application) -> HookResult
    /// Pre-handles a user activity; `.returnYes` / `.returnNo` answer the system at once.
    func application(_ application: Application, continueUserActivity userActivity: UserActivity) -> HookResult
    /// Pre-handles a user activity with mPaaS's full selector: `restorationHandler` takes the
    /// root controllers that continue it (optional, at most once). This is the one installed;
    /// its default calls ``application(_:continueUserActivity:)``, so implement either.
    func application(_ application: Application, continueUserActivity userActivity: UserActivity,
                     restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> HookResult
    /// Pre-handles a quick action; `.returnYes` / `.returnNo` answer it, `.return` leaves the
    /// answer to `completionHandler`.
    func application(_ application: Application, performActionForShortcutItem shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) -> HookResult
    /// Pre-handles a background fetch. On a stop, the app answers through `completionHandler`.
    func application(_ application: Application,
                     performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult
    /// Pre-handles a paired watch app's request. `.continue`: listeners hear it and the delegate
    /// replies (mPaaS broadcasts it to its global listeners); a stop (`.return`): the app handled
    /// it and answers through `reply` — nothing after runs.
    func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                     reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) -> HookResult
}

extension FrameworkInterface {
    /// Does nothing.
    public func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {}
    /// Answers `.continue`.
    public func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult { .continue }
    /// Does nothing.
    public func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions) {}
    /// Answers `.continue`.
    public func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                            fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application, didReceiveLocalNotification notification: LocalNotification) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application, handleActionWithIdentifier identifier: String,
                            forLocalNotification notification: LocalNotification,
                            completionHandler: @escaping @MainActor @Sendable () -> Void) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application,
                            didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) -> HookResult { .continue }
    /// Answers `.continue` and leaves `newURL` alone.
    public func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                            sourceApplication: String?, annotation: JSONValue?) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationWillResignActive(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationDidEnterBackground(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationWillEnterForeground(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationDidBecomeActive(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationWillTerminate(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func applicationDidReceiveMemoryWarning(_ application: Application) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application, continueUserActivity userActivity: UserActivity) -> HookResult { .continue }
    /// Answers what ``application(_:continueUserActivity:)`` answers.
    public func application(_ application: Application, continueUserActivity userActivity: UserActivity,
                            restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> HookResult {
        self.application(application, continueUserActivity: userActivity)
    }
    /// Answers `.continue`.
    public func application(_ application: Application, performActionForShortcutItem shortcutItem: ShortcutItem,
                            completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application,
                            performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult { .continue }
    /// Answers `.continue`.
    public func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                            reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) -> HookResult { .continue }
}

extension Application {
    /// Registers `interface`'s methods as hooks (see ``FrameworkInterface``). The application
    /// keeps the interface and its hooks for its lifetime; the returned tokens (one per method)
    /// let you remove them earlier.
    @discardableResult
    public func install(_ interface: any FrameworkInterface) -> [ListenerToken] {
        func label(_ method: String) -> String { "FrameworkInterface.\(method)" }
        // Unowned: the hooks live in the application's registry and run only while it delivers,
        // so it outlives every call; a strong capture made application → hooks → application a
        // cycle that kept every application with an interface alive forever.
        unowned let app = self
        let tokens = [
            hooks.before(.didFinishLaunching, label: label("beforeDidFinishLaunching")) { interface.application(app, beforeDidFinishLaunchingWithOptions: $0) },
            hooks.handle(.didFinishLaunching, label: label("handleDidFinishLaunching")) { interface.application(app, handleDidFinishLaunchingWithOptions: $0) },
            hooks.after(.didFinishLaunching, label: label("afterDidFinishLaunching")) { interface.application(app, afterDidFinishLaunchingWithOptions: $0) },
            hooks.handle(.didReceiveRemoteNotification, label: label("didReceiveRemoteNotification")) {
                interface.application(app, didReceiveRemoteNotification: $0.userInfo, fetchCompletionHandler: $0.completionHandler)
            },
            hooks.handle(.didReceiveLocalNotification, label: label("didReceiveLocalNotification")) {
                interface.application(app, didReceiveLocalNotification: $0)
            },
            hooks.handle(.handleLocalNotificationAction, label: label("handleActionWithIdentifier")) {
                interface.application(app, handleActionWithIdentifier: $0.identifier, forLocalNotification: $0.notification,
                                      completionHandler: $0.completionHandler)
            },
            hooks.handle(.didRegisterForRemoteNotifications, label: label("didRegisterForRemoteNotifications")) {
                interface.application(app, didRegisterForRemoteNotificationsWithDeviceToken: $0)
            },
            hooks.handle(.didFailToRegisterForRemoteNotifications, label: label("didFailToRegisterForRemoteNotifications")) {
                interface.application(app, didFailToRegisterForRemoteNotificationsWithError: $0)
            },
            hooks.handle(.openURL, label: label("openURL")) { request in
                var newURL: URL?
                let result = interface.application(app, openURL: request.url, newURL: &newURL,
                                                   sourceApplication: request.options.sourceApplication,
                                                   annotation: request.options.annotation)
                if let newURL { request.url = newURL }
                return result
            },
            hooks.handle(.willResignActive, label: label("applicationWillResignActive")) { interface.applicationWillResignActive($0) },
            hooks.handle(.didEnterBackground, label: label("applicationDidEnterBackground")) { interface.applicationDidEnterBackground($0) },
            hooks.handle(.willEnterForeground, label: label("applicationWillEnterForeground")) { interface.applicationWillEnterForeground($0) },
            hooks.handle(.didBecomeActive, label: label("applicationDidBecomeActive")) { interface.applicationDidBecomeActive($0) },
            hooks.handle(.willTerminate, label: label("applicationWillTerminate")) { interface.applicationWillTerminate($0) },
            hooks.handle(.didReceiveMemoryWarning, label: label("applicationDidReceiveMemoryWarning")) { interface.applicationDidReceiveMemoryWarning($0) },
            hooks.handle(.continueUserActivity, label: label("continueUserActivity")) {
                interface.application(app, continueUserActivity: $0.userActivity, restorationHandler: $0.restorationHandler)
            },
            hooks.handle(.performShortcutItem, label: label("performActionForShortcutItem")) {
                interface.application(app, performActionForShortcutItem: $0.shortcutItem, completionHandler: $0.completionHandler)
            },
            hooks.handle(.performFetch, label: label("performFetch")) {
                interface.application(app, performFetchWithCompletionHandler: $0.completionHandler)
            },
            hooks.handle(.handleWatchKitExtensionRequest, label: label("handleWatchKitExtensionRequest")) {
                interface.application(app, handleWatchKitExtensionRequest: $0.userInfo, reply: $0.reply)
            },
        ]
        interfaces.append((interface, tokens))
        return tokens
    }
}
