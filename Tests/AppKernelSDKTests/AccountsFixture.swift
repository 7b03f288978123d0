import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelEmbeddedOrg
import AppKernelCore
import AppKernelSDK
import AppKernelStore
import AppKernelSync
import AppKernelTesting

/// The Accounts app's setup, in process: an SDK manager with the app's config files, users kept
/// in a credential store under the data home, SmartStore files there too, the passcode in
/// `passcode.json` there, MobileSync against an embedded org.
///
/// Two ways in: ``launch(org:dataHome:)`` logs in if nobody is remembered, then syncs the accounts
/// down (and shows the store as it is when the org cannot be reached); ``launch(dataHome:passcode:)``
/// is the passcode's: with a passcode it logs in, sets it and locks the app (back from the
/// background after the timeout), so the app is asking for it; without one it relaunches on what
/// the data home holds — a login it would need is refused (``loginRequested`` records that the
/// app asked) — and returns once the app asks for the passcode or the launch is over.
/// ``kill()`` drops the app with no graceful exit (SIGKILL: nothing runs after it);
/// ``terminate()`` quits it.
@MainActor
final class AccountsFixture {
    static let userstore = #"{"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}, {"path": "Industry", "type": "string"}]}]}"#
    static let usersyncs = """
    {"syncs": [
      {"syncName": "syncDownAccounts", "syncType": "syncDown", "soupName": "Account",
       "target": {"type": "soql", "query": "SELECT Id, Name, Industry, LastModifiedDate FROM Account"},
       "options": {"mergeMode": "LEAVE_IF_CHANGED"}},
      {"syncName": "syncUpAccounts", "syncType": "syncUp", "soupName": "Account",
       "target": {"createFieldlist": ["Name", "Industry"], "updateFieldlist": ["Name", "Industry"]},
       "options": {"fieldlist": ["Id", "Name", "Industry", "LastModifiedDate"], "mergeMode": "LEAVE_IF_CHANGED"}}
    ]}
    """

    /// What an answer to the passcode prompt did.
    enum UnlockOutcome: Equatable {
        /// Wrong: the app asks again.
        case wrong
        /// Right: the app is unlocked.
        case unlocked
        /// Wrong, and the last attempt: every user was logged out.
        case lockedOut
    }

    let host: SimulatedHost
    let clock: TestClock
    let manager: SDKManager
    let configDirectory: URL
    let dataHome: URL
    let prompts = PromptedPasscodes()
    /// Every change of the current user, oldest first.
    private(set) var userChanges: [UserChange] = []
    /// Whether the app asked for a login (refused: the fixture's relaunches never log in).
    private(set) var loginRequested = false
    /// The launch's failure, if it failed.
    private(set) var launchError: LaunchError?
    private var observation: ListenerToken?
    /// The work that is asking for the passcode (the launch, or the unlock after the background).
    private var asking: Task<Void, Never>?

    /// A data home the fixture made for itself, removed when the fixture goes.
    private let ownedDataHome: URL?

    private init(host: SimulatedHost, clock: TestClock, manager: SDKManager, configDirectory: URL, dataHome: URL, ownsDataHome: Bool = false) {
        self.host = host
        self.clock = clock
        self.manager = manager
        self.configDirectory = configDirectory
        self.dataHome = dataHome
        self.ownedDataHome = ownsDataHome ? dataHome : nil
        manager.passcodeProvider = prompts
        observation = manager.addCurrentUserChangeObserver { [weak self] in self?.userChanges.append($0) }
    }

    deinit {
        if let ownedDataHome { try? FileManager.default.removeItem(at: ownedDataHome) }
    }

    private static func make(dataHome: URL, transport: any HTTPTransport, boot: BootConfig, loginMethod: LoginMethod,
                             keyProvider: KeyProvider = .inMemory(TestKeys.master), userstore: String = AccountsFixture.userstore,
                             usersyncs: String = AccountsFixture.usersyncs, ownsDataHome: Bool = false) throws -> AccountsFixture {
        // The key ring first: a data home holding anything else holds data, and a key file is
        // then never made (it would orphan that data).
        let keyRing = try KeyRing(dataHome: dataHome, provider: keyProvider)
        let configDirectory = dataHome.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        try Data(userstore.utf8).write(to: configDirectory.appendingPathComponent("userstore.json"))
        try Data(usersyncs.utf8).write(to: configDirectory.appendingPathComponent("usersyncs.json"))
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let accounts = try UserAccountManager(store: FileCredentialStore(root: dataHome.appendingPathComponent("accounts"), keyRing: keyRing), transport: transport)
        let passcode = PasscodeManager(store: FilePasscodeStore(url: dataHome.appendingPathComponent("passcode.json"), keyRing: keyRing), iterations: 500)
        let manager = SDKManager(application: app, bootConfig: boot, accountManager: accounts, passcode: passcode, configDirectory: configDirectory)
        manager.dataDirectory = dataHome
        manager.keyRing = keyRing
        manager.transport = transport
        manager.loginMethod = loginMethod
        if SharedScope.current != nil { manager.makeShared() }   // SDKManager.shared, for this test's scope only
        return AccountsFixture(host: host, clock: clock, manager: manager, configDirectory: configDirectory, dataHome: dataHome, ownsDataHome: ownsDataHome)
    }

    private static func bootConfig(for org: EmbeddedOrg) -> BootConfig {
        BootConfig(remoteAccessConsumerKey: org.clientID, oauthRedirectURI: org.redirectURI.absoluteString,
                   oauthScopes: ["api", "refresh_token"], loginHost: org.baseURL.absoluteString)
    }

    /// Launches the app against `org` with its data under `dataHome`.
    static func launch(org: EmbeddedOrg, dataHome: URL) async throws -> AccountsFixture {
        let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .autoApprove())
        try await fixture.manager.launch()
        _ = try? await fixture.syncManager.reSync(named: "syncDownAccounts")   // offline: the store as it is
        return fixture
    }

    /// The soups of ``launch(org:syncs:targets:)``: the app's accounts and their contacts.
    static let userstoreWithContacts = #"{"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}, {"path": "Industry", "type": "string"}]}, {"soupName": "Contact", "indexes": [{"path": "Id", "type": "string"}, {"path": "AccountId", "type": "string"}]}]}"#

    /// Launches the app against `org` (in a data home of its own, removed with the fixture), then
    /// creates the syncs of `syncs` — a `usersyncs.json` an SDK app ships — with the app's custom
    /// sync-down targets registered by class name.
    static func launch(org: EmbeddedOrg, syncs config: SyncConfig,
                       targets: [String: SyncTargetRegistry.SyncDownFactory] = [:]) async throws -> AccountsFixture {
        let dataHome = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-syncs-\(UUID().uuidString)")
        let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .autoApprove(),
                               userstore: userstoreWithContacts, ownsDataHome: true)
        try await fixture.manager.launch()
        let syncManager = try fixture.syncManager
        syncManager.targets = SyncTargetRegistry(syncDown: targets)
        try syncManager.createSyncs(config.syncs)
        return fixture
    }

    /// Launches the app against `org` (in a data home of its own, removed with the fixture) with
    /// `userstore` and `usersyncs` as its config files, read by the SDK's launch.
    static func launch(org: EmbeddedOrg, userstore: String, usersyncs: String) async throws -> AccountsFixture {
        let dataHome = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-files-\(UUID().uuidString)")
        let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .autoApprove(),
                               userstore: userstore, usersyncs: usersyncs, ownsDataHome: true)
        try await fixture.manager.launch()
        return fixture
    }

    /// Launches the app on `dataHome` sealed with `keyProvider`'s master key: logs in if nobody
    /// is remembered. Inside a ``ScopedSharedManager`` test (a `SharedScope`), its manager is `SDKManager.shared`.
    static func launch(dataHome: URL, keyProvider: KeyProvider) async throws -> AccountsFixture {
        let org = EmbeddedOrg.sample()
        let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .autoApprove(), keyProvider: keyProvider)
        try await fixture.manager.launch()
        fixture.lastRefreshToken = fixture.currentUser?.credentials.refreshToken ?? fixture.lastRefreshToken
        return fixture
    }

    /// Launches the app on `dataHome` for the passcode's tests (see the type's discussion).
    static func launch(dataHome: URL, passcode: String? = nil) async throws -> AccountsFixture {
        let org = EmbeddedOrg.sample()
        guard let passcode else {
            let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .userAgent { _ in
                throw LoginRefused()
            })
            Self.parked.append(fixture)
            let launch = Task { @MainActor [fixture] in
                do throws(LaunchError) { try await fixture.manager.launch() } catch {
                    fixture.launchError = error
                    if error.phase == .auth { fixture.loginRequested = true }
                }
            }
            fixture.asking = launch
            await fixture.prompts.waitForPromptOrEnd(of: launch)
            return fixture
        }
        let fixture = try make(dataHome: dataHome, transport: org, boot: bootConfig(for: org), loginMethod: .autoApprove())
        Self.parked.append(fixture)
        try await fixture.manager.launch()
        try fixture.manager.passcode.setPasscode(passcode)
        try fixture.host.moveToBackground()
        await fixture.clock.advance(by: fixture.manager.passcode.lockTimeout + .seconds(1))
        try fixture.host.moveToForeground()
        let unlock = try #require(fixture.manager.unlock, "back after the timeout, the app asks for the passcode")
        fixture.asking = unlock
        await fixture.prompts.waitForPromptOrEnd(of: unlock)
        return fixture
    }

    /// Answers the passcode prompt with `guess`.
    func unlock(with guess: String) async throws -> UnlockOutcome {
        let asking = try #require(asking, "the app is not asking for the passcode")
        try #require(prompts.isPrompting, "the app is not asking for the passcode")
        prompts.answer(guess)
        await prompts.waitForPromptOrEnd(of: asking)
        if prompts.isPrompting { return .wrong }
        return lastUserChange?.reason == .passcodeFailures ? .lockedOut : .unlocked
    }

    /// Drops the app with no graceful exit, as SIGKILL would: no termination, no flush, no close;
    /// a prompt left open is never answered, so nothing of this instance runs again.
    func kill() throws {
        observation = nil
        asking = nil
    }

    /// Every instance the passcode tests launch, kept until the test process ends: a killed one,
    /// or one a test leaves at the prompt, has a task suspended forever (as a killed process's
    /// would be); parked here, what it holds stays reachable instead of reading as leaked memory
    /// to LeakSanitizer.
    private static var parked: [AccountsFixture] = []

    /// Quits the app (its store files stay; the shared store is closed as a process exit would).
    /// A passcode prompt left open is given up first (the user quits at the prompt).
    func terminate() async throws {
        if prompts.isPrompting, let asking {
            prompts.answer(nil)
            await asking.value
        }
        if let token = currentUser?.credentials.refreshToken { lastRefreshToken = token }
        try host.terminate()
        if currentUser != nil { try store.close() }
        try? FileManager.default.removeItem(at: configDirectory)
    }

    /// The refresh token of the last user the fixture saw logged in (what must never be on disk in clear).
    private(set) var lastRefreshToken = "no refresh token was seen"

    /// Logs the current user out (the user's key is destroyed first, then their files).
    func logout() async throws {
        let identity = try #require(currentUser?.identity, "nobody is logged in")
        await manager.accountManager?.logout(identity, reason: .userInitiated)
    }

    /// Every file of `user`'s SmartStores, the databases first (`<home>/<org>/<user>/stores/…`).
    func storeFiles(of user: UserAccount) -> [URL] {
        let stores = dataHome.appendingPathComponent(user.identity.orgID).appendingPathComponent(user.identity.userID).appendingPathComponent("stores")
        let files = (try? FileManager.default.allFiles(under: stores)) ?? []
        return files.filter { $0.lastPathComponent == "store.sqlite" } + files.filter { $0.lastPathComponent != "store.sqlite" }
    }

    /// The current user's SmartStore.
    var store: SmartStore { get throws { try #require(try manager.userStore()) } }
    /// MobileSync over it.
    var syncManager: SyncManager { get throws { try #require(try manager.syncManager()) } }
    /// Who is logged in.
    var currentUser: UserAccount? { manager.accountManager?.currentAccount }
    /// The passcode lock.
    var passcode: PasscodeManager { manager.passcode }
    /// The last change of the current user.
    var lastUserChange: UserChange? { userChanges.last }
    /// The passcode's record.
    var passcodeFileURL: URL { dataHome.appendingPathComponent("passcode.json") }
    /// The passcode's "a passcode is set" marker.
    var passcodeMarkerURL: URL { dataHome.appendingPathComponent("passcode.set") }
    /// Every file of every SmartStore (global and per user) under the data home.
    var storeFiles: [String] {
        let files = FileManager.default.enumerator(atPath: dataHome.path)?.allObjects as? [String] ?? []
        return files.filter { ($0.hasPrefix("stores/") || $0.contains("/stores/")) && !$0.hasSuffix("/") }
            .filter { !(try! dataHome.appendingPathComponent($0).resourceValues(forKeys: [.isDirectoryKey]).isDirectory ?? false) }
    }
}

/// The user does not log in (the fixture's relaunches stop at the login).
struct LoginRefused: Error {}

/// A passcode screen a test answers: each prompt waits until ``answer(_:)``.
@MainActor
final class PromptedPasscodes: PasscodeProvider {
    private var pending: CheckedContinuation<String?, Never>?
    private var waiter: CheckedContinuation<Void, Never>?
    /// Every prompt, oldest first.
    private(set) var prompts: [(attempt: Int, remaining: Int)] = []

    /// Whether the app is waiting for an answer.
    var isPrompting: Bool { pending != nil }

    func passcode(attempt: Int, remaining: Int) async -> String? {
        prompts.append((attempt, remaining))
        return await withCheckedContinuation { continuation in
            pending = continuation
            wake()
        }
    }

    /// Answers the open prompt (`nil`: the user gives up).
    func answer(_ passcode: String?) {
        let continuation = pending
        pending = nil
        continuation?.resume(returning: passcode)
    }

    /// Returns once the app asks for the passcode, or `task` is over.
    func waitForPromptOrEnd(of task: Task<Void, Never>) async {
        let watcher = Task { @MainActor [weak self] in
            await task.value
            self?.wake()
        }
        await withCheckedContinuation { continuation in
            if isPrompting { continuation.resume() } else { waiter = continuation }
        }
        watcher.cancel()
    }

    private func wake() {
        let continuation = waiter
        waiter = nil
        continuation?.resume()
    }
}

/// Gives the test a `SharedScope` of its own, finished at its end: `SDKManager.shared` is the
/// manager the test's fixture launches, for that test's tasks only, so tests that go through
/// `shared` still run in parallel.
struct ScopedSharedManager: TestTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let scope = SharedScope(name: test.name)
        defer { scope.finish() }
        try await scope.withValue { try await function() }
    }
}

extension Trait where Self == ScopedSharedManager {
    /// `SDKManager.shared` is the test's own fixture's manager.
    static var scopedSharedManager: Self { Self() }
}
