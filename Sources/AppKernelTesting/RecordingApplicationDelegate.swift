public import AppKernel
public import Foundation

/// An application delegate that implements every callback and writes each to a ``CallLog`` as
/// `app.<callback>`: `app.willFinishLaunching`, `app.didFinishLaunching`, `app.didBecomeActive`,
/// `app.willResignActive`, `app.didEnterBackground`, `app.willEnterForeground`,
/// `app.willTerminate`, `app.memoryWarning`, `app.open(<url>)`, `app.continue(<type>)`,
/// `app.performAction(<type>)`, `app.didRegister(<n> bytes)`, `app.didFailToRegister(<reason>)`,
/// `app.didReceiveRemoteNotification`, `app.performFetch`, `app.handleWatchKitExtensionRequest`,
/// `app.didReceiveLocal(<id>)`,
/// `app.handleAction(<action>,<notification id>)`, `app.configurationForConnecting(<session id>)`,
/// `app.didDiscard(<session id>,<session id>…)`.
///
/// It answers as its `…Answer` properties say, and configures every scene with a
/// ``RecordingSceneDelegate`` writing to the same log.
///
/// ```swift
/// let log = CallLog()
/// let delegate = RecordingApplicationDelegate(log: log)
/// delegate.fetchAnswer = nil               // keep fetch completions for the test to call
/// let app = try SimulatedHost().launch(delegate: delegate)
/// ```
@MainActor
public final class RecordingApplicationDelegate: ApplicationDelegate {
    /// Where the callbacks are written.
    public let log: CallLog
    /// Whether its scenes' lines say which scene (`scene-1.willConnect`,
    /// `app.configurationForConnecting(scene-1)`) or not (`scene.willConnect`,
    /// `app.configurationForConnecting`: one-scene tests that need not say which).
    public let identifiesScenes: Bool
    /// The answer to `willFinishLaunching` and `didFinishLaunching`.
    public var launchAnswer = true
    /// The answer to opening a URL.
    public var openAnswer = true
    /// The answer to continuing a user activity.
    public var activityAnswer = true
    /// The answer to remote notifications and background fetches, given at once; `nil` keeps
    /// their completion handlers in ``pendingFetchHandlers`` for the test to call.
    public var fetchAnswer: BackgroundFetchResult? = .newData
    /// The answer to shortcut actions, given at once; `nil` keeps their completion handlers in
    /// ``pendingShortcutHandlers``.
    public var shortcutAnswer: Bool? = true
    /// The reply to a watch app's request, given at once; `nil` keeps the reply handlers in
    /// ``pendingWatchKitReplies``.
    public var watchKitReply: [String: JSONValue]? = ["ok": true]
    /// Watch-app reply handlers kept while ``watchKitReply`` is `nil`.
    public var pendingWatchKitReplies: [@MainActor @Sendable ([String: JSONValue]) -> Void] = []
    /// Fetch and remote-notification completion handlers kept while ``fetchAnswer`` is `nil`.
    public var pendingFetchHandlers: [@MainActor @Sendable (BackgroundFetchResult) -> Void] = []
    /// Shortcut completion handlers kept while ``shortcutAnswer`` is `nil`.
    public var pendingShortcutHandlers: [@MainActor @Sendable (Bool) -> Void] = []
    /// The ids of every discarded scene session, in the order they were discarded.
    public var discarded: [String] = []
    /// The options of every `willFinishLaunching`.
    public var launchOptionsSeen: [LaunchOptions] = []
    /// Runs in `didFinishLaunching`, after the line is written.
    public var onDidFinishLaunching: ((Application) -> Void)?

    /// Creates a delegate writing to `log`; with `identifiesScenes` false, scene lines begin
    /// with `scene` and `app.configurationForConnecting` leaves out the session's id.
    public init(log: CallLog, identifiesScenes: Bool = true) {
        self.log = log
        self.identifiesScenes = identifiesScenes
    }

    /// Records `willFinishLaunching`, keeps the options and answers ``launchAnswer``.
    public func application(_ application: Application, willFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        log.append("app.willFinishLaunching")
        launchOptionsSeen.append(options)
        return launchAnswer
    }
    /// Records `didFinishLaunching`, runs ``onDidFinishLaunching`` and answers ``launchAnswer``.
    public func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        log.append("app.didFinishLaunching")
        onDidFinishLaunching?(application)
        return launchAnswer
    }
    /// Records `didBecomeActive`.
    public func applicationDidBecomeActive(_ application: Application) { log.append("app.didBecomeActive") }
    /// Records `willResignActive`.
    public func applicationWillResignActive(_ application: Application) { log.append("app.willResignActive") }
    /// Records `didEnterBackground`.
    public func applicationDidEnterBackground(_ application: Application) { log.append("app.didEnterBackground") }
    /// Records `willEnterForeground`.
    public func applicationWillEnterForeground(_ application: Application) { log.append("app.willEnterForeground") }
    /// Records `willTerminate`.
    public func applicationWillTerminate(_ application: Application) { log.append("app.willTerminate") }
    /// Records `memoryWarning`.
    public func applicationDidReceiveMemoryWarning(_ application: Application) { log.append("app.memoryWarning") }
    /// Records `open(<url>)` and answers ``openAnswer``.
    public func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        log.append("app.open(\(url.absoluteString))")
        return openAnswer
    }
    /// Records `continue(<activity type>)` and answers ``activityAnswer``.
    public func application(_ application: Application, continue userActivity: UserActivity) -> Bool {
        log.append("app.continue(\(userActivity.activityType))")
        return activityAnswer
    }
    /// Records `performAction(<shortcut type>)` and answers ``shortcutAnswer`` (or keeps the handler).
    public func application(_ application: Application, performActionFor shortcutItem: ShortcutItem,
                            completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
        log.append("app.performAction(\(shortcutItem.type))")
        if let shortcutAnswer { completionHandler(shortcutAnswer) } else { pendingShortcutHandlers.append(completionHandler) }
    }
    /// Records `didRegister(<n> bytes)`.
    public func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        log.append("app.didRegister(\(deviceToken.count) bytes)")
    }
    /// Records `didFailToRegister(<reason>)`.
    public func application(_ application: Application,
                            didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) {
        log.append("app.didFailToRegister(\(error.reason))")
    }
    /// Records `didReceiveRemoteNotification` and answers ``fetchAnswer`` (or keeps the handler).
    public func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                            fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        log.append("app.didReceiveRemoteNotification")
        answerFetch(completionHandler)
    }
    /// Records `performFetch` and answers ``fetchAnswer`` (or keeps the handler).
    public func application(_ application: Application,
                            performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        log.append("app.performFetch")
        answerFetch(completionHandler)
    }
    /// Records `handleWatchKitExtensionRequest` and replies ``watchKitReply`` (or keeps the handler).
    public func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                            reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) {
        log.append("app.handleWatchKitExtensionRequest")
        if let watchKitReply { reply(watchKitReply) } else { pendingWatchKitReplies.append(reply) }
    }
    /// Records `didReceiveLocal(<notification id>)`.
    public func application(_ application: Application, didReceive notification: LocalNotification) {
        log.append("app.didReceiveLocal(\(notification.identifier))")
    }
    /// Records `handleAction(<action>,<notification id>)` and completes at once.
    public func application(_ application: Application, handleActionWithIdentifier identifier: String,
                            for notification: LocalNotification, completionHandler: @escaping @MainActor @Sendable () -> Void) {
        log.append("app.handleAction(\(identifier),\(notification.identifier))")
        completionHandler()
    }
    /// Records `configurationForConnecting(<session id>)` and answers a `Default` configuration
    /// whose scenes get a ``RecordingSceneDelegate`` writing to the same log.
    public func application(_ application: Application, configurationForConnecting session: SceneSession,
                            options: SceneConnectionOptions) -> SceneConfiguration {
        log.append(identifiesScenes ? "app.configurationForConnecting(\(session.persistentIdentifier))" : "app.configurationForConnecting")
        let log = self.log, identifiesScenes = self.identifiesScenes
        return SceneConfiguration(name: "Default") { RecordingSceneDelegate(log: log, identifiesScene: identifiesScenes) }
    }
    /// Records `didDiscard(<session id>,…)`, sorted, and adds the ids to ``discarded``.
    public func application(_ application: Application, didDiscardSceneSessions sessions: Set<SceneSession>) {
        let ids = sessions.map(\.persistentIdentifier).sorted()
        discarded += ids
        log.append("app.didDiscard(\(ids.joined(separator: ",")))")
    }

    private func answerFetch(_ completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        if let fetchAnswer { completionHandler(fetchAnswer) } else { pendingFetchHandlers.append(completionHandler) }
    }
}
