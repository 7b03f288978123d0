import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

/// Issue 29: the org's `mobile_policy` is enforced, as the Mobile SDK's screen-lock manager does.
///
/// Written from the Mobile SDK for iOS (forcedotcom/SalesforceMobileSDK-iOS):
/// - `libs/SalesforceSDKCore/SalesforceSDKCore/Classes/Security/ScreenLock/ScreenLockManagerInternal.swift`:
///   a policy is stored per user (keyed by user id); the global one is the strictest — the
///   shortest `screen_lock` above 0, in minutes (locked when the time in the background is
///   *more* than minutes × 60 s); re-evaluated over the remaining users after a logout
///   (`checkForScreenLockUsers`, called from `SalesforceSDKManager.handlePostLogout` and at
///   start-up because stored values outlive the app); removed when no user with a policy is left.
/// - `SFSecurityLockout.m` (removed in commit b0c610ff5, "Remove deprecated Passcode code"): a
///   `pin_length` longer than the one in force is more restrictive and puts the passcode screen
///   in change mode — the existing passcode must be changed; a shorter one changes nothing.
/// - `SFIdentityData.m`: `mobile_policy`'s `pin_length` and `screen_lock` are read as integers.
///
/// Where AppKernel differs, on purpose: a policy only tightens the app's own settings (its own
/// 10-minute timeout and 4-character minimum stay when a policy is looser); the change of a
/// too-short passcode is asked for at the next unlock, when the passcode is entered (its length
/// is never stored); the passcode is the app's own, so it stays when the last user with a policy
/// leaves (the SDK's device lock simply stops being asked for) — only the policy's values go.
@MainActor
struct MobilePolicyTests {
    // MARK: The finding

    /// The issue's finding, written against the API that existed before the fix (it failed then:
    /// the 4-digit passcode was accepted and the app came back unlocked after 61 s): a user whose
    /// identity carries `pin_length` 6 and `screen_lock` 1 logs in.
    @Test func theMobilePolicyIsNoLongerParsedAndIgnored() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let application = try host.launch(delegate: DefaultApplicationDelegate())
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: InProcessTransport { _ in HTTPResponse(status: 200) })
        let manager = SDKManager(application: application, bootConfig: authConfig, accountManager: accounts, passcode: PasscodeManager(iterations: 500))
        var account = FakeAccountManager.account("005A")
        account.userIdentity = UserIdentity(userID: "005A", orgID: "00DORG", username: "ada@acme.com", displayName: "Ada",
                                            mobilePolicy: .init(pinLength: 6, screenLockMinutes: 1))
        try accounts.add(account)
        #expect(throws: PasscodeError.tooShort(minimum: 6)) { try manager.passcode.setPasscode("1234") }
        try? manager.passcode.setPasscode("123456")
        try host.moveToBackground()
        await clock.advance(by: .seconds(61))
        try host.moveToForeground()
        #expect(manager.passcode.isLocked, "screen_lock 1: locked after more than 60 s in the background")
    }

    // MARK: The policy's values

    @Test func anIdentitysMobilePolicyBecomesTheMinimumLengthAndTheLockTimeoutInMinutes() throws {
        let json = #"{"user_id": "005A", "organization_id": "00DA", "username": "ada@acme.com", "mobile_policy": {"pin_length": "6", "screen_lock": 5}}"#
        let identity = try UserIdentity(json: Data(json.utf8))
        let policy = try #require(identity.mobilePolicy.flatMap(PasscodePolicy.init))
        #expect(policy == PasscodePolicy(minimumLength: 6, lockTimeout: .seconds(300)))
    }

    @Test func valuesOfZeroOrBelowSetNothingAndHugeOnesAreBounded() throws {
        let cases: [(UserIdentity.MobilePolicy, PasscodePolicy?)] = [
            (.init(pinLength: 0, screenLockMinutes: 0), nil),
            (.init(pinLength: -4, screenLockMinutes: -1), nil),   // the SDK's "not set" is -1
            (.init(pinLength: nil, screenLockMinutes: nil), nil),
            (.init(pinLength: 8, screenLockMinutes: 0), PasscodePolicy(minimumLength: 8)),
            (.init(pinLength: 0, screenLockMinutes: 1), PasscodePolicy(lockTimeout: .seconds(60))),
            (.init(pinLength: .max, screenLockMinutes: .max),     // a hostile answer: no trap, no overflow
             PasscodePolicy(minimumLength: PasscodePolicy.longestMinimumLength, lockTimeout: .seconds(PasscodePolicy.longestLockTimeoutMinutes * 60))),
        ]
        for (mobilePolicy, expected) in cases {
            #expect(PasscodePolicy(mobilePolicy) == expected, "\(mobilePolicy)")
        }
    }

    @Test func theStrictestValuesWinAcrossPolicies() {
        let ada = PasscodePolicy(minimumLength: 4, lockTimeout: .seconds(600))
        let bob = PasscodePolicy(minimumLength: 6, lockTimeout: .seconds(300))
        let cy = PasscodePolicy(minimumLength: 8)   // no screen lock: the others' timeout stands
        #expect(PasscodePolicy.strictest([ada, bob]) == PasscodePolicy(minimumLength: 6, lockTimeout: .seconds(300)))
        #expect(PasscodePolicy.strictest([ada, bob, cy]) == PasscodePolicy(minimumLength: 8, lockTimeout: .seconds(300)))
        #expect(PasscodePolicy.strictest([]) == nil)
    }

    // MARK: Enforced on the passcode

    @Test func aOneMinuteScreenLockLocksAfterMoreThanSixtySecondsInTheBackground() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 4, "screen_lock": 1]), home: home.url)
        try await app.logIn("ada@acme.com")
        try app.manager.passcode.setPasscode("2468")
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(60))
        #expect(try await app.returnsLocked(after: .seconds(60)) == false, "exactly the timeout: no lock (the SDK locks on more)")
        #expect(try await app.returnsLocked(after: .seconds(61)), "the app's own 10 minutes no longer hold")
    }

    @Test func pinLengthSixRefusesAFourDigitNewPasscode() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 6, "screen_lock": 10]), home: home.url)
        try await app.logIn("ada@acme.com")
        let passcode = app.manager.passcode
        #expect(passcode.enforcedMinimumLength == 6)
        #expect(throws: PasscodeError.tooShort(minimum: 6)) { try passcode.setPasscode("1234") }
        try passcode.setPasscode("135790")
        #expect(throws: PasscodeError.tooShort(minimum: 6)) { try passcode.changePasscode(from: "135790", to: "1234") }
        #expect(passcode.failedAttempts == 0, "a too-short new passcode is refused before the current one is checked")
    }

    @Test func pinLengthSixForcesAChangeOfAnExistingFourDigitPasscodeAtTheNextUnlock() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(bob: ["pin_length": 6, "screen_lock": 5]), home: home.url)
        try await app.logIn("ada@acme.com")
        try app.manager.passcode.setPasscode("2468")                   // 4 digits: fine so far
        try await app.logIn("bob@beta.com")                            // pin_length 6 arrives
        app.passcodes.answers = ["2468", "1234", "135790"]            // the old one, too short, long enough
        #expect(try await app.returnsLocked(after: .seconds(301)))
        await app.manager.unlock?.value
        #expect(app.passcodes.newPasscodeRequests == [6, 6], "a too-short new one is asked again")
        #expect(!app.manager.passcode.isLocked)
        #expect(!app.manager.passcode.isChangeRequired)
        #expect(app.manager.passcode.verify("135790"))
        #expect(!app.manager.passcode.verify("2468"), "the old passcode is gone")
    }

    @Test func aChangeGivenUpLeavesTheAppLockedAndIsAskedAgainAtTheNextUnlock() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 6, "screen_lock": 5]), home: home.url)
        try app.manager.passcode.setPasscode("2468")                   // set before anyone logged in
        try await app.logIn("ada@acme.com")
        var errors: [LaunchError] = []
        app.manager.launchErrorHandler = { errors.append($0) }
        app.passcodes.answers = ["2468", nil]                          // right, then no new passcode
        #expect(try await app.returnsLocked(after: .seconds(301)))
        await app.manager.unlock?.value
        #expect(app.manager.passcode.isLocked, "fail closed: a right but too-short passcode does not unlock")
        #expect(app.manager.passcode.isChangeRequired)
        #expect(errors.map(\.phase) == [.passcode])
        #expect(app.manager.passcode.failedAttempts == 0, "the right answer cleared the count")
        // The app's own screen asks again: the old passcode is still right, and still must change.
        #expect(app.manager.passcode.unlock(with: "2468") == .changeRequired(minimumLength: 6))
        #expect(app.manager.passcode.isLocked)
        try app.manager.passcode.changePasscode(from: "2468", to: "864200")
        #expect(!app.manager.passcode.isLocked)
    }

    @Test func aRelaunchAsksForTheChangeDuringTheLaunch() async throws {
        let home = try TemporaryDirectory()
        let org = Self.org(ada: ["pin_length": 6, "screen_lock": 5])
        var app = try PolicyApp(org: org, home: home.url)
        try app.manager.passcode.setPasscode("2468")
        try await app.logIn("ada@acme.com")
        app = try PolicyApp(org: org, home: home.url)                   // relaunch on the same files
        app.passcodes.answers = ["2468", "97531864"]
        #expect(try await app.manager.launch().flags == [.passcodeVerified, .alreadyAuthenticated])
        #expect(app.passcodes.newPasscodeRequests == [6])
        #expect(app.manager.passcode.verify("97531864"))
    }

    // MARK: A passcode the policy requires

    /// `ScreenLockManagerInternal.storeMobilePolicy` locks as soon as a policy with a screen lock
    /// is stored; the old `SFSecurityLockout.setInactivityConfiguration` showed its create-passcode
    /// screen when none was set.
    @Test func aScreenLockPolicyWithNoPasscodeLocksAndAsksForOneAtLogin() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 6, "screen_lock": 5]), home: home.url)
        app.passcodes.answers = ["1234", "135790"]
        try await app.logIn("ada@acme.com")
        #expect(app.manager.passcode.isLocked, "locked from the login on, until a passcode is set")
        await app.manager.unlock?.value
        #expect(app.passcodes.newPasscodeRequests == [6, 6])
        #expect(app.manager.passcode.isSet)
        #expect(!app.manager.passcode.isLocked)
        #expect(app.manager.passcode.verify("135790"))
    }

    @Test func withoutTheRequiredPasscodeARelaunchDoesNotOpen() async throws {
        let home = try TemporaryDirectory()
        let org = Self.org(ada: ["pin_length": 4, "screen_lock": 5])
        let first = try PolicyApp(org: org, home: home.url)
        try await first.logIn("ada@acme.com")
        await first.manager.unlock?.value                              // the user gave up: no passcode
        #expect(!first.manager.passcode.isSet)
        #expect(first.manager.passcode.isLocked)
        #expect(first.manager.passcode.unlock(with: "anything") == .changeRequired(minimumLength: 4), "no passcode is no way in")
        var app = try PolicyApp(org: org, home: home.url)
        await #expect(throws: LaunchError.self) { try await app.manager.launch() }
        #expect(app.manager.lastError?.phase == .passcode, "the launch stops before the user's data")
        #expect(app.manager.passcode.isLocked)
        app = try PolicyApp(org: org, home: home.url)
        app.passcodes.answers = ["2468"]
        #expect(try await app.manager.launch().flags == [.passcodeVerified, .alreadyAuthenticated])
        #expect(app.manager.passcode.isSet)
    }

    @Test func removingThePasscodeAfterTheLastPolicyUserLeftIsAllowed() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["screen_lock": 5]), home: home.url)
        try app.manager.passcode.setPasscode("2468")
        try await app.logIn("ada@acme.com")
        #expect(throws: PasscodeError.self) { try app.manager.passcode.removePasscode(current: "2468") }
        await app.logOut("ada@acme.com")
        try app.manager.passcode.removePasscode(current: "2468")
        #expect(!app.manager.passcode.isSet)
        #expect(!app.manager.passcode.isRequiredByPolicy)
    }

    // MARK: Several users

    @Test func twoUsersTheStrictestValuesWin() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 4, "screen_lock": 10], bob: ["pin_length": 6, "screen_lock": 5]), home: home.url)
        try await app.logIn("ada@acme.com")
        #expect(app.manager.passcode.mobilePolicy == PasscodePolicy(minimumLength: 4, lockTimeout: .seconds(600)))
        try await app.logIn("bob@beta.com")
        #expect(app.manager.passcode.enforcedMinimumLength == 6)
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(300))
        #expect(app.manager.usersMobilePolicy == app.manager.passcode.mobilePolicy)
    }

    @Test func theStricterUserLoggingOutReEvaluatesAndTheLastOneLeavingRestoresTheAppsOwnSettings() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 5, "screen_lock": 8], bob: ["pin_length": 6, "screen_lock": 5]), home: home.url)
        try await app.logIn("ada@acme.com")
        try await app.logIn("bob@beta.com")
        try app.manager.passcode.setPasscode("135790")
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(300))
        await app.logOut("bob@beta.com")
        #expect(app.manager.passcode.enforcedMinimumLength == 5)
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(480))
        await app.logOut("ada@acme.com")
        #expect(app.manager.passcode.mobilePolicy == nil, "no user with a policy: none in force")
        #expect(app.manager.passcode.enforcedMinimumLength == 4)
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(600))
        let stored = try app.manager.passcode.record()
        #expect(stored?.policy == nil, "the stored record follows")
    }

    @Test func aPolicyNeverLoosensTheAppsOwnSettings() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 3, "screen_lock": 30]), home: home.url)
        try await app.logIn("ada@acme.com")
        #expect(app.manager.passcode.mobilePolicy == PasscodePolicy(minimumLength: 3, lockTimeout: .seconds(1800)))
        #expect(app.manager.passcode.enforcedMinimumLength == 4)
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(600))
    }

    @Test func thePasscodeCannotBeRemovedWhileAPolicyRequiresALock() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 4, "screen_lock": 5]), home: home.url)
        try await app.logIn("ada@acme.com")
        try app.manager.passcode.setPasscode("2468")
        let policy = try #require(app.manager.passcode.mobilePolicy)
        #expect(throws: PasscodeError.requiredByPolicy(policy)) { try app.manager.passcode.removePasscode(current: "2468") }
        #expect(app.manager.passcode.isSet)
        await app.logOut("ada@acme.com")
        try app.manager.passcode.removePasscode(current: "2468")
        #expect(!app.manager.passcode.isSet)
    }

    // MARK: Persistence

    @Test func aRelaunchKeepsEnforcingThePolicy() async throws {
        let home = try TemporaryDirectory()
        let org = Self.org(ada: ["pin_length": 4, "screen_lock": 10], bob: ["pin_length": 6, "screen_lock": 5])
        var app = try PolicyApp(org: org, home: home.url)
        try await app.logIn("ada@acme.com")
        try await app.logIn("bob@beta.com")
        try app.manager.passcode.setPasscode("135790")
        app = try PolicyApp(org: org, home: home.url)
        #expect(app.manager.passcode.mobilePolicy == PasscodePolicy(minimumLength: 6, lockTimeout: .seconds(300)))
        // The passcode's own record keeps it too, sealed, before any account is read.
        let alone = PasscodeManager(store: FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url)),
                                    iterations: 500)
        #expect(alone.enforcedMinimumLength == 6)
        #expect(alone.enforcedLockTimeout == .seconds(300))
    }

    @Test func anAccountThatLostItsPolicyDoesNotLoosenTheLockAtRelaunch() async throws {
        let home = try TemporaryDirectory()
        let org = Self.org(ada: ["pin_length": 6, "screen_lock": 1])
        let first = try PolicyApp(org: org, home: home.url)
        try await first.logIn("ada@acme.com")
        try first.manager.passcode.setPasscode("135790")
        // The account's file is rewritten without the identity (damage, or an edit to lift the policy).
        var account = try #require(first.accounts.allAccounts.first)
        account.userIdentity = nil
        try FileCredentialStore(root: home.url.appendingPathComponent("accounts"), keyRing: TestKeys.ring(for: home.url)).save(account)
        let app = try PolicyApp(org: org, home: home.url)
        #expect(app.manager.usersMobilePolicy == nil)
        #expect(app.manager.passcode.enforcedLockTimeout == .seconds(60), "the record's policy holds")
        #expect(app.manager.passcode.enforcedMinimumLength == 6)
    }

    @Test func loweringTheStoredPolicyInTheRecordIsTampering() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(ada: ["pin_length": 6, "screen_lock": 1]), home: home.url)
        try app.manager.passcode.setPasscode("135790")
        try await app.logIn("ada@acme.com")
        let file = home.url.appendingPathComponent("passcode.json")
        let fields = try SealedPasscodeFile.fields(of: file, home: home.url)
        #expect(fields["policy"] as? [String: Int] == ["minimumLength": 6, "lockTimeoutSeconds": 60])
        // Sealed since issue 30: without the key an edit can only flip ciphertext bits, which fail the tag.
        try SealedPasscodeFile.flipACiphertextBit(of: file)
        #expect(throws: PasscodeDamage.self) { try app.manager.passcode.record() }
    }

    @Test func noPolicyKeepsTodaysDefaults() async throws {
        let home = try TemporaryDirectory()
        let app = try PolicyApp(org: Self.org(), home: home.url)
        try await app.logIn("ada@acme.com")
        try await app.logIn("bob@beta.com")
        let passcode = app.manager.passcode
        #expect(passcode.mobilePolicy == nil)
        #expect(passcode.enforcedLockTimeout == .seconds(600))
        #expect(passcode.enforcedMinimumLength == 4)
        try passcode.setPasscode("2468")
        #expect(try passcode.record()?.policy == nil, "the record is as before: no policy field")
        let fields = try SealedPasscodeFile.fields(of: home.url.appendingPathComponent("passcode.json"), home: home.url)
        #expect(Set(fields.keys) == ["salt", "hash", "iterations", "failedAttempts"], "the record's bytes are as before the policy existed")
        app.passcodes.answers = ["2468"]
        #expect(try await app.returnsLocked(after: .seconds(599)) == false)
        #expect(try await app.returnsLocked(after: .seconds(601)))
        await app.manager.unlock?.value
        #expect(!passcode.isLocked)
        #expect(app.passcodes.newPasscodeRequests.isEmpty)
    }

    // MARK: Helpers

    /// The embedded org's two users (Ada in Acme, Bob in Beta), with the mobile policies given.
    static func org(ada: [String: JSONValue]? = nil, bob: [String: JSONValue]? = nil) -> EmbeddedOrg {
        EmbeddedOrg(users: [.init(username: "ada@acme.com", userID: "005ADA000000001", orgID: "00DACME000000001", displayName: "Ada Lovelace", mobilePolicy: ada),
                            .init(username: "bob@beta.com", userID: "005BOB000000002", orgID: "00DBETA000000002", displayName: "Bob Beta", mobilePolicy: bob)])
    }
}

/// An app on a data home: users in a file credential store, the passcode in `passcode.json`,
/// logins through the embedded org (its identity answer carries the users' mobile policies), on
/// a virtual clock. A second instance on the same data home is a relaunch.
@MainActor
final class PolicyApp {
    let clock = TestClock()
    let host: SimulatedHost
    let org: EmbeddedOrg
    let accounts: UserAccountManager
    let manager: SDKManager
    let passcodes = ScriptedPasscodes([])

    init(org: EmbeddedOrg, home: URL) throws {
        self.org = org
        host = SimulatedHost(clock: clock)
        let application = try host.launch(delegate: DefaultApplicationDelegate())
        let keyRing = try TestKeys.ring(for: home)
        accounts = try UserAccountManager(store: FileCredentialStore(root: home.appendingPathComponent("accounts"), keyRing: keyRing), transport: org)
        let passcode = PasscodeManager(store: FilePasscodeStore(url: home.appendingPathComponent("passcode.json"), keyRing: keyRing), iterations: 500)
        manager = SDKManager(application: application, bootConfig: authConfig, accountManager: accounts, passcode: passcode)
        manager.passcodeProvider = passcodes
    }

    /// Logs `username` in through the org and makes them current.
    func logIn(_ username: String) async throws {
        try await accounts.logIn(config: org.oauthConfig, flow: .webServer, loginHint: username)
    }

    /// Logs `username` out.
    func logOut(_ username: String) async {
        guard let account = accounts.allAccounts.first(where: { $0.userIdentity?.username == username }) else { return }
        await accounts.logout(account.identity, reason: .userInitiated)
    }

    /// Sends the app to the background for `duration` on the virtual clock and back: whether it
    /// came back locked.
    func returnsLocked(after duration: Duration) async throws -> Bool {
        try host.moveToBackground()
        await clock.advance(by: duration)
        try host.moveToForeground()
        return manager.passcode.isLocked
    }
}
