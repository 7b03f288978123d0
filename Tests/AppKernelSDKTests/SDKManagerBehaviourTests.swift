import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

@MainActor
struct LaunchLifecycleTests {
    let clock = TestClock()

    @Test func aSecondLaunchWhileOneRunsIsRefused() async throws {
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: deferredConfig)
        manager.registerService(named: "slow") { try await self.clock.sleep(for: .seconds(1)) }
        let first = Task { try await manager.launch() }
        while clock.pendingCount < 2 { await Task.yield() }
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        if case .alreadyRunning? = error?.cause {} else { Issue.record("\(String(describing: error))") }
        #expect(error?.phase == nil)
        await clock.advance(by: .seconds(1))
        let result = try await first.value
        #expect(result.flags == [.authBypassed])
        #expect(result.timeline.map(\.phase) == LaunchPhase.allCases)
        #expect(result.timeline[1].duration == .seconds(1), "the sdkInit phase took a second on the app's clock")
    }

    @Test func aManagerAttachedBeforeLaunchStartsWhenTheAppFinishesLaunching() async throws {
        let host = SimulatedHost(clock: clock)
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let manager = SDKManager(application: app, bootConfig: deferredConfig)
        #expect(manager.launchState == .idle)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        #expect(manager.lastResult?.flags == [.authBypassed])
        _ = host
    }

    @Test func aManagerAttachedToTheHostBeforeLaunchStartsByItself() async throws {
        let host = SimulatedHost(clock: clock)
        let manager = SDKManager(bootConfig: deferredConfig)
        host.attach(manager)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        #expect(manager.lastResult?.flags == [.authBypassed])
        #expect(app.diagnostics.isEmpty)
        // A relaunch (a new application) gets the same manager attached.
        try host.terminate()
        let relaunched = try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        #expect(manager.application === relaunched)
        #expect(manager.launchState == .finished)
    }

    @Test func aManagerAttachedAfterTheLaunchSaysItWillNotStartByItself() async throws {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(bootConfig: deferredConfig)
        manager.attach(to: app)
        #expect(manager.automaticLaunch == nil)
        #expect(manager.launchState == .idle)
        let late = app.diagnostics.filter { $0.kind == .attachedLate }
        #expect(late.map(\.subject) == ["sdk"])
        #expect(late.first?.message.contains("call launch()") == true)
        // …and launching it by hand works.
        #expect(try await manager.launch().flags == [.authBypassed])
    }

    @Test func aLaunchErrorHandlerSetAfterTheLaunchHearsTheAutomaticLaunchThatFailed() async throws {
        let host = SimulatedHost(clock: clock)
        let manager = SDKManager()   // no boot config and no config directory: the config phase fails
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        var heard: [LaunchPhase?] = []
        manager.launchErrorHandler = { error in heard.append(error.phase) }
        #expect(heard == [.config], "the failure nobody heard is delivered to the first handler set")
        manager.launchErrorHandler = { error in heard.append(error.phase) }
        #expect(heard == [.config], "once")
    }

    @Test func terminationStopsTheManager() async throws {
        let host = SimulatedHost(clock: clock)
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let manager = SDKManager(application: app, bootConfig: deferredConfig)
        manager.registerService(named: "never") { try await self.clock.sleep(for: .seconds(3_600)) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        while clock.pendingCount < 2 { await Task.yield() }
        try app.handle(.terminate)
        await manager.automaticLaunch?.value
        #expect(manager.launchState.failedPhase == .sdkInit, "the launch was cancelled in the phase it was in")
        _ = host
    }
}

@MainActor
struct DeferredLoginTests {
    let accounts = FakeAccountManager()

    func launched() async throws -> SDKManager {
        let app = try SimulatedHost().launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: deferredConfig, accountManager: accounts)
        manager.rootControllerFactory = { AccountsController(user: $0?.identity.userID) }
        let window = Window()
        manager.window = window
        let result = try await manager.launch()
        #expect(result.flags == [.authBypassed])
        #expect(result.currentUser == nil)
        #expect((window.rootController as? AccountsController)?.user == nil, "the root is installed without a user")
        return manager
    }

    @Test func loginIfRequiredLogsInThenRebuildsTheRootAndCompletesOnce() async throws {
        let manager = try await launched()
        accounts.loginQueue = [.success("005A")]
        var completions: [String] = []
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            manager.loginIfRequired { result in
                completions.append((try? result.get().identity.userID) ?? "failure")
                done.resume()
            }
        }
        #expect(completions == ["005A"])
        #expect((manager.window?.rootController as? AccountsController)?.user == "005A")
        let again = try await manager.loginIfRequired()
        #expect(again.identity.userID == "005A")
        #expect(accounts.loginCount == 1, "already logged in: no second login")
        #expect(completions.count == 1)
    }

    @Test func loginIfRequiredCompletesOnceOnFailureToo() async throws {
        let manager = try await launched()
        accounts.loginQueue = [.failure(OAuthError.serverError(code: "access_denied", description: "no"))]
        var completions: [String] = []
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            manager.loginIfRequired { result in
                if case .failure(let error) = result { completions.append("\(error)") }
                done.resume()
            }
        }
        #expect(completions == ["the server refused: access_denied (no)"])
        accounts.loginQueue = [.success("005B")]
        #expect(try await manager.loginIfRequired().identity.userID == "005B", "a later call can succeed")
    }

    @Test func concurrentCallsShareOneLogin() async throws {
        let manager = try await launched()
        accounts.loginQueue = [.success("005A")]
        async let first = manager.loginIfRequired()
        async let second = manager.loginIfRequired()
        let users = try await [first, second].map(\.identity.userID)
        #expect(users == ["005A", "005A"])
        #expect(accounts.loginCount == 1)
    }
}

@MainActor
struct UserChangeTests {
    let accounts = FakeAccountManager()
    let folders = ConfigFolders()

    func launched(users: [String]) async throws -> SDKManager {
        for user in users { accounts.add(user, current: user == users.first) }
        let directory = try folders.make(["userstore.json": userstoreJSON])
        let app = try SimulatedHost().launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: authConfig, accountManager: accounts, configDirectory: directory)
        manager.rootControllerFactory = { AccountsController(user: $0?.identity.userID) }
        manager.window = Window()
        try await manager.launch()
        return manager
    }

    @Test func aSwitchNotifiesOnceAndTheTemplatesPatternRebuildsTheRoot() async throws {
        let manager = try await launched(users: ["005A", "005B"])
        var changes: [UserChange] = []
        var blockCalls = 0
        manager.registerBlock(forCurrentUserChangeNotifications: { blockCalls += 1 })
        let observation = manager.addCurrentUserChangeObserver { changes.append($0) }
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        #expect(changes == [UserChange(kind: .switched, from: FakeAccountManager.account("005A").identity, to: FakeAccountManager.account("005B").identity)])
        #expect(blockCalls == 1)
        #expect((manager.window?.rootController as? AccountsController)?.user == "005B")
        #expect(manager.stores.soups(for: .user(FakeAccountManager.account("005B").identity)).map(\.name) == ["Account"])
        withExtendedLifetime(observation) {}
    }

    @Test func logoutWithOthersLeftSwitchesToTheFirstAndWipesTheLeaversStores() async throws {
        let manager = try await launched(users: ["005A", "005B", "005C"])
        let ada = FakeAccountManager.account("005A").identity
        #expect(!manager.stores.soups(for: .user(ada)).isEmpty)
        var changes: [UserChange] = []
        let observation = manager.addCurrentUserChangeObserver { changes.append($0) }
        await accounts.logout(ada, reason: .userInitiated)
        #expect(changes == [UserChange(kind: .loggedOut, from: ada, to: FakeAccountManager.account("005B").identity, reason: .userInitiated)],
                "once per change")
        #expect(manager.stores.soups(for: .user(ada)).isEmpty, "the user's stores were wiped")
        #expect((manager.window?.rootController as? AccountsController)?.user == "005B")
        withExtendedLifetime(observation) {}
    }

    @Test func logoutOfTheLastUserReturnsToLogin() async throws {
        let manager = try await launched(users: ["005A"])
        accounts.loginQueue = [.success("005Z")]
        var changes: [UserChange.Kind] = []
        let observation = manager.addCurrentUserChangeObserver { changes.append($0.kind) }
        await accounts.logout(FakeAccountManager.account("005A").identity, reason: .userInitiated)
        #expect(manager.window?.rootController is PlaceholderController)
        await manager.reauthentication?.value
        #expect(changes == [.loggedOut])
        #expect(accounts.currentAccount?.identity.userID == "005Z", "the auth phase ran again and logged in")
        #expect((manager.window?.rootController as? AccountsController)?.user == "005Z")
        withExtendedLifetime(observation) {}
    }

    /// The template's scene delegate registers `resetViewState { setupRootViewController() }` for
    /// user changes; ported, the block calls `setupRootController()`. Either way the root (and the
    /// user's stores and syncs) is built once per change — the Mobile SDK runs its block twice
    /// when a logout leaves exactly one user.
    @Test(arguments: [true, false])
    func theRootIsRebuiltOncePerUserChangeWhetherTheBlockRebuildsItOrNot(blockRebuilds: Bool) async throws {
        let manager = try await launched(users: ["005A", "005B", "005C"])
        var builds: [String?] = []
        manager.rootControllerFactory = { account in
            builds.append(account?.identity.userID)
            return AccountsController(user: account?.identity.userID)
        }
        var blockCalls = 0
        // Unowned: the manager keeps its blocks (a strong capture is a cycle).
        manager.registerBlock(forCurrentUserChangeNotifications: { [unowned manager] in
            blockCalls += 1
            if blockRebuilds { try? manager.setupRootController() }
        })
        // A second block doing the same still builds once.
        manager.registerBlock(forCurrentUserChangeNotifications: { [unowned manager] in if blockRebuilds { try? manager.setupRootController() } })
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        #expect(builds == ["005B"])
        #expect(blockCalls == 1)
        // A logout leaving two users, then one leaving exactly one: once each.
        await accounts.logout(FakeAccountManager.account("005B").identity, reason: .userInitiated)
        #expect(builds == ["005B", "005A"])
        await accounts.logout(FakeAccountManager.account("005A").identity, reason: .userInitiated)
        #expect(builds == ["005B", "005A", "005C"])
        #expect(blockCalls == 3)
        // Outside a user change, a call rebuilds as asked.
        try manager.setupRootController()
        #expect(builds == ["005B", "005A", "005C", "005C"])
    }

    @Test func theUserChangeBlockRunsOnSwitchAndLogoutButNotOnLoginOrRefresh() async throws {
        // AuthHelper's current-user-change block listens to DidLogout and DidSwitch only.
        let manager = try await launched(users: ["005A"])
        var kinds: [UserChange.Kind] = []
        let observation = manager.addCurrentUserChangeObserver { kinds.append($0.kind) }
        accounts.loginQueue = [.success("005B")]
        _ = try await accounts.logIn(config: authConfig.oauthConfig, using: .autoApprove(), loginHint: nil, makeCurrent: false)
        #expect(kinds.isEmpty, "a user added without becoming current changes nobody")
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        await accounts.logout(FakeAccountManager.account("005B").identity, reason: .userInitiated)
        #expect(kinds == [.switched, .loggedOut])
        withExtendedLifetime(observation) {}
    }

    @Test func aDroppedObservationHearsNothingAndLeaksNothing() async throws {
        let manager = try await launched(users: ["005A", "005B"])
        var calls = 0
        weak var dropped: ListenerToken?
        do {
            let observation = manager.addCurrentUserChangeObserver { _ in calls += 1 }
            dropped = observation
        }
        #expect(dropped == nil)
        let cancelled = manager.addCurrentUserChangeObserver { _ in calls += 1 }
        cancelled.cancel()
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        #expect(calls == 0)
    }
}

@MainActor
struct PasscodeLockTests {
    let clock = TestClock()
    let accounts = FakeAccountManager()
    let folders = ConfigFolders()

    @Test func passcodesAreStoredAsSaltedHashesAndCanBeChangedAndRemoved() throws {
        let store = InMemoryPasscodeStore()
        let passcode = PasscodeManager(store: store, iterations: 500)
        #expect(throws: PasscodeError.tooShort(minimum: 4)) { try passcode.setPasscode("12") }
        try passcode.setPasscode("2468")
        let record = try #require(store.load())
        #expect(record.salt.count == 16)
        #expect(record.hash == PBKDF2.deriveKey(password: Array("2468".utf8), salt: record.salt, iterations: 500, length: 32))
        #expect(!String(describing: record).contains("2468"))
        try passcode.setPasscode("2468")
        #expect(store.load()?.salt != record.salt, "every set has a fresh salt")
        #expect(throws: PasscodeError.wrongPasscode) { try passcode.changePasscode(from: "0000", to: "1357") }
        try passcode.changePasscode(from: "2468", to: "1357")
        #expect(passcode.verify("1357"))
        #expect(!passcode.verify("2468"))
        #expect(passcode.failedAttempts == 1)
        #expect(throws: PasscodeError.wrongPasscode) { try passcode.removePasscode(current: "2468") }
        try passcode.removePasscode(current: "1357")
        #expect(!passcode.isSet)
        #expect(throws: PasscodeError.notSet) { try passcode.removePasscode(current: "1357") }
        #expect(passcode.verify("anything"), "no passcode: nothing to check")
    }

    func launched() async throws -> (SimulatedHost, SDKManager, ScriptedPasscodes) {
        accounts.add("005A")
        accounts.add("005B", current: false)
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let directory = try folders.make(["userstore.json": userstoreJSON])
        let manager = SDKManager(application: app, bootConfig: authConfig, accountManager: accounts,
                                 passcode: PasscodeManager(iterations: 500, maximumAttempts: 3, lockTimeout: .seconds(60)),
                                 configDirectory: directory)
        try manager.passcode.setPasscode("2468")
        let provider = ScriptedPasscodes(["2468"])
        manager.passcodeProvider = provider
        #expect(try await manager.launch().flags == [.passcodeVerified, .alreadyAuthenticated])
        return (host, manager, provider)
    }

    @Test func theAppLocksAfterMoreThanTheTimeoutInTheBackground() async throws {
        let (host, manager, provider) = try await launched()
        try host.moveToBackground()
        await clock.advance(by: .seconds(60))
        try host.moveToForeground()
        #expect(!manager.passcode.isLocked, "exactly the timeout: no lock")
        try host.moveToBackground()
        await clock.advance(by: .seconds(61))
        provider.answers = ["1111", "2468"]
        try host.moveToForeground()
        #expect(manager.passcode.isLocked)
        await manager.unlock?.value
        #expect(!manager.passcode.isLocked)
        #expect(provider.prompts.suffix(2).map(\.remaining) == [3, 2])
        #expect(accounts.currentAccount?.identity.userID == "005A")
    }

    @Test func tooManyWrongPasscodesLogEveryUserOutAndWipeAllTheirData() async throws {
        let (host, manager, provider) = try await launched()
        let ada = FakeAccountManager.account("005A").identity
        let bob = FakeAccountManager.account("005B").identity
        try manager.stores.register(soups: [SoupSpec(name: "Private", indexes: [IndexSpec(path: "Id", type: .string)])], for: .user(bob))
        #expect(!manager.stores.soups(for: .user(ada)).isEmpty)
        var changes: [UserChange] = []
        var switches: [AccountEvent] = []
        let observation = manager.addCurrentUserChangeObserver { changes.append($0) }
        let events = accounts.observe { if case .didSwitch = $0 { switches.append($0) } }
        accounts.loginQueue = [.success("005N")]
        try host.moveToBackground()
        await clock.advance(by: .seconds(120))
        provider.answers = ["0000", "1111", "2222"]
        try host.moveToForeground()
        await manager.unlock?.value
        #expect(switches.isEmpty, "no other user became current on the way")
        #expect(changes == [UserChange(kind: .loggedOut, from: ada, to: nil, reason: .passcodeFailures)], "one change, with the reason")
        #expect(manager.stores.soups(for: .user(ada)).isEmpty && manager.stores.soups(for: .user(bob)).isEmpty, "everyone's data wiped")
        #expect(!manager.passcode.isSet, "the passcode is forgotten")
        #expect(manager.window?.rootController is PlaceholderController || manager.window == nil)
        await manager.reauthentication?.value
        #expect(accounts.allAccounts.map(\.identity.userID) == ["005N"], "back to login: only the user who logged in again")
        #expect(manager.stores.soups(for: .user(bob)).isEmpty, "Bob's data is not reachable")
        withExtendedLifetime((observation, events)) {}
    }

    @Test func tooManyWrongPasscodesAtLaunchLogOutAndTheLaunchGoesOnToLogin() async throws {
        accounts.add("005A")
        accounts.loginQueue = [.success("005N")]
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: authConfig, accountManager: accounts,
                                 passcode: PasscodeManager(iterations: 500, maximumAttempts: 2))
        try manager.passcode.setPasscode("2468")
        manager.passcodeProvider = ScriptedPasscodes(["0000", "1111"])
        let result = try await manager.launch()
        #expect(!result.flags.contains(.passcodeVerified))
        #expect(result.flags.contains(.authenticated), "the auth phase logged a user in again")
        #expect(accounts.currentAccount?.identity.userID == "005N")
        await manager.reauthentication?.value
    }
}

/// `SDKManager.shared` and `initializeSDK()`: each test in a `SharedScope` of its own (issue 31),
/// so they run in parallel with every other test, with no reset.
@MainActor
struct SharedManagerTests {
    class SmartStoreSDKManager: SDKManager {}
    final class MobileSyncSDKManager: SmartStoreSDKManager {}
    final class OtherManager: SDKManager {}

    @Test func initializeSDKMakesSharedAnInstanceOfTheCallingSubclass() throws { try inOwnScope {
        try MobileSyncSDKManager.initializeSDK()
        try MobileSyncSDKManager.initializeSDK()
        let shared = SDKManager.shared
        #expect(shared is MobileSyncSDKManager)
        #expect(SDKManager.shared === shared, "made once, kept")
        try MobileSyncSDKManager.initializeSDK()
        let error = #expect(throws: SDKManagerError.self) { try SmartStoreSDKManager.initializeSDK() }
        #expect(error?.description.hasPrefix("SDKManager.shared is already an instance of MobileSyncSDKManager; SmartStoreSDKManager.initializeSDK() came too late.") == true)
        #expect(throws: SDKManagerError.self) { try OtherManager.initializeSDK() }
    } }

    @Test func initializeSDKMakesTheInstanceAtOnceAndWithoutItSharedIsAnSDKManager() throws {
        inOwnScope { #expect(type(of: SDKManager.shared) == SDKManager.self) }
        try inOwnScope {
            try SmartStoreSDKManager.initializeSDK()
            #expect(throws: SDKManagerError.self, "the instance exists from the first call on") { try OtherManager.initializeSDK() }
            #expect(type(of: SDKManager.shared) == SmartStoreSDKManager.self)
        }
    }

    /// The forceios template's shape: the app delegate's `init` calls `initializeSDK()`, and
    /// nothing else wires the manager to the application.
    @MainActor final class TemplateAppDelegate: ApplicationDelegate {
        init() { try? MobileSyncSDKManager.initializeSDK() }
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            SDKManager.shared.bootConfig = deferredConfig
            return true
        }
    }

    @Test func theTemplatesAppDelegatePatternLaunchesTheSDKWithNoWiring() async throws { try await inOwnScope {
        let host = SimulatedHost()
        // initializeSDK() and the launch run without a suspension between them: no other test's
        // application can start launching in between and be adopted instead.
        let app = try host.launch(delegate: TemplateAppDelegate())
        let manager = try #require(SDKManager.shared as? MobileSyncSDKManager)
        #expect(manager.application === app)
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        #expect(manager.lastResult?.flags == [.authBypassed])
        #expect(app.diagnostics.isEmpty)
        // Another application launching while this one runs is not adopted.
        let other = try SimulatedHost().launch(delegate: DefaultApplicationDelegate())
        #expect(manager.application === app)
        // After this one terminates, the next launch is.
        try host.terminate()
        let relaunched = try host.launch(delegate: TemplateAppDelegate())
        #expect(manager.application === relaunched)
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        try host.terminate()
        _ = other
    } }
}
