public import AppKernel
import AppKernelCore
public import AppKernelAuth
public import AppKernelSDK
public import AppKernelTesting

/// An SDK app under exploration: an `ExplorerWorld` whose app has an SDK manager — the app's
/// subclass, `SDKManager.shared` of the schedule's scope — with a ``FakeAccountManager`` that
/// holds logins until a `login(…)` step answers and ``HeldPasscodes`` that hold prompts until a
/// `passcode(…)` step does.
///
/// ```swift
/// let world = try SDKWorld(expression: "try MyApp.makeWorld()", manager: AppSDKManager.self,
///                          users: ["005A", "005B"], passcode: "1111") { _ in AppDelegate() }
/// try world.launch()
/// await world.settle()
/// world.answerPasscode("1111")
/// ```
///
/// It watches what the app shows: every root controller the manager's factory builds (and for
/// whom), and ``screenShows`` — the users whose data your own screens show. The SDK invariants
/// (`noOtherUsersData`, `rootRebuiltOncePerUserChange`, `nothingShownBeforeUnlock`,
/// `readyOnlyAfterLaunch`, `failedLaunchRelaunches`) read them.
@MainActor
open class SDKWorld: ExplorerWorld {
    /// The app's SDK manager (`SDKManager.shared` in the world's scope) — a new one after a
    /// relaunch, as a new process has, with the same accounts and passcode store.
    public private(set) var manager: SDKManager
    /// The app's subclass of `SDKManager`.
    public let managerType: SDKManager.Type
    /// The accounts: the users signed in at the start, logins held for `login(…)` steps.
    public let accounts: FakeAccountManager
    /// The passcode screen: prompts held for `passcode(…)` steps.
    public let passcodes: HeldPasscodes
    /// The user ids the SDK steps use (`login(005B)`, `switchUser(005B)`).
    public let users: [String]
    /// The users whose data the app's own screens show now, besides the root controller — set it
    /// when your app shows records outside the root the SDK builds.
    public var screenShows: (@MainActor () -> [UserAccountIdentity])?
    /// Every root the manager's factory built, oldest first, and for whom.
    public private(set) var rootBuilds: [RootBuild] = []

    /// A root controller the manager's factory built.
    public struct RootBuild {
        /// The root, while it lives (held weakly: a new root may live at a freed one's address).
        public weak var root: (any RootController)?
        /// The user it was built for.
        public let user: UserAccountIdentity?
    }
    /// Every user change the manager delivered, oldest first, with the roots built for it: in the
    /// step it came in (a root built later — the template's rebuild at every foreground — is not
    /// the change's).
    public private(set) var userChanges: [(change: UserChange, rootsBuilt: Int)] = []
    /// Whether the last user change still counts the roots built (its step has not settled).
    private var countingRootBuilds = false
    /// Whether the passcode locked every user out (too many wrong answers, a damaged record) and
    /// nobody logged in since: no user's data may show.
    public private(set) var isLockedOut = false
    private var observation: ListenerToken?
    /// How many launches this world made, and those whose launch gates opened — where a
    /// `ProcessHost` would tell systemd READY.
    private var launches = 0
    private var readyLaunches: Set<Int> = []
    /// What went wrong relaunching after a failed launch, at the world's end (`nil`: nothing).
    public private(set) var relaunchFailure: String?

    /// Creates an SDK world in the current scope: calls `manager.initializeSDK()` (so
    /// `SDKManager.shared` is the world's), gives it the accounts, the passcode screen and a boot
    /// config that logs in at launch, and attaches it to the host.
    /// - Parameters:
    ///   - expression: The Swift expression that makes the world, for printed tests.
    ///   - manager: The app's subclass of `SDKManager`.
    ///   - users: The users signed in at the start, the first current (none: the launch logs in).
    ///   - passcode: A passcode set before the launch (the launch then asks for it).
    ///   - maximumAttempts: Wrong passcodes allowed before every user is logged out.
    ///   - configuration: The configuration the host's applications get.
    ///   - delegate: Makes the app's delegate, once per launch.
    /// - Throws: `SDKManagerError` when the scope's manager is of another class; `PasscodeError`
    ///   for a passcode that cannot be set.
    public init(expression: String = "<#world#>", manager: SDKManager.Type = SDKManager.self, users: [String],
                passcode: String? = nil, maximumAttempts: Int = 10,
                configuration: ApplicationConfiguration = ApplicationConfiguration(),
                delegate: @escaping @MainActor (ExplorerWorld) -> any ApplicationDelegate) throws {
        try manager.initializeSDK()
        self.manager = SDKManager.shared
        self.managerType = manager
        self.accounts = FakeAccountManager()
        self.passcodes = HeldPasscodes()
        self.users = users
        super.init(expression: expression, configuration: configuration, delegate: delegate)
        for (index, user) in users.enumerated() { accounts.add(user, current: index == 0) }
        accounts.holdsLogins = true
        self.manager.passcode.maximumAttempts = maximumAttempts
        // One PBKDF2 round: a test's passcode guards nothing, and every schedule sets it anew.
        self.manager.passcode.iterations = 1
        configure(self.manager)
        if let passcode { try self.manager.passcode.setPasscode(passcode) }
        host.beforeEachLaunch { [weak self] application in self?.manager.attach(to: application) }
    }

    /// Gives `manager` the world's accounts, passcode screen and (when it has none) a boot config
    /// that logs in at launch, and listens to its user changes.
    private func configure(_ manager: SDKManager) {
        manager.accountManager = accounts
        manager.passcodeProvider = passcodes
        if manager.bootConfig == nil {
            manager.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-explorer", oauthRedirectURI: "explorer://callback",
                                            oauthScopes: ["api", "refresh_token"], shouldAuthenticate: true)
        }
        observation = manager.addCurrentUserChangeObserver { [weak self] change in self?.heard(change) }
    }

    /// Launches the app, then watches the root controllers the manager's factory builds (the
    /// factory the delegate set by the end of `didFinishLaunching`).
    open override func launch(inBackground: Bool = false) throws(ApplicationError) {
        if let application, application.state == .terminated {
            // A relaunch is a new process: a new manager, the same accounts and passcode record.
            let fresh = managerType.init()
            fresh.passcode.store = manager.passcode.store
            fresh.passcode.maximumAttempts = manager.passcode.maximumAttempts
            manager.stop()
            configure(fresh)
            fresh.makeShared()
            manager = fresh
        }
        countingRootBuilds = false
        try super.launch(inBackground: inBackground)
        launches += 1
        let number = launches
        if let application {
            Task { [weak self, weak application] in
                await application?.waitForLaunchGates()
                self?.readyLaunches.insert(number)
            }
        }
        let inner = manager.rootControllerFactory
        manager.rootControllerFactory = { [weak self] account in
            let root: any RootController = inner?(account) ?? ExplorerRootController(user: account?.identity)
            self?.built(root, for: account?.identity)
            return root
        }
    }

    // MARK: What the SDK steps call

    /// Answers the waiting login as `user`.
    public func answerLogin(_ user: String) {
        if accounts.answerLogin(.success(user)) { isLockedOut = false }
    }

    /// Refuses the waiting login, as a person tapping Deny does.
    public func denyLogin() {
        accounts.answerLogin(.failure(OAuthError.serverError(code: "access_denied", description: "end-user denied authorization")))
    }

    /// Answers the open passcode prompt (`nil`: the user gives up).
    public func answerPasscode(_ passcode: String?) { passcodes.answer(passcode) }

    /// Makes `user` current, as the account switcher does.
    public func switchUser(_ user: String) throws(CredentialStoreError) {
        try accounts.switchTo(FakeAccountManager.account(user).identity)
    }

    /// Logs the current user out, as the user does.
    public func logoutCurrentUser() async {
        guard let current = accounts.currentIdentity else { return }
        await accounts.logout(current, reason: .userInitiated)
    }

    // MARK: What the invariants read

    /// The users whose data shows now: the root's (when the window shows a root the factory
    /// built) and ``screenShows``'.
    public var shownUsers: [UserAccountIdentity] {
        var shown: [UserAccountIdentity] = []
        if let root = manager.window?.rootController ?? manager.rootController,
           let build = rootBuilds.last(where: { $0.root === root }), let user = build.user {
            shown.append(user)
        }
        shown.append(contentsOf: screenShows?() ?? [])
        return shown
    }

    open override var standardInvariants: [ExplorerInvariant] {
        super.standardInvariants + [.noOtherUsersData, .rootRebuiltOncePerUserChange, .nothingShownBeforeUnlock, .readyOnlyAfterLaunch,
                                    .failedLaunchRelaunches]
    }

    open override func fingerprint() -> [String] {
        super.fingerprint() + [
            "user \(accounts.currentIdentity?.userID ?? "-") of \(accounts.allAccounts.count) logins \(accounts.waitingLogins)",
            "launch \(manager.launchState) passcode \(passcodes.isWaiting) failed \(manager.passcode.failedAttempts) locked \(manager.passcode.isLocked) out \(isLockedOut)",
            "shows \(shownUsers.map(\.userID))",
        ]
    }

    open override var activity: [Int] {
        super.activity + [rootBuilds.count, userChanges.count, passcodes.prompts.count, accounts.loginCount, "\(manager.launchState)".hashValue]
    }

    /// The SDK's launch (or re-authentication, or unlock) runs only while it waits for a login
    /// or a passcode a step must give.
    open override var isQuiescent: Bool {
        !manager.launchState.isRunning || accounts.waitingLogins > 0 || passcodes.isWaiting
    }

    open override func stepDidSettle() { countingRootBuilds = false }

    /// Whether the current application's launch gates opened (a `ProcessHost` reports READY then).
    public var isReady: Bool { readyLaunches.contains(launches) }

    /// Ends the run; when the last launch failed, relaunches the app as a person would (the
    /// app terminated, launched again) and records in ``relaunchFailure`` a relaunch that is
    /// refused or stuck.
    open override func finish() async {
        guard !isFinished else { return }
        await super.finish()
        guard let application, application.state.isRunning, let failed = manager.launchState.failedPhase else { return }
        do {
            try host.terminate()
            try launch()
        } catch {
            relaunchFailure = "after the launch failed in its \(failed) phase, the relaunch was refused: \(error)"
            return
        }
        await settle()
        if !isQuiescent { relaunchFailure = "after the launch failed in its \(failed) phase, the relaunch is stuck at \(manager.launchState)" }
    }

    open override func tearDown() async {
        manager.stop()
        while passcodes.answer(nil) {}
        while accounts.answerLogin(.failure(CancellationError())) {}
        await super.tearDown()
    }

    /// The manager holds the application, whose delegate may hold this world, and the app's
    /// closures may hold the application: the world's end cuts those cycles.
    open override func didEnd() {
        // Stopped first: a login or prompt answered while the launch still runs would be asked
        // again, and wait for ever.
        manager.detach()
        // Nothing may wait for ever once the world ended: later logins fail, later prompts give up.
        passcodes.close()
        accounts.holdsLogins = false
        while accounts.answerLogin(.failure(CancellationError())) {}
        screenShows = nil
    }

    private func built(_ root: any RootController, for user: UserAccountIdentity?) {
        rootBuilds.append(RootBuild(root: root, user: user))
        if countingRootBuilds, !userChanges.isEmpty { userChanges[userChanges.count - 1].rootsBuilt += 1 }
    }

    private func heard(_ change: UserChange) {
        userChanges.append((change, 0))
        countingRootBuilds = true
        if change.reason == .passcodeFailures || change.reason == .passcodeTampered { isLockedOut = true }
    }
}

/// The root controller an ``SDKWorld`` builds when the app sets no factory: it stands for the
/// screen of `user`'s data.
@MainActor
public final class ExplorerRootController: RootController {
    /// The user whose data it shows.
    public let user: UserAccountIdentity?
    /// Creates a root for `user`.
    public init(user: UserAccountIdentity?) { self.user = user }
}
