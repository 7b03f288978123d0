import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

/// Issue 29: "a logout in one instance must never wipe a store another live instance has open
/// without that instance learning it". Two SDK managers — two instances of the app — on one
/// temporary data home: one credential store, one stores folder, each with a store manager of
/// its own (as two processes have).
@MainActor
struct TwoInstanceLogoutTests {
    /// Answers every request 200 (the token revocation at logout).
    struct AcceptingTransport: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 200) }
    }

    final class DataHome {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("two-instances-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    struct Instance {
        let host: SimulatedHost
        let manager: SDKManager
        let accounts: UserAccountManager
    }

    let ada = FakeAccountManager.account("005ADA")
    let deferred = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "app://done", shouldAuthenticate: false)

    func launchInstance(on home: DataHome) async throws -> Instance {
        let accounts = try UserAccountManager(store: FileCredentialStore(root: home.url.appendingPathComponent("accounts"), keyRing: TestKeys.ring(for: home.url)), transport: AcceptingTransport())
        let manager = SDKManager(bootConfig: deferred, accountManager: accounts)
        manager.dataDirectory = home.url
        manager.keyRing = try TestKeys.ring(for: home.url)
        manager.storeManager = StoreManager(root: home.url, keyRing: manager.keyRing)
        let host = SimulatedHost()
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        return Instance(host: host, manager: manager, accounts: accounts)
    }

    /// Ada logged in (by an earlier run); A opens her store and writes; B logs her out.
    func setUp(_ home: DataHome) async throws -> (a: Instance, b: Instance, store: SmartStore, database: URL) {
        let seed = try UserAccountManager(store: FileCredentialStore(root: home.url.appendingPathComponent("accounts"), keyRing: TestKeys.ring(for: home.url)), transport: AcceptingTransport())
        try seed.add(ada)
        let a = try await launchInstance(on: home), b = try await launchInstance(on: home)
        #expect(a.accounts.currentAccount?.identity == ada.identity && b.accounts.currentAccount?.identity == ada.identity)
        let store = try #require(try a.manager.userStore())
        try store.registerSoup(SoupSpec(name: "notes", indexes: [IndexSpec(path: "n", type: .integer)]))
        try store.upsert([["n": 1]], intoSoup: "notes")
        let database = try #require(a.manager.storeManager).databaseURL(named: SmartStore.defaultStoreName, for: .user(ada.identity))
        await b.accounts.logout(ada.identity, reason: .userInitiated)
        await b.manager.reauthentication?.value
        return (a, b, store, database)
    }

    @Test func theOtherInstanceKeepsItsOpenStoreUntilItLearnsThenStopsUsingItAndTheWipeFinishes() async throws {
        let home = try DataHome()
        let (a, _, store, database) = try await setUp(home)
        var changes: [UserChange] = []
        let observation = a.manager.addCurrentUserChangeObserver { changes.append($0) }
        defer { observation.cancel() }

        #expect(FileManager.default.fileExists(atPath: database.path), "A's store files are not deleted while A has them open")
        #expect(try store.count(QuerySpec.all(soupName: "notes")) == 1)
        #expect(store.isWipePending, "B left the wipe pending")

        // A's next activation: it reloads its users, hears the logout, stops using the store.
        try a.host.deactivate()
        try a.host.activate()
        #expect(changes == [UserChange(kind: .loggedOut, from: ada.identity, to: nil, reason: .loggedOutElsewhere)])
        #expect(a.accounts.allAccounts.isEmpty && a.manager.accountManager?.currentAccount == nil)
        let afterwards = #expect(throws: StoreError.self) { try store.count(QuerySpec.all(soupName: "notes")) }
        #expect(afterwards?.code == .storeClosed, "a query after it fails, typed")
        #expect(!FileManager.default.fileExists(atPath: database.path), "and then the files are gone")
        #expect(!FileManager.default.fileExists(atPath: database.deletingLastPathComponent().path))
        await a.manager.reauthentication?.value
    }

    @Test func theUsersStoreIsNotHandedOutOnceAnotherInstanceLoggedHerOut() async throws {
        let home = try DataHome()
        let (a, _, store, database) = try await setUp(home)
        // No activation yet: A asks for the current user's store.
        let handedOut = try a.manager.userStore()
        #expect(handedOut !== store, "not Ada's store")
        #expect(a.manager.currentStoreOwner == .global, "A learnt that Ada logged out")
        #expect(store.isClosed)
        #expect(!FileManager.default.fileExists(atPath: database.path))
        handedOut?.close()
        await a.manager.reauthentication?.value
    }
}
