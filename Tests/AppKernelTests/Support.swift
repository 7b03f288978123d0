import Foundation
import AppKernel
import AppKernelTesting

/// A log shared by the delegates of one test.
@MainActor final class Log {
    var lines: [String] = []
    func take() -> [String] { defer { lines.removeAll() }; return lines }
}

/// Implements every application-delegate callback and logs it as `app.<callback>`.
@MainActor final class LoggingAppDelegate: ApplicationDelegate {
    let log: Log
    var launchAnswer = true
    var openAnswer = true
    var activityAnswer = true
    /// How to answer completion handlers: at once (default), or keep them for later.
    var fetchAnswer: BackgroundFetchResult? = .newData
    var shortcutAnswer: Bool? = true
    var pendingFetchHandlers: [@MainActor @Sendable (BackgroundFetchResult) -> Void] = []
    var pendingShortcutHandlers: [@MainActor @Sendable (Bool) -> Void] = []
    var discarded: [String] = []
    var launchOptionsSeen: [LaunchOptions] = []
    var onDidFinishLaunching: ((Application) -> Void)?

    init(log: Log) { self.log = log }

    func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        log.lines.append("app.willFinishLaunching")
        launchOptionsSeen.append(options)
        return launchAnswer
    }
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        log.lines.append("app.didFinishLaunching")
        onDidFinishLaunching?(application)
        return launchAnswer
    }
    func applicationDidBecomeActive(_ application: Application) { log.lines.append("app.didBecomeActive") }
    func applicationWillResignActive(_ application: Application) { log.lines.append("app.willResignActive") }
    func applicationDidEnterBackground(_ application: Application) { log.lines.append("app.didEnterBackground") }
    func applicationWillEnterForeground(_ application: Application) { log.lines.append("app.willEnterForeground") }
    func applicationWillTerminate(_ application: Application) { log.lines.append("app.willTerminate") }
    func applicationDidReceiveMemoryWarning(_ application: Application) { log.lines.append("app.memoryWarning") }
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        log.lines.append("app.open(\(url.absoluteString))")
        return openAnswer
    }
    func application(_ application: Application, continue userActivity: UserActivity) -> Bool {
        log.lines.append("app.continue(\(userActivity.activityType))")
        return activityAnswer
    }
    func application(_ application: Application, performActionFor shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        log.lines.append("app.performAction(\(shortcutItem.type))")
        if let shortcutAnswer { completionHandler(shortcutAnswer) } else { pendingShortcutHandlers.append(completionHandler) }
    }
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        log.lines.append("app.didRegister(\(deviceToken.count) bytes)")
    }
    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) {
        log.lines.append("app.didFailToRegister(\(error.reason))")
    }
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        log.lines.append("app.didReceiveRemoteNotification")
        if let fetchAnswer { completionHandler(fetchAnswer) } else { pendingFetchHandlers.append(completionHandler) }
    }
    func application(_ application: Application,
                     performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        log.lines.append("app.performFetch")
        if let fetchAnswer { completionHandler(fetchAnswer) } else { pendingFetchHandlers.append(completionHandler) }
    }
    func application(_ application: Application, didReceive notification: LocalNotification) {
        log.lines.append("app.didReceiveLocal(\(notification.identifier))")
    }
    func application(_ application: Application, handleActionWithIdentifier identifier: String,
                     for notification: LocalNotification, completionHandler: @escaping @MainActor @Sendable () -> Void) {
        log.lines.append("app.handleAction(\(identifier),\(notification.identifier))")
        completionHandler()
    }
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        log.lines.append("app.configurationForConnecting(\(session.persistentIdentifier))")
        let log = self.log
        return SceneConfiguration(name: "Default") { LoggingSceneDelegate(log: log) }
    }
    func application(_ application: Application, didDiscardSceneSessions sessions: Set<SceneSession>) {
        let ids = sessions.map(\.persistentIdentifier).sorted()
        discarded += ids
        log.lines.append("app.didDiscard(\(ids.joined(separator: ",")))")
    }
}

/// Implements every scene-delegate callback and logs it as `<scene id>.<callback>`.
@MainActor final class LoggingSceneDelegate: SceneDelegate {
    let log: Log
    var window: Window?
    var connectionOptions: SceneConnectionOptions?
    var root = LoggingRootController()

    init(log: Log) { self.log = log }

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        log.lines.append("\(scene.id).willConnect")
        connectionOptions = options
        let window = Window(windowScene: scene)
        root.log = log
        root.name = "\(scene.id).root"
        window.rootController = root
        window.makeKeyAndVisible()
        self.window = window
    }
    func sceneDidDisconnect(_ scene: Scene) { log.lines.append("\(scene.id).didDisconnect") }
    func sceneWillEnterForeground(_ scene: Scene) { log.lines.append("\(scene.id).willEnterForeground") }
    func sceneDidBecomeActive(_ scene: Scene) { log.lines.append("\(scene.id).didBecomeActive") }
    func sceneWillResignActive(_ scene: Scene) { log.lines.append("\(scene.id).willResignActive") }
    func sceneDidEnterBackground(_ scene: Scene) { log.lines.append("\(scene.id).didEnterBackground") }
    func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {
        log.lines.append("\(scene.id).openURLContexts(\(urlContexts.map(\.url.absoluteString).joined(separator: ",")))")
    }
    func scene(_ scene: Scene, continue userActivity: UserActivity) {
        log.lines.append("\(scene.id).continue(\(userActivity.activityType))")
    }
    func windowScene(_ scene: Scene, performActionFor shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        log.lines.append("\(scene.id).performAction(\(shortcutItem.type))")
        completionHandler(true)
    }
}

/// Logs appearance callbacks when it has a log (root controllers log only when asked).
@MainActor final class LoggingRootController: RootController {
    var log: Log?
    var name = "root"
    var appearances: [String] = []
    func viewWillAppear() { appearances.append("willAppear") }
    func viewDidAppear() { appearances.append("didAppear") }
    func viewWillDisappear() { appearances.append("willDisappear") }
    func viewDidDisappear() { appearances.append("didDisappear") }
}

extension URL {
    /// A URL from a literal known to be valid.
    static func literal(_ string: String) -> URL {
        guard let url = URL(string: string) else { preconditionFailure("invalid URL literal \(string)") }
        return url
    }
}

let sampleURL = URL.literal("myapp://item/42")
let sampleActivity = UserActivity(activityType: "com.example.view")
let sampleShortcut = ShortcutItem(type: "com.example.new", localizedTitle: "New")
let samplePayload: [String: JSONValue] = ["aps": ["content-available": 1]]
let sampleLocalNotification = LocalNotification(identifier: "n1", title: "Reminder", body: "Call Ada")
