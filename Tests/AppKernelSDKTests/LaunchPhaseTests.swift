import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

@MainActor
struct LaunchPhaseTests {
    let clock = TestClock()
    let accounts = FakeAccountManager()

    func makeManager(_ config: BootConfig? = deferredConfig, directory: URL? = nil) throws -> (SDKManager, Application) {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: config, accountManager: accounts, configDirectory: directory)
        return (manager, app)
    }

    // MARK: config

    @Test func configLoadsTheBootConfigFromTheDirectoryWhenNoneIsGiven() async throws {
        let directory = try configDirectory(["bootconfig.json": #"{"remoteAccessConsumerKey": "3MVG9-file", "oauthRedirectURI": "a://b", "shouldAuthenticate": false}"#])
        defer { try? FileManager.default.removeItem(at: directory) }
        let (manager, _) = try makeManager(nil, directory: directory)
        try await manager.launch()
        #expect(manager.bootConfig?.remoteAccessConsumerKey == "3MVG9-file")
    }

    @Test func configRefusesAnInvalidOrMissingConfigNamingTheKey() async throws {
        let (manager, _) = try makeManager(BootConfig(remoteAccessConsumerKey: "", oauthRedirectURI: "a://b"))
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .config)
        #expect((error?.underlyingError as? ConfigError)?.keyPath == "remoteAccessConsumerKey")
        let (bare, _) = try makeManager(nil)
        let missing = await #expect(throws: LaunchError.self) { try await bare.launch() }
        #expect((missing?.underlyingError as? ConfigError)?.reason.contains("configDirectory is not set") == true)
    }

    // MARK: sdkInit

    @Test func sdkInitStartsTheRegisteredServicesInOrderAndNamesAFailingOne() async throws {
        let (manager, _) = try makeManager()
        var started: [String] = []
        manager.registerService(named: "analytics") { started.append("analytics") }
        manager.registerService(named: "push") {
            await Task.yield()
            started.append("push")
        }
        try await manager.launch()
        #expect(started == ["analytics", "push"])
        manager.registerService(named: "broken") { throw SDKTestError() }
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .sdkInit)
        #expect("\(error?.underlyingError.map { "\($0)" } ?? "")" == "the SDK service 'broken' failed to start: SDKTestError")
    }

    // MARK: passcode

    @Test func passcodeIsVerifiedWhenOneIsSet() async throws {
        let (manager, _) = try makeManager()
        #expect(try await manager.launch().flags == [.authBypassed], "no passcode: nothing to verify")
        try manager.passcode.setPasscode("2468")
        let provider = ScriptedPasscodes(["1111", "2468"])
        manager.passcodeProvider = provider
        let result = try await manager.launch()
        #expect(result.flags == [.passcodeVerified, .authBypassed])
        #expect(provider.prompts.map(\.attempt) == [1, 2])
        #expect(provider.prompts.map(\.remaining) == [10, 9])
        #expect(manager.passcode.failedAttempts == 0)
    }

    @Test func aPasscodeWithNoWayToAskForItFailsThePhase() async throws {
        let (manager, _) = try makeManager()
        try manager.passcode.setPasscode("2468")
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .passcode)
        manager.passcodeProvider = ScriptedPasscodes([nil])
        let gaveUp = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect("\(gaveUp?.underlyingError.map { "\($0)" } ?? "")" == "the user did not enter the passcode")
    }

    // MARK: auth

    @Test func authRecordsWhyItLoggedInOrNot() async throws {
        let (deferred, _) = try makeManager()
        #expect(try await deferred.launch().flags == [.authBypassed])
        accounts.loginQueue = [.success("005A")]
        let (authenticating, _) = try makeManager(authConfig)
        let result = try await authenticating.launch()
        #expect(result.flags == [.authenticated])
        #expect(result.currentUser?.identity.userID == "005A")
        #expect(accounts.logins.map(\.clientID) == ["3MVG9-test"])
        #expect(accounts.logins.first?.scopes == ["api", "refresh_token"])
        #expect(try await authenticating.launch().flags == [.alreadyAuthenticated])
        #expect(accounts.loginCount == 1)
    }

    @Test func aFailedLoginFailsTheAuthPhaseAndARelaunchLogsIn() async throws {
        accounts.loginQueue = [.failure(OAuthError.serverError(code: "access_denied", description: "denied"))]
        let (manager, _) = try makeManager(authConfig)
        var handled: [LaunchPhase?] = []
        manager.launchErrorHandler = { handled.append($0.phase) }
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .auth)
        #expect(handled == [.auth])
        #expect(manager.launchState == .failed(.auth))
        accounts.loginQueue = [.success("005A")]
        #expect(try await manager.launch().flags == [.authenticated])
        #expect(manager.launchState == .finished)
    }

    @Test func authWithoutAnAccountManagerIsAClearError() async throws {
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: authConfig)
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect((error?.underlyingError as? ConfigError)?.reason == "login is required but the SDK manager has no account manager")
    }

    // MARK: rootController

    @Test func rootControllerSetsUpTheUsersStoresAndReplacesThePlaceholder() async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let directory = try configDirectory(["userstore.json": userstoreJSON, "usersyncs.json": usersyncsJSON])
        defer { try? FileManager.default.removeItem(at: directory) }
        accounts.add("005A")
        let (manager, _) = try makeManager(authConfig, directory: directory)
        let window = Window()
        window.makeKeyAndVisible()
        manager.window = window
        var placeholderSeen = false
        kept.append(manager.hooks.before(.auth) { manager in placeholderSeen = manager.window?.rootController is PlaceholderController })
        manager.rootControllerFactory = { AccountsController(user: $0?.identity.userID) }
        try await manager.launch()
        #expect(placeholderSeen, "the placeholder shows while launching")
        #expect((window.rootController as? AccountsController)?.user == "005A")
        let owner = StoreOwner.user(FakeAccountManager.account("005A").identity)
        #expect(manager.stores.soups(for: owner).map(\.name) == ["Account"])
        #expect(manager.stores.syncs(for: owner).map(\.name) == ["syncDownAccounts"])
        #expect(manager.stores.soups(for: .global).isEmpty)
    }

    @Test func aBadSyncsFileRegistersNothingAndKeepsThePlaceholder() async throws {
        let directory = try configDirectory(["userstore.json": userstoreJSON,
                                             "usersyncs.json": #"{"syncs": [{"syncName": "s", "syncType": "syncDown", "soupName": "Lead", "target": {"type": "mru"}}]}"#])
        defer { try? FileManager.default.removeItem(at: directory) }
        let (manager, _) = try makeManager(deferredConfig, directory: directory)
        let window = Window()
        manager.window = window
        manager.rootControllerFactory = { AccountsController(user: $0?.identity.userID) }
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .rootController)
        #expect((error?.underlyingError as? ConfigError)?.keyPath == "syncs[0].soupName")
        #expect(manager.stores.owners.isEmpty, "the soups registered before the failure were taken back")
        #expect(window.rootController is PlaceholderController)
        #expect(manager.rootController == nil)
    }

    // MARK: overrides

    @Test func aSubclassOverridesAPhasesDefaultWork() async throws {
        final class CustomManager: SDKManager {
            var log: [String] = []
            override func authenticate() async throws {
                log.append("custom auth")
                flagsSeen = true
            }
            var flagsSeen = false
            override func setupRootController() throws {
                log.append("custom root")
                try super.setupRootController()
            }
        }
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let manager = CustomManager(application: app, bootConfig: authConfig, accountManager: accounts)
        let result = try await manager.launch()
        #expect(manager.log == ["custom auth", "custom root"])
        #expect(result.flags.isEmpty, "the override replaced the default, flags included")
        #expect(accounts.loginCount == 0)
    }
}

/// Hooks on every phase: before, handle (.return skips the default), after, throwing, hanging.
@MainActor
struct PhaseHookTests {
    let clock = TestClock()

    func makeManager() throws -> (SDKManager, FakeAccountManager) {
        let accounts = FakeAccountManager()
        accounts.loginQueue = [.success("005A")]
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app, bootConfig: authConfig, accountManager: accounts,
                                 passcode: PasscodeManager(iterations: 500))
        try manager.passcode.setPasscode("2468")
        manager.passcodeProvider = ScriptedPasscodes(["2468"])
        manager.registerService(named: "svc") {}
        return (manager, accounts)
    }

    @Test(arguments: LaunchPhase.allCases)
    func beforeHandleAndAfterWrapTheDefaultWork(_ phase: LaunchPhase) async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (manager, _) = try makeManager()
        var log: [String] = []
        kept.append(manager.hooks.before(phase) { _ in log.append("before") })
        kept.append(manager.hooks.handle(phase) { _ in log.append("handle"); return .continue })
        kept.append(manager.hooks.after(phase) { _ in log.append("after") })
        let result = try await manager.launch()
        #expect(log == ["before", "handle", "after"])
        #expect(result.flags == [.passcodeVerified, .authenticated])
    }

    @Test(arguments: LaunchPhase.allCases)
    func returnSkipsThePhasesDefaultAndTheLaunchGoesOn(_ phase: LaunchPhase) async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (manager, accounts) = try makeManager()
        var after = false
        kept.append(manager.hooks.handle(phase) { _ in .return })
        kept.append(manager.hooks.after(phase) { _ in after = true })
        manager.rootControllerFactory = { _ in AccountsController(user: nil) }
        let result = try await manager.launch()
        #expect(!after)
        #expect(manager.launchState == .finished)
        switch phase {
        case .config: #expect(result.flags == [.passcodeVerified, .authenticated])
        case .sdkInit: #expect(result.flags == [.passcodeVerified, .authenticated])
        case .passcode: #expect(result.flags == [.authenticated])
        case .auth:
            #expect(result.flags == [.passcodeVerified])
            #expect(accounts.loginCount == 0)
        case .rootController: #expect(manager.rootController == nil)
        }
    }

    @Test(arguments: LaunchPhase.allCases)
    func aThrowingHookFailsThePhaseNamingTheHook(_ phase: LaunchPhase) async throws {
        var kept: [ListenerToken] = []   // hooks live as long as their tokens
        let (manager, _) = try makeManager()
        kept.append(manager.hooks.after(phase, label: "audit") { _ in throw SDKTestError() })
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == phase)
        #expect(error?.hook == "audit")
        #expect(error?.underlyingError is SDKTestError)
        #expect(error?.description == "the launch phase '\(phase)' failed in its after hook 'audit': SDKTestError. Fix or cancel the hook and call launch() again.")
        #expect(manager.launchState.failedPhase == phase)
    }

    @Test(arguments: LaunchPhase.allCases)
    func aHangingHookHitsThePhaseWatchdog(_ phase: LaunchPhase) async throws {
        // Hooks are synchronous; a phase that hangs is an override awaiting something that never comes.
        final class Hanging: SDKManager {
            var hangIn: LaunchPhase = .config
            var clock: TestClock?
            override func run(_ phase: LaunchPhase) async throws {
                if phase == hangIn { try await clock?.sleep(for: .seconds(3_600)) }
                try await super.run(phase)
            }
        }
        let app = try SimulatedHost(clock: clock).launch(delegate: DefaultApplicationDelegate())
        let hanging = Hanging(application: app, bootConfig: deferredConfig)
        hanging.hangIn = phase
        hanging.clock = clock
        hanging.phaseDeadline = .seconds(5)
        let launch = Task { try await hanging.launch() }
        while clock.pendingCount < 2 { await Task.yield() }
        await clock.advance(by: .seconds(5))
        let result = await launch.result
        guard case .failure(let error as LaunchError) = result else { Issue.record("expected a timeout, got \(result)"); return }
        #expect(error.phase == phase)
        if case .timedOut(let deadline) = error.cause { #expect(deadline == .seconds(5)) } else { Issue.record("\(error)") }
        #expect(hanging.launchState == .failed(phase))
    }
}
