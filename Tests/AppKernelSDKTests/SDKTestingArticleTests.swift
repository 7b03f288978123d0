// The AppKernelSDKTesting catalog's "Testing with the SDK kit" article
// (Sources/AppKernelSDKTesting/AppKernelSDKTesting.docc/TestingWithTheSDKKit.md), as written.
// `AppSDKManager` is the porting article's (PortingGuideTests).
import AppKernel
import AppKernelAuth
import AppKernelEmbeddedOrg
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Testing

/// The article's tests; each runs in parallel with every other, in its own scope.
@Suite struct SDKTestingArticle {
    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func eachTestHasItsOwnSharedManager() async throws {
        #expect(SDKManager.shared is AppSDKManager)          // the trait called AppSDKManager.initializeSDK()
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "http://localhost:1717/OauthRedirect",
                                                  shouldAuthenticate: false)   // login deferred: no users needed
        let host = AppKernelTest.current.host
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        #expect(SDKManager.shared.application === app)       // attached before the launch
        try await host.launchFinished()                      // its launch phases ran
        _ = host.trace.take()
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aFirstLaunchLogsInTheScriptedUser() async throws {
        let accounts = FakeAccountManager()
        accounts.loginQueue = [.success("005A")]             // what the login page will answer
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test",
                                                  oauthRedirectURI: "http://localhost:1717/OauthRedirect")
        SDKManager.shared.accountManager = accounts
        let host = AppKernelTest.current.host
        try host.launch(delegate: DefaultApplicationDelegate())
        let result = try await SDKManager.shared.launchFinished()
        #expect(result.flags == [.authenticated])
        #expect(result.currentUser?.identity.userID == "005A")
        #expect(accounts.logins.map(\.clientID) == ["3MVG9-test"])
        _ = host.trace.take()
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aSwitchAndALogoutReachTheUserChangeObservers() async throws {
        let accounts = FakeAccountManager()
        accounts.add("005A")                                 // signed in already, current
        accounts.add("005B", current: false)
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test",
                                                  oauthRedirectURI: "http://localhost:1717/OauthRedirect")
        SDKManager.shared.accountManager = accounts
        var changes: [UserChange.Kind] = []
        let observation = SDKManager.shared.addCurrentUserChangeObserver { changes.append($0.kind) }
        let host = AppKernelTest.current.host
        try host.launch(delegate: DefaultApplicationDelegate())
        try await host.launchFinished()
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        await accounts.logout(FakeAccountManager.account("005B").identity, reason: .userInitiated)
        #expect(changes == [.switched, .loggedOut])
        #expect(accounts.currentIdentity?.userID == "005A")
        observation.cancel()
        _ = host.trace.take()
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aFakeUsersRestClientComesFromTheProvider() async throws {
        let org = EmbeddedOrg.sample()
        let client = try await org.loggedInClient(username: "ada@acme.com")
        let accounts = FakeAccountManager()
        accounts.add("005A")
        SDKManager.shared.accountManager = accounts
        #expect(SDKManager.shared.restClientForCurrentUser() == nil)   // a fake's users get none by themselves
        SDKManager.shared.restClientProvider = { account in client }
        #expect(SDKManager.shared.restClientForCurrentUser() != nil)   // and so does every sync
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aWrongPasscodeThenTheRightOneUnlocksTheLaunch() async throws {
        let accounts = FakeAccountManager()
        accounts.add("005A")
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test",
                                                  oauthRedirectURI: "http://localhost:1717/OauthRedirect")
        SDKManager.shared.accountManager = accounts
        try SDKManager.shared.passcode.setPasscode("2468")
        let passcodes = ScriptedPasscodes(["1111", "2468"])   // a wrong one, then the right one
        SDKManager.shared.passcodeProvider = passcodes
        let host = AppKernelTest.current.host
        try host.launch(delegate: DefaultApplicationDelegate())
        let result = try await SDKManager.shared.launchFinished()
        #expect(result.flags == [.passcodeVerified, .alreadyAuthenticated])
        #expect(passcodes.prompts.map(\.attempt) == [1, 2])
        #expect(passcodes.prompts.map(\.remaining) == [10, 9])
        _ = host.trace.take()
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aFailedLaunchIsThrownByLaunchFinished() async throws {
        SDKManager.shared.bootConfig = .placeholder          // the template's unfilled bootconfig.json
        let host = AppKernelTest.current.host
        try host.launch(delegate: DefaultApplicationDelegate())
        let error = await #expect(throws: LaunchError.self) { try await host.launchFinished() }
        #expect(error?.phase == .config)
        #expect(host.takeUnhandledErrors().isEmpty)          // thrown, so heard: the check is satisfied
        _ = host.trace.take()
    }

    @Test(.appKernel(manager: AppSDKManager.self), .exhaustivity(.ignoring(.traceLines))) @MainActor
    func aTestThatLooksOnlyAtTheManager() async throws {
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "http://localhost:1717/OauthRedirect",
                                                  shouldAuthenticate: false)   // login deferred: no users needed
        try AppKernelTest.current.host.launch(delegate: DefaultApplicationDelegate())
        try await AppKernelTest.current.host.launchFinished()
        #expect(SDKManager.shared.launchState == .finished)  // the trace is left: printed, not failed
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func aTestThatLeavesTheGracePeriodRunning() async throws {
        let test = AppKernelTest.current
        test.exhaustivity = .ignoring(.pendingTimers)
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "http://localhost:1717/OauthRedirect",
                                                  shouldAuthenticate: false)   // login deferred: no users needed
        try test.host.launch(delegate: DefaultApplicationDelegate())
        try await test.host.launchFinished()
        try test.host.moveToBackground()                     // the 5 s grace period starts, and stays
        _ = test.host.trace.take()
    }
}
