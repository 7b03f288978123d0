public import AppKernel
public import Foundation

/// Plays the system for an `Application` in tests: launches it and sends it every event the
/// kernel knows, synchronously, on a virtual clock.
///
/// ```swift
/// let clock = TestClock()
/// let host = SimulatedHost(clock: clock)
/// let app = try host.launch(delegate: AppDelegate())
/// try host.moveToBackground()
/// let result = try await host.deliverRemoteNotification(["aps": ["content-available": 1]])
/// try host.terminate()
/// ```
///
/// Each method sends one `SystemEvent` through `Application.handle(_:)`: an illegal event
/// throws `ApplicationError` and changes nothing. Called from inside a callback (while another
/// event is being delivered), a method queues its event and returns at once — `false` / `nil`
/// for the methods that answer — and the event runs right after the current one.
///
/// Terminating and launching again starts a new `Application`, as relaunching a process does.
@MainActor
public final class SimulatedHost {
    /// The clock every application of this host uses.
    public let clock: any Clock<Duration>
    /// The configuration every application of this host gets.
    public let configuration: ApplicationConfiguration
    /// The current application: the last one launched.
    public private(set) var application: Application?
    /// The recorder attached to every application this host launches.
    public let trace: TraceRecorder
    private let makeApplication: @MainActor (any ApplicationDelegate, (any FrameworkInterface)?, BootLoader) -> Application
    private var preparations: [@MainActor (Application) -> Void] = []
    private var unhandledErrorObservations: [ListenerToken] = []
    /// Every failure the apps this host launched reported as unhandled
    /// (`Application.reportUnhandledError(_:subject:message:advice:exitStatus:)` — a failed launch no
    /// launch-error handler took, say), oldest first, across relaunches. A process host would log
    /// each and end the process; this host keeps them for the test to see.
    public private(set) var unhandledErrors: [UnhandledError] = []
    /// The indices of ``unhandledErrors`` a test has heard: taken with ``takeUnhandledErrors()``
    /// or thrown by ``launchFinished()``.
    var heardUnhandledErrors: Set<Int> = []
    /// How many of each application's `hookErrors` a test has taken with ``takeHookErrors()``.
    var takenHookErrors: [ObjectIdentifier: Int] = [:]
    /// Every application this host launched, not kept alive by the host.
    var launchedApplications: [LaunchedApplication] = []

    /// An application this host launched.
    struct LaunchedApplication {
        weak var application: Application?
    }

    /// Creates a host.
    /// - Parameters:
    ///   - clock: Where time comes from; a fresh ``TestClock`` (time moves only when a test
    ///     advances it) by default.
    ///   - configuration: Scene support and background budgets for the apps it launches.
    ///   - traceOptions: What ``trace`` records.
    public init(clock: some Clock<Duration> = TestClock(), configuration: ApplicationConfiguration = ApplicationConfiguration(),
                traceOptions: TraceRecorder.Options = [.delegates, .system, .hookStops]) {
        self.clock = clock
        self.configuration = configuration
        self.makeApplication = { delegate, interface, bootLoader in
            Application(delegate: delegate, interface: interface, bootLoader: bootLoader, clock: clock, configuration: configuration)
        }
        self.trace = TraceRecorder(options: traceOptions)
    }

    // MARK: Launch and termination

    /// Launches a new application with `delegate`.
    ///
    /// - Parameters:
    ///   - delegate: The application's delegate.
    ///   - interface: An mPaaS-style framework interface, installed as hooks before the launch.
    ///   - bootLoader: The BootLoader to run (mPaaS's default phases unless given).
    ///   - options: Why the app is launched.
    ///   - inBackground: Launch without a foreground scene, leaving the app in `.background`.
    /// - Returns: The launched application; its `Application.launchAnswer` is what
    ///   it answered the system (UIKit's YES/NO).
    /// - Throws: `ApplicationError` (`alreadyLaunched`) while the previous application runs.
    @discardableResult
    public func launch(delegate: any ApplicationDelegate, interface: (any FrameworkInterface)? = nil,
                       bootLoader: BootLoader = BootLoader(), options: LaunchOptions = LaunchOptions(),
                       inBackground: Bool = false) throws(ApplicationError) -> Application {
        if let application, application.state != .terminated, application.state != .notRunning {
            throw ApplicationError(code: .alreadyLaunched, event: inBackground ? "launchInBackground" : "launch",
                                   state: application.state)
        }
        let application = makeApplication(delegate, interface, bootLoader)
        trace.attach(to: application)
        self.application = application
        launchedApplications.append(LaunchedApplication(application: application))
        unhandledErrorObservations.append(application.observeUnhandledErrors { [weak self] in self?.unhandledErrors.append($0) })
        for prepare in preparations { prepare(application) }
        try application.handle(.launch(options, inBackground: inBackground))
        return application
    }

    /// Runs `prepare` with every application this host makes, after it is made and before its
    /// launch — the place to attach what observes the app from outside, as an SDK manager does
    /// (`ProcessHost` makes its application in its initialiser, so there it is attached directly).
    /// Preparations run in the order they were added, for every later launch (relaunches too).
    ///
    /// ```swift
    /// host.beforeEachLaunch { app in manager.attach(to: app) }
    /// ```
    public func beforeEachLaunch(_ prepare: @escaping @MainActor (Application) -> Void) {
        preparations.append(prepare)
    }

    /// Forgets every application it launched, their observations and its preparations: the end
    /// of a lifecycle explorer's world, whose app delegates may hold the world (which holds this
    /// host) — the cycle is cut here.
    func forgetApplications() {
        application = nil
        launchedApplications.removeAll()
        unhandledErrorObservations.removeAll()
        preparations.removeAll()
    }

    /// Terminates the application (UIKit: a swipe from the app switcher).
    public func terminate() throws(ApplicationError) { try send(.terminate) }

    // MARK: Transitions

    /// Sends the application (or one scene) to the background.
    public func moveToBackground(_ scene: Scene? = nil) throws(ApplicationError) { try send(.enterBackground(scene: scene?.id)) }
    /// Brings the application (or one background scene) to the foreground and activates it.
    public func moveToForeground(_ scene: Scene? = nil) throws(ApplicationError) { try send(.enterForeground(scene: scene?.id)) }
    /// Interrupts the application (or one scene): a call, an alert, the app switcher.
    public func deactivate(_ scene: Scene? = nil) throws(ApplicationError) { try send(.resignActive(scene: scene?.id)) }
    /// Ends an interruption.
    public func activate(_ scene: Scene? = nil) throws(ApplicationError) { try send(.becomeActive(scene: scene?.id)) }

    // MARK: Deliveries

    /// Sends a memory warning.
    public func sendMemoryWarning() throws(ApplicationError) { try send(.memoryWarning) }

    /// Asks the app to open `url`, bringing it to the foreground if needed.
    /// - Returns: Whether the app handled it (`false` when queued).
    @discardableResult
    public func open(_ url: URL, options: OpenURLOptions = OpenURLOptions(), in scene: Scene? = nil) throws(ApplicationError) -> Bool {
        answer(try send(.openURL(url, options, scene: scene?.id)))
    }

    /// Asks the app to continue `activity`, bringing it to the foreground if needed.
    /// - Returns: Whether the app handled it (`false` when queued).
    @discardableResult
    public func continueUserActivity(_ activity: UserActivity, in scene: Scene? = nil) throws(ApplicationError) -> Bool {
        answer(try send(.continueUserActivity(activity, scene: scene?.id)))
    }

    /// Asks the app to continue `activity`, as ``continueUserActivity(_:in:)`` does, and returns
    /// what the app handed its restoration handler during the delivery: the root controllers
    /// that continue the activity, which iOS would call `restoreUserActivityState(_:)` on — a
    /// headless host hands them back to the test. `nil` when the handler was not called (or the
    /// event was queued).
    /// - Returns: Whether the app handled the activity, and the restorable objects.
    @discardableResult
    public func continueUserActivityRestoring(_ activity: UserActivity, in scene: Scene? = nil)
        throws(ApplicationError) -> (handled: Bool, restorableObjects: [any RootController]?) {
        let restoration = UserActivityRestoration()
        let handled = answer(try send(.continueUserActivity(activity, scene: scene?.id, restoration: restoration)))
        return (handled, restoration.restorableObjects)
    }

    /// Performs a quick action and waits for the app's answer (or the system's, at the deadline).
    @discardableResult
    public func performShortcutItem(_ item: ShortcutItem, in scene: Scene? = nil) async throws(ApplicationError) -> Bool {
        let completion = Completion<Bool>(event: "performShortcutItem", fallback: false)
        try send(.performShortcutItem(item, scene: scene?.id, completion: completion))
        return await completion.value()
    }

    /// Delivers a remote notification (waking a suspended app) and waits for the fetch result
    /// the app reports — or `.failed`, answered by the system, if it does not answer within the
    /// completion deadline (advance the clock from another task to test that path).
    @discardableResult
    public func deliverRemoteNotification(_ payload: [String: JSONValue]) async throws(ApplicationError) -> BackgroundFetchResult {
        let completion = Completion<BackgroundFetchResult>(event: "remoteNotification", fallback: .failed)
        try send(.remoteNotification(payload, completion: completion))
        return await completion.value()
    }

    /// Grants a background fetch (waking a suspended app) and waits for the app's result.
    @discardableResult
    public func performBackgroundFetch() async throws(ApplicationError) -> BackgroundFetchResult {
        let completion = Completion<BackgroundFetchResult>(event: "backgroundFetch", fallback: .failed)
        try send(.backgroundFetch(completion: completion))
        return await completion.value()
    }

    /// Delivers a paired watch app's request (waking a suspended app) and waits for the app's
    /// reply — or an empty one, answered by the system with a `completionDeadlineExceeded`
    /// diagnostic, if the app does not reply within the completion deadline (advance the clock
    /// from another task to test that path).
    @discardableResult
    public func handleWatchKitExtensionRequest(_ userInfo: [String: JSONValue]) async throws(ApplicationError) -> [String: JSONValue] {
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try send(.watchKitExtensionRequest(userInfo, completion: completion))
        return await completion.value()
    }

    /// Delivers a local notification (or the user's tap on it: a backgrounded app comes forward).
    public func deliverLocalNotification(_ notification: LocalNotification) throws(ApplicationError) {
        try send(.localNotification(notification))
    }

    /// The user chose an action of a local notification; waits until the app says it is done.
    /// - Returns: `true` when the app answered, `false` when the system answered for it (the
    ///   deadline passed, or the app terminated).
    @discardableResult
    public func performLocalNotificationAction(_ identifier: String, for notification: LocalNotification) async throws(ApplicationError) -> Bool {
        let completion = Completion<Void>(event: "localNotificationAction", fallback: ())
        try send(.localNotificationAction(identifier, notification, completion: completion))
        await completion.value()
        return completion.answeredByApp
    }

    /// Answers the app's `registerForRemoteNotifications()` with a device token.
    public func completeRemoteNotificationRegistration(deviceToken: Data) throws(ApplicationError) {
        try send(.registeredForRemoteNotifications(deviceToken: deviceToken))
    }

    /// Answers the app's `registerForRemoteNotifications()` with a failure.
    public func failRemoteNotificationRegistration(_ error: RemoteNotificationRegistrationError) throws(ApplicationError) {
        try send(.failedToRegisterForRemoteNotifications(error))
    }

    // MARK: Scenes

    /// Connects a scene: a new session, or `session` again if it is open and disconnected.
    /// - Returns: The new scene (`nil` when queued).
    @discardableResult
    public func connectScene(options: SceneConnectionOptions = SceneConnectionOptions(), session: SceneSession? = nil,
                             inForeground: Bool = true) throws(ApplicationError) -> Scene? {
        if case .connected(let scene) = try send(.connectScene(options, session: session?.persistentIdentifier,
                                                                inForeground: inForeground)) {
            return scene
        }
        return nil
    }

    /// Disconnects a scene; its session stays open.
    public func disconnectScene(_ scene: Scene) throws(ApplicationError) { try send(.disconnectScene(scene: scene.id)) }

    /// Discards sessions, as when the user closes windows for good.
    public func discardSessions(_ sessions: [SceneSession]) throws(ApplicationError) {
        try send(.discardSessions(sessions.map(\.persistentIdentifier)))
    }

    // MARK: Raw events

    /// Sends any system event to the current application.
    /// - Throws: `ApplicationError` (`notLaunched`) before the first launch, or the
    ///   application's refusal.
    @discardableResult
    public func send(_ event: SystemEvent) throws(ApplicationError) -> SystemResponse {
        guard let application else {
            throw ApplicationError(code: .notLaunched, event: event.name, state: .notRunning)
        }
        return try application.handle(event)
    }

    private func answer(_ response: SystemResponse) -> Bool {
        if case .answered(let handled) = response { return handled }
        return false
    }
}
