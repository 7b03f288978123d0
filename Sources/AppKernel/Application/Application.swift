import AppKernelCore
import Foundation

/// The centralized point of control for a running app — UIKit's `UIApplication`.
///
/// An application receives ``SystemEvent``s from its host through ``handle(_:)`` and drives its
/// delegate, its scenes and its listeners through UIKit's life cycle. It lives on the main actor
/// and calls everything synchronously there, as UIKit does. There is one per process in
/// production (the process host makes it); tests make as many as they like, side by side: an
/// application keeps its state, listeners and hooks to itself. The one process-wide thing is a
/// list of launch observers (package-internal, the counterpart of UIKit's process-wide
/// `didFinishLaunchingNotification`): every application tells it when it starts launching, so that
/// a shared SDK manager finds the app it serves. It holds no application; with no observer
/// registered (no shared SDK manager), telling it does nothing. Inside a `SharedScope` (a
/// test's), the list is the scope's own, so tests launching apps in parallel never see each other's.
///
/// ```swift
/// let host = SimulatedHost()                                  // AppKernelTesting
/// let app = try host.launch(delegate: AppDelegate())          // .active, one scene connected
/// try host.moveToBackground()                                 // .background
/// let task = app.beginBackgroundTask(name: "upload") { /* out of time */ }
/// app.endBackgroundTask(task)                                 // .suspended
/// ```
///
/// ### The event pipeline
/// Every event is one pass through the pipeline: the host's event → the delegate (application
/// or scene) → the application's listeners, where UIKit posts its notifications (before the
/// delegate only for `willEnterForeground`). An event raised while another is being
/// delivered — by a callback that asks the host for something, or by the system itself (a task
/// ending inside a callback) — is queued and processed after the current one, FIFO: deliveries
/// never interleave. See DESIGN.md.
@MainActor
public final class Application {
    /// The application's delegate. The application keeps it alive.
    public let delegate: any ApplicationDelegate
    /// The settings UIKit reads from Info.plist.
    public let configuration: ApplicationConfiguration
    /// The application's state.
    public internal(set) var state: ApplicationState = .notRunning
    /// The options of the launch (empty before launch).
    public internal(set) var launchOptions = LaunchOptions()
    /// What the launch answered the system (UIKit's return value of
    /// `application(_:didFinishLaunchingWithOptions:)`): `false` when either launch method
    /// returned `false` or a `handle` hook stopped the launch with ``HookResult/returnNo``;
    /// `nil` until the launch has returned. `false` refuses the launch's URL, activity and quick action.
    public internal(set) var launchAnswer: Bool?
    /// Observers of every application of the process that starts launching (UIKit's
    /// process-wide `didFinishLaunchingNotification` on the default notification center, told
    /// earlier): how a shared SDK manager finds the app it serves without being handed it. The
    /// kernel's one process-wide state: static, main-actor isolated, and holding only observers.
    /// Inside a `SharedScope` (a test's) the list is the scope's own: an application launched
    /// there is seen only by the observers registered there, and one launched outside any scope
    /// only by the process's.
    static var launchObservers: ObserverList<Application> {
        SharedScope.resolve(launchObserversKey, make: { ObserverList() }, process: { processLaunchObservers })
    }
    /// The process's launch observers (outside any scope).
    private static let processLaunchObservers = ObserverList<Application>()
    /// A scope's launch observers.
    private static let launchObserversKey = SharedScope.Key<ObserverList<Application>>("Application.launchObservers")

    /// Calls `observer` with every application that starts launching in the current
    /// `SharedScope` (outside any scope: every application of the process launched outside one)
    /// — before `willFinishLaunching`, so the observer can attach to its events.
    package static func observeLaunches(_ observer: @escaping @MainActor (Application) -> Void) -> ListenerToken {
        launchObservers.add(observer)
    }

    /// Whether the publication of `didFinishLaunching` (to hooks, listeners and the delegate)
    /// has begun: what observes the app from outside and arrives during or after it (an SDK
    /// manager attached by the delegate's `didFinishLaunching`, or after the launch) acts at once
    /// instead of waiting for an event it will not hear.
    package internal(set) var didFinishLaunchingBegan = false
    /// The connected scenes, in the order they connected.
    public internal(set) var connectedScenes: [Scene] = []
    /// The open sessions (connected or not), in the order they were created.
    public internal(set) var openSessions: [SceneSession] = []
    /// What the application tolerated but a developer should know about, oldest first.
    public internal(set) var diagnostics: [Diagnostic] = []
    /// Failures nothing in the app handled, oldest first (see ``reportUnhandledError(_:subject:message:advice:exitStatus:)``).
    public internal(set) var unhandledErrors: [UnhandledError] = []
    /// Who hears ``unhandledErrors`` as they are reported (the host).
    let unhandledErrorObservers = ObserverList<UnhandledError>()
    /// Whether the app has a device token for remote notifications.
    public internal(set) var isRegisteredForRemoteNotifications = false
    /// The completion of the remote notification or background fetch that a background launch
    /// delivered (UIKit calls those delegate methods right after `didFinishLaunching` for such
    /// launches); `nil` for other launches.
    public internal(set) var launchCompletion: Completion<BackgroundFetchResult>?
    /// How the pipeline's hooks fail: reported through ``reportHookError(_:)``. Made once, in the
    /// initialiser, and a `let` — a policy made per event would allocate a closure and retain the
    /// application each time.
    let hookFailurePolicy: HookFailurePolicy
    /// The hooks of every life-cycle event (mPaaS's framework interface, generalised).
    public let hooks: HookRegistry
    /// The BootLoader that starts the app's parts once, during launch.
    public let bootLoader: BootLoader
    /// The window of an app without scenes (UIKit's `AppDelegate.window`); the BootLoader's
    /// default phases make and show one if the delegate did not.
    public var window: Window?
    /// Receives every failure of a hook (any event, at any time) or of a BootLoader phase.
    /// Failures are also kept in ``hookErrors`` and reported as ``diagnostics``.
    ///
    /// A handler set late — after `host.launch(…)` returned, say, when a BootLoader phase has
    /// already failed — first receives, at once and in order, the failures that happened while
    /// no handler was set: none is lost to the order of two lines.
    public var hookErrorHandler: (@MainActor (HookError) -> Void)? {
        didSet {
            guard let hookErrorHandler else { return }
            let unheard = hookErrors[heardHookErrors...]
            heardHookErrors = hookErrors.count
            for error in unheard { hookErrorHandler(error) }
        }
    }
    /// How many of ``hookErrors`` a handler has received.
    private var heardHookErrors = 0
    /// Every failure of a hook or a BootLoader phase, oldest first.
    public internal(set) var hookErrors: [HookError] = []

    let clock: KernelClock
    /// Installed framework interfaces and their hooks, kept for the application's lifetime.
    var interfaces: [(interface: any FrameworkInterface, hooks: [ListenerToken])] = []
    /// A background launch defers the BootLoader to the first `didBecomeActive`.
    var bootLoaderPending = false
    var remoteNotificationsRequested = false
    var launchGates: [LaunchGate] = []
    var nextLaunchGateID = 1
    var nextSessionNumber = 1

    // Dispatch: one event at a time, later ones queued FIFO; listeners by event name, of every
    // event, and pipeline observers. These live in AppKernelCore's listener table — the one place
    // that trades safety checks for speed (see DESIGN.md); the application holds them by `let`.
    let dispatch = EventQueue<QueuedEvent>()
    /// Typed listeners, by event name.
    let listeners = ListenerTable<LifecycleEvent.Name>()
    /// Listeners of every event (and the asynchronous sequences of ``lifecycleEvents(bufferingPolicy:)``).
    let everyEventListeners = ListenerList()
    /// Pipeline observers.
    let pipelineObservers = ListenerList()
    /// The activity observers (hooks, service starts, launch gates, failed phases).
    package let activities = ActivitySink()
    /// The sequences of ``lifecycleEvents(bufferingPolicy:)``, finished at termination.
    var streams: [(continuation: AsyncStream<LifecycleEvent>.Continuation, token: ListenerToken)] = []

    // Background execution.
    var backgroundTasks: [BackgroundTaskRecord] = []
    var nextTaskNumber = 1
    var backgroundEnteredAt: Duration?
    var expiryTimer: ScheduledTimer?
    var graceTimer: ScheduledTimer?
    /// The completions the app has not answered yet: the event each answers, and how the system
    /// answers it for the app (termination).
    var pendingCompletions: [ObjectIdentifier: (event: String, abandon: @MainActor () -> Void)] = [:]

    /// Creates an application that has not been launched yet.
    ///
    /// - Parameters:
    ///   - delegate: The application's delegate; the application keeps it alive.
    ///   - interface: An mPaaS-style framework interface, installed as hooks (see ``install(_:)``).
    ///   - bootLoader: The BootLoader to run at launch (mPaaS's default phases unless given).
    ///   - clock: Where time comes from. The kernel never reads the wall clock or sleeps on its
    ///     own; in tests pass AppKernelTesting's `TestClock`.
    ///   - configuration: Scene support, the background-time budgets and the hook budget.
    public init(delegate: any ApplicationDelegate, interface: (any FrameworkInterface)? = nil,
                bootLoader: BootLoader = BootLoader(), clock: some Clock<Duration> = ContinuousClock(),
                configuration: ApplicationConfiguration = ApplicationConfiguration()) {
        self.delegate = delegate
        self.clock = KernelClock(clock)
        self.configuration = configuration
        self.bootLoader = bootLoader
        self.hooks = HookRegistry(clock: clock, slowHookBudget: configuration.slowHookBudget)
        hooks.activities = activities
        let reporter = WeakApplication()
        self.hookFailurePolicy = .report { error in reporter.application?.reportHookError(error) }
        reporter.application = self
        hooks.onSlowHook = { [weak self] timing in
            self?.checkBudget(point: timing.point, stage: timing.stage, hook: timing.hook, duration: timing.duration)
        }
        if let interface { install(interface) }
    }

    /// Whether the BootLoader has run all its phases (mPaaS: the app is fully loaded).
    public var isFullyLoaded: Bool { bootLoader.state == .finished }

    /// Time since the application was created, on its clock.
    public var uptime: Duration { clock.elapsed() }

    /// Runs `action` on the main actor once `delay` has passed on the application's injected
    /// clock — for parts built on the kernel (the SDK manager's phase watchdog) that must keep
    /// to the same virtual time in tests. Cancel the returned timer to stop it.
    package func scheduleTimer(after delay: Duration, _ action: @escaping @MainActor @Sendable () -> Void) -> ScheduledTimer {
        clock.schedule(delay, action)
    }

    /// The connected scene with identifier `id`.
    public func scene(withID id: String) -> Scene? { connectedScenes.first { $0.id == id } }

    /// The open session with identifier `id`.
    public func session(withID id: String) -> SceneSession? { openSessions.first { $0.persistentIdentifier == id } }

    /// Asks the push service for a device token. The host answers with
    /// ``SystemEvent/registeredForRemoteNotifications(deviceToken:)`` or
    /// ``SystemEvent/failedToRegisterForRemoteNotifications(_:)``.
    public func registerForRemoteNotifications() { remoteNotificationsRequested = true }

    /// Gives up the device token; the host may not answer a registration until the app asks again.
    public func unregisterForRemoteNotifications() {
        remoteNotificationsRequested = false
        isRegisteredForRemoteNotifications = false
    }

    /// Whether the app asked for a device token and the host has not answered yet, or answered.
    public var hasRequestedRemoteNotifications: Bool { remoteNotificationsRequested }

    /// Records a diagnostic at the current time on the application's clock — for modules built
    /// on the kernel (a refused registration, say) to report what they tolerated.
    package func reportDiagnostic(_ kind: Diagnostic.Kind, subject: String, message: String) {
        report(kind, subject: subject, message)
    }

    func report(_ kind: Diagnostic.Kind, subject: String, _ message: String) {
        diagnostics.append(Diagnostic(kind: kind, subject: subject, message: message, time: clock.elapsed()))
    }

    /// Keeps a hook failure, reports it as a diagnostic and hands it to the launch-error handler.
    func reportHookError(_ error: HookError) {
        hookErrors.append(error)
        report(.hookFailed, subject: "\(error.point)/\(error.hook)", error.description)
        if let hookErrorHandler {
            heardHookErrors = hookErrors.count
            hookErrorHandler(error)
        }
    }

    /// Reports a synchronous hook or phase that ran over the budget: the registry's
    /// ``HookRegistry/slowHookBudget``, which starts as ``ApplicationConfiguration/slowHookBudget``
    /// and can be changed at run time.
    func checkBudget(point: String, stage: HookError.Stage, hook: String, duration: Duration) {
        guard let budget = hooks.slowHookBudget, duration > budget else { return }
        report(.slowHook, subject: "\(point)/\(hook)",
               "the \(stage.rawValue) hook ran for \(duration), over the budget of \(budget); it blocks the main actor. Move slow work into an async task or a BootLoader phase.")
    }
}

/// A weak reference to an application, for what the application itself keeps (its hook failure
/// policy) and must not keep it alive.
@MainActor
final class WeakApplication {
    weak var application: Application?
}
