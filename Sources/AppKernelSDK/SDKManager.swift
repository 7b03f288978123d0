public import AppKernel
public import AppKernelAuth
public import AppKernelCore
public import AppKernelREST
import AppKernelStore
import AppKernelSync
public import Foundation
import Synchronization

/// The SDK manager — the Mobile SDK's `SalesforceManager` / `MobileSyncSDKManager` on Linux.
///
/// It runs the launch in ordered phases — ``LaunchPhase/config`` → ``LaunchPhase/sdkInit`` →
/// ``LaunchPhase/passcode`` → ``LaunchPhase/auth`` → ``LaunchPhase/rootController`` — each
/// through one overridable ``run(_:)`` that dispatches the phase's hooks (the same hook model
/// as the application's events) and its default work. It observes its `Application`: a launch
/// starts when the app finishes launching (or on demand), foreground and background drive the
/// passcode lock, termination stops it.
///
/// ```swift
/// final class AppSDKManager: SDKManager {
///     override func run(_ phase: LaunchPhase) async throws {
///         log("entering \(phase)")
///         try await super.run(phase)
///     }
/// }
/// try AppSDKManager.initializeSDK()                 // SDKManager.shared is an AppSDKManager now
/// let manager = AppSDKManager(application: app, bootConfig: config)   // or, in tests, your own
/// let result = try await manager.launch()           // flags, current user, per-phase timeline
/// ```
///
/// A failed phase (thrown, a hook failed, or over ``phaseDeadline`` on the application's clock)
/// stops the launch with a ``LaunchError`` naming the phase and the hook; the window keeps its
/// placeholder; stores registered during the launch are taken back; ``launch()`` can be called
/// again. A second ``launch()`` while one runs is refused (``LaunchError/Cause/alreadyRunning``).
@MainActor
open class SDKManager {
    // MARK: Parts

    /// The hooks of the launch phases.
    public let hooks: HookRegistry
    /// The application the manager observes.
    public private(set) var application: Application?
    /// The boot config; loaded from ``configDirectory`` in the config phase when `nil`.
    public var bootConfig: BootConfig?
    /// Where `bootconfig.json`, `userstore.json` and `usersyncs.json` live.
    public var configDirectory: URL?
    /// Where the stores live (SmartStore files: a global store, one per user); `nil` keeps the
    /// soups and syncs as specs only, in ``stores``. An app uses a folder under the user's data home
    /// (`$XDG_DATA_HOME/<app>` or `~/.local/share/<app>`), so its data survives a relaunch.
    public var dataDirectory: URL?
    /// The data keys everything under ``dataDirectory`` is sealed with (stores, key-value stores,
    /// the passcode record): required with a data directory — a launch without one fails in its
    /// config phase (``KeyRingRequiredError``). Set it before the launch, like `dataDirectory`:
    /// `manager.keyRing = try KeyRing(dataHome: dataDirectory, provider: .keyFile(application: "MyApp"))`
    /// (or `.systemdCredential(named:)` under systemd). A logout destroys the user's key first.
    public var keyRing: KeyRing?
    /// The user folders the last launch removed as a logout's leftover ciphertext (their key gone).
    public internal(set) var removedLeftovers: [URL] = []
    /// What `userstore.json` and `usersyncs.json` lack or say that the Mobile SDK accepts with a
    /// default (each also the application's `configDefaulted` diagnostic), in the order found.
    public internal(set) var configWarnings: [ConfigWarning] = []
    /// How REST requests reach the org (the default ``restClientForCurrentUser()`` uses it): a
    /// `SocketTransport` unless set, which bounds every answer in memory and time. Made when
    /// first needed.
    public lazy var transport: any HTTPTransport = SocketTransport()
    /// The app's name in the `User-Agent` (``userAgent``): the bundle's name on iOS; the
    /// executable's name unless set.
    public var appName = ProcessInfo.processInfo.processName
    /// The app's version in the `User-Agent`, as iOS writes it: `<version>(<build>)`.
    public var appVersion = "1.0"
    /// The app's type in the `User-Agent`; `nil`: hybrid when the boot config has hybrid
    /// settings, else native.
    public var appType: UserAgent.AppType?
    /// Makes the REST client of a logged-in user (``restClientForCurrentUser()``, and so every
    /// sync): the injection point for an account manager that is not a `UserAccountManager` — a
    /// test's `FakeAccountManager` hands a client against its embedded org here, with nothing to
    /// override. `nil` (the default): only a `UserAccountManager`'s users get a client.
    public var restClientProvider: (@MainActor (UserAccount) -> RestClient?)?
    /// The accounts.
    public var accountManager: (any AccountManaging)? {
        didSet { observeAccounts() }
    }
    /// The app passcode.
    public let passcode: PasscodeManager
    /// Asks the user for the passcode.
    public var passcodeProvider: (any PasscodeProvider)?
    /// Soups and syncs per user.
    public let stores = UserStoreRegistry()
    /// The window the root controller goes in (the scene delegate sets it).
    public var window: Window?
    /// Builds the app's root controller for the current user (`nil` with deferred login).
    public var rootControllerFactory: (@MainActor (UserAccount?) -> any RootController)?
    /// The root controller installed by the last launch.
    public internal(set) var rootController: (any RootController)?
    /// How long one phase may take, on the application's clock. Default 20 s (the iOS launch
    /// watchdog). A manager without an application has no clock to measure on: no deadline.
    public var phaseDeadline: Duration {
        get { launchEngine.defaultDeadline ?? .seconds(20) }
        set { launchEngine.defaultDeadline = newValue }
    }
    /// The engine that runs the launch phases (named `sdk` in traces and timelines).
    public let launchEngine = PhaseEngine<LaunchPhase>(
        name: "sdk", steps: LaunchPhase.allCases.map { phase in .init(phase, body: .async { try await $0.performDefault(phase) }) })
    /// How users log in: by default the org's login page in the system browser, with the redirect
    /// caught on 127.0.0.1 (`LoginMethod.loopback(port:opener:timeout:clock:)`); `.deviceFlow` on a
    /// machine without a browser; `.autoApprove()` against a test org that approves at once.
    public var loginMethod: LoginMethod = .loopback()
    /// Receives every launch failure — the Mobile SDK's `launchErrorAction`.
    ///
    /// A handler set late — after a launch that started on its own (or a re-authentication or
    /// an unlock) has already failed, with no handler and nobody awaiting it — first receives,
    /// at once and in order, those failures.
    ///
    /// Without a handler, such a failure (nobody awaits it) is also reported to the application
    /// as unhandled (`Application.reportUnhandledError(_:subject:message:advice:exitStatus:)`):
    /// `ProcessHost` logs it and ends the process (exit status 70), `SimulatedHost` records it.
    /// A launch refused because another instance holds the single-instance lock
    /// (``requiresSingleInstance``) is reported so even with a handler (exit status 75): no launch
    /// of this process can succeed while the other runs.
    public var launchErrorHandler: (@MainActor (LaunchError) -> Void)? {
        didSet {
            guard let launchErrorHandler, !unheardLaunchErrors.isEmpty else { return }
            let unheard = unheardLaunchErrors
            unheardLaunchErrors = []
            for error in unheard { launchErrorHandler(error) }
        }
    }
    /// Failures of launches nobody awaited that happened while no ``launchErrorHandler`` was set.
    var unheardLaunchErrors: [LaunchError] = []
    /// Single-instance mode: the launch first takes an exclusive lock on `instance.lock` in
    /// ``dataDirectory`` (Core's `FileLock.acquire(at:)`) and holds it for the manager's life, so
    /// a second instance of the app on the same data home is refused — its launch fails with
    /// ``SingleInstanceError`` ("already running as pid N with data home …"), which reaches its
    /// host as an unhandled error (`ProcessHost` exits 75). Default `false`; with no data
    /// directory the launch fails (there is nothing to lock). The kernel drops the lock when the
    /// process ends, however it ends.
    public var requiresSingleInstance = false
    /// The single-instance lock, once taken.
    var instanceLock: FileLock?
    /// A store manager of this manager's own (see ``storeManager``).
    var ownStoreManager: StoreManager?
    /// Where the launch is.
    public var launchState: LaunchState { launchEngine.state }
    /// The last successful launch's result.
    public private(set) var lastResult: LaunchResult?
    /// The last failed launch's error.
    public private(set) var lastError: LaunchError?
    /// How the last launch ended (`nil` before one ended): what ``launchFinished()`` answers,
    /// and — a failure — what keeps the root from being built until a launch succeeds.
    var lastOutcome: Result<LaunchResult, LaunchError>?
    /// Whether ``launch()`` runs and has not recorded its outcome yet.
    var launchAwaitingOutcome = false
    /// The automatic launch started when the application finished launching, if any.
    public internal(set) var automaticLaunch: Task<Void, Never>?
    /// The auth and root-controller phases running again after the last user logged out, if any.
    public internal(set) var reauthentication: Task<Void, Never>?
    /// The passcode check started when the app came back to the foreground after
    /// ``PasscodeManager/lockTimeout``, if any.
    public internal(set) var unlock: Task<Void, Never>?

    var flags: LaunchFlags = []
    var services: [(name: String, start: @MainActor () async throws -> Void)] = []
    var applicationTokens: [ListenerToken] = []
    var accountObservation: ListenerToken?
    let userChangeObservers = ObserverList<UserChange>()
    /// The blocks of `registerBlock(forCurrentUserChangeNotifications:)`, kept for the manager's lifetime.
    var permanentObservations: [ListenerToken] = []
    var loggingOutCurrentUser: UserAccountIdentity?
    /// While a user change, or the completion of a `loginIfRequired` that saw the root built, is
    /// delivered: `true` while a rebuild of the root is due — the first ``setupRootController()``
    /// then, by a block or by the manager, does it; `false` once done, or when none is due
    /// (nobody is current, or the root was just built for this user).
    var rootRebuildPending: Bool?
    /// The sync manager of the owner it was made for: one per store, since opening one marks the
    /// syncs a dead process left running as stopped (a second one would stop a live sync).
    var ownedSyncManager: (owner: StoreOwner, manager: SyncManager)?
    /// The calls waiting for the running launch (or re-authentication) to end.
    var launchWaiters: [CheckedContinuation<Void, Never>] = []
    var loginTask: Task<UserAccount, any Error>?
    var backgroundedAt: Duration?
    private let fallbackClockStart = ContinuousClock.now

    /// Creates a manager. Tests build managers directly, each with its own application,
    /// configuration and account manager; apps use ``shared``.
    /// - Parameters:
    ///   - application: The application to observe (``attach(to:)`` later otherwise).
    ///   - bootConfig: The boot config (loaded from `configDirectory` when `nil`).
    ///   - accountManager: The accounts.
    ///   - passcode: The passcode lock.
    ///   - configDirectory: Where the config files live.
    public required init(application: Application? = nil, bootConfig: BootConfig? = nil,
                         accountManager: (any AccountManaging)? = nil, passcode: PasscodeManager = PasscodeManager(),
                         configDirectory: URL? = nil) {
        self.hooks = HookRegistry(clock: ContinuousClock())
        self.bootConfig = bootConfig
        self.accountManager = accountManager
        self.passcode = passcode
        self.configDirectory = configDirectory
        launchEngine.stepRunner = { [weak self] phase in try await self?.run(phase) }
        observeAccounts()
        if let application { attach(to: application) }
    }

    // MARK: The application

    /// Starts observing `application`: a launch starts when it finishes launching, backgrounding
    /// and returning drive the passcode lock, termination stops the manager.
    ///
    /// Attach before the launch — in the app delegate's `init` (the template's pattern, through
    /// ``initializeSDK()``), right after making a `ProcessHost`, or with
    /// `SimulatedHost.attach(_:)`. Attached once `didFinishLaunching` has been delivered, the
    /// manager cannot hear it: its launch does not start by itself (call ``launch()``), and the
    /// application records an `Diagnostic.Kind.attachedLate` diagnostic saying so.
    public func attach(to application: Application) {
        self.application = application
        applicationTokens = [
            application.addListener(for: .didFinishLaunching) { [weak self] _ in self?.startAutomaticLaunch() },
            application.addListener(for: .didEnterBackground) { [weak self] app in self?.backgroundedAt = app.uptime },
            application.addListener(for: .willEnterForeground) { [weak self] app in self?.returnedToForeground(at: app.uptime) },
            application.addListener(for: .didBecomeActive) { [weak self] _ in self?.becameActive() },
            application.addListener(for: .willTerminate) { [weak self] _ in self?.stop() },
            application.addListener(for: .didReceiveReloadRequest) { [weak self] app in self?.reloadConfig(in: app) },
            // A host reports the app ready only once the SDK's launch has run.
            application.addLaunchGate(named: "sdk") { [weak self] in await self?.automaticLaunch?.value },
        ]
        if application.didFinishLaunchingBegan {
            application.reportDiagnostic(.attachedLate, subject: "sdk",
                                         message: "the SDK manager was attached after the application finished launching, so its launch will not start by itself: call launch(), or attach it before the launch (in the app delegate's init, right after making the host, or with SimulatedHost.attach(_:))")
        }
    }

    /// Reloads the boot config from ``configDirectory`` (a host's SIGHUP); a config that no longer
    /// loads is reported as a diagnostic and the previous one kept.
    private func reloadConfig(in application: Application) {
        guard configDirectory != nil else { return }
        let previous = bootConfig
        bootConfig = nil
        do { try loadConfig() } catch {
            bootConfig = previous
            application.reportDiagnostic(.reloadFailed, subject: "sdk.bootConfig", message: "the boot config could not be reloaded: \(error)")
        }
    }

    /// Stops the manager (the application terminates): running launches and checks are cancelled.
    public func stop() {
        automaticLaunch?.cancel()
        reauthentication?.cancel()
        unlock?.cancel()
        loginTask?.cancel()
        applicationTokens.removeAll()
    }

    /// Stops the manager and lets go of its application, window and root: the end of a test's
    /// world, whose app delegate may hold the world that holds this manager (a cycle cut here).
    package func detach() {
        stop()
        application = nil
        window = nil
        rootController = nil
    }

    /// Adds a part of the SDK to start in the ``LaunchPhase/sdkInit`` phase, in registration order.
    public func registerService(named name: String, start: @escaping @MainActor () async throws -> Void) {
        services.append((name, start))
    }

    /// Time on the application's clock (a monotonic clock without an application).
    var now: Duration { application?.uptime ?? (ContinuousClock.now - fallbackClockStart) }

    // MARK: Launch

    /// Runs the launch phases in order.
    /// - Returns: The flags, the current user and each phase's timing.
    /// - Throws: ``LaunchError`` naming the failed phase (and hook); a launch already running.
    @discardableResult
    public func launch() async throws(LaunchError) -> LaunchResult {
        guard !launchState.isRunning else { throw LaunchError(phase: nil, cause: .alreadyRunning) }
        flags = []
        let storesBefore = stores.snapshot
        showPlaceholder()
        launchAwaitingOutcome = true
        defer { launchAwaitingOutcome = false }
        do throws(LaunchError) {
            try takeInstanceLockIfRequired()
            try requireKeyRing()
            try await runPhases(only: nil)
        } catch {
            stores.restore(storesBefore)
            lastError = error
            lastOutcome = .failure(error)
            launchErrorHandler?(error)   // the caller hears it too: `launch()` throws
            throw error
        }
        let result = LaunchResult(flags: flags, currentUser: accountManager?.currentAccount, timeline: launchEngine.timeline,
                                  removedLeftovers: removedLeftovers)
        lastResult = result
        lastOutcome = .success(result)
        return result
    }

    /// Runs the launch engine (all phases, or some), each phase within ``phaseDeadline`` on the
    /// application's clock; cancelling the calling task cancels the running phase.
    func runPhases(only phases: Set<LaunchPhase>?) async throws(LaunchError) {
        defer {
            let waiters = launchWaiters
            launchWaiters = []
            for waiter in waiters { waiter.resume() }
        }
        do {
            try await launchEngine.run(self, hooks: hooks, application: application, only: phases, now: { [weak self] in self?.now ?? .zero })
        } catch {
            throw LaunchError(error)
        }
    }

    /// Runs one phase: its `before` hooks, its `handle` hooks (a stop skips the default work and
    /// the `after` hooks; the launch goes on), its default work (``performDefault(_:)``), its
    /// `after` hooks. A failing hook fails the phase. Override to observe or wrap every phase;
    /// call `super`.
    open func run(_ phase: LaunchPhase) async throws {
        try await launchEngine.perform(phase, self, hooks: hooks)
    }

    /// A phase's default work; each phase calls its own `open` method.
    open func performDefault(_ phase: LaunchPhase) async throws {
        switch phase {
        case .config:
            try loadConfig()
            warnAboutIgnoredSettings()
        case .sdkInit:
            removeShreddedLeftovers()
            try await initializeSDKParts()
        case .passcode: try await verifyPasscode()
        case .auth: try await authenticate()
        case .rootController: try setupRootController()
        }
    }

    /// ``LaunchPhase/config``: loads the boot config from ``configDirectory`` if none was given,
    /// and validates it.
    open func loadConfig() throws {
        if let bootConfig {
            try bootConfig.validate()
            return
        }
        guard let configDirectory else {
            throw ConfigError(code: .unreadableFile, file: BootConfig.fileNames[0], keyPath: "",
                              reason: "no boot config was given and SDKManager.configDirectory is not set")
        }
        bootConfig = try BootConfig.load(fromDirectory: configDirectory)
    }

    /// ``LaunchPhase/sdkInit``: starts the registered services in order.
    open func initializeSDKParts() async throws {
        for service in services {
            do { try await service.start() } catch {
                throw ServiceStartError(service: service.name, underlyingError: error)
            }
        }
    }

    /// ``LaunchPhase/passcode``: when a passcode is set, asks for it until it is right; after
    /// ``PasscodeManager/maximumAttempts`` wrong answers (counted across launches), or when the
    /// stored passcode cannot be trusted, every user is logged out and their data wiped, and the
    /// launch goes on (to log in again).
    open func verifyPasscode() async throws {
        guard passcode.isSet || passcode.isRequiredByPolicy else { return }
        if try await askForPasscode() { flags.insert(.passcodeVerified) }
    }

    /// ``LaunchPhase/auth``: with a current user, `alreadyAuthenticated`; else, if the boot config
    /// says to authenticate, logs in (`authenticated`); else `authBypassed` (deferred login).
    open func authenticate() async throws {
        if accountManager?.currentAccount != nil {
            flags.insert(.alreadyAuthenticated)
            return
        }
        guard let bootConfig, bootConfig.shouldAuthenticate else {
            flags.insert(.authBypassed)
            return
        }
        _ = try await logIn(with: bootConfig)
        flags.insert(.authenticated)
    }

    /// ``LaunchPhase/rootController``: sets up the user's stores and syncs from the default
    /// config files, then installs the app's root controller in the window, replacing the
    /// placeholder. After a change of the current user it runs once, whether a user-change block
    /// calls it (as the template's `resetViewState { setupRootViewController() }` does) or the
    /// manager does when no block did; in the completion of a ``loginIfRequired(completion:)``
    /// that waited for the launch or logged in (both built the root), it does nothing. An override
    /// must call `super` for this to hold.
    /// After a failed launch it builds nothing and throws that launch's ``LaunchError`` (the
    /// template's `loginIfRequired { _ in setupRootViewController() }` calls it whatever the
    /// outcome), until a launch succeeds.
    open func setupRootController() throws {
        if !launchState.isRunning, let error = failedLaunch { throw error }
        // Once per user change, whoever asks (the template's user-change block asks too).
        if let pending = rootRebuildPending {
            guard pending else { return }
            rootRebuildPending = false
        }
        try setupUserStoreFromDefaultConfig()
        try setupUserSyncsFromDefaultConfig()
        if let factory = rootControllerFactory {
            let controller = factory(accountManager?.currentAccount)
            rootController = controller
            window?.rootController = controller
        }
    }

    /// A REST client for the current user — what ``syncManager()`` and the app's requests use:
    /// ``restClientProvider``'s when one is set, else one refreshing its token through the
    /// account manager (a `UserAccountManager`) over ``transport``; `nil` when nobody is logged in
    /// (or the account manager is another kind and no provider is set). Override to build it
    /// another way.
    open func restClientForCurrentUser() -> RestClient? {
        if let restClientProvider {
            guard let account = accountManager?.currentAccount else { return nil }
            return restClientProvider(account)
        }
        guard let accounts = accountManager as? UserAccountManager else { return nil }
        accounts.userAgent = userAgent
        return RestClient.forCurrentUser(of: accounts, transport: transport)
    }

    /// Whose stores the current ones are.
    public var currentStoreOwner: StoreOwner { accountManager?.currentAccount.map { .user($0.identity) } ?? .global }

    func defaultConfigFile(_ name: String) throws(ConfigError) -> Data? {
        guard let url = configDirectory?.appendingPathComponent(name), FileManager.default.fileExists(atPath: url.path) else { return nil }
        do { return try Data(contentsOf: url) } catch {
            throw ConfigError(code: .unreadableFile, file: name, keyPath: "", reason: "cannot be read: \(error.localizedDescription)")
        }
    }

    private func showPlaceholder() {
        guard let window, !(window.rootController is PlaceholderController) else { return }
        window.rootController = PlaceholderController(message: "Launching…")
    }
}

