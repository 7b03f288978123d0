import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelSDK
import AppKernelTesting

/// A temporary directory, removed when the value goes.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The Accounts app's setup, in process: an SDK manager with the app's config files, users kept
/// in a credential store under the data home, SmartStore files there too, MobileSync against an
/// embedded org. A launch logs in if nobody is remembered, then syncs the accounts down (and
/// shows the store as it is when the org cannot be reached).
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

    let host: SimulatedHost
    let manager: SDKManager
    let configDirectory: URL

    private init(host: SimulatedHost, manager: SDKManager, configDirectory: URL) {
        self.host = host
        self.manager = manager
        self.configDirectory = configDirectory
    }

    /// Launches the app against `org` with its data under `dataHome`.
    static func launch(org: EmbeddedOrg, dataHome: URL) async throws -> AccountsFixture {
        let configDirectory = dataHome.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        try Data(userstore.utf8).write(to: configDirectory.appendingPathComponent("userstore.json"))
        try Data(usersyncs.utf8).write(to: configDirectory.appendingPathComponent("usersyncs.json"))
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let accounts = try UserAccountManager(store: FileCredentialStore(root: dataHome.appendingPathComponent("accounts")), transport: org)
        let boot = BootConfig(remoteAccessConsumerKey: org.clientID, oauthRedirectURI: org.redirectURI.absoluteString,
                              oauthScopes: ["api", "refresh_token"], loginHost: org.baseURL.absoluteString)
        let manager = SDKManager(application: app, bootConfig: boot, accountManager: accounts, configDirectory: configDirectory)
        manager.dataDirectory = dataHome
        manager.transport = org
        manager.loginMethod = .autoApprove()
        try await manager.launch()
        let fixture = AccountsFixture(host: host, manager: manager, configDirectory: configDirectory)
        _ = try? await fixture.syncManager.reSync(named: "syncDownAccounts")   // offline: the store as it is
        return fixture
    }

    /// The current user's SmartStore.
    var store: SmartStore { get throws { try #require(try manager.userStore()) } }
    /// MobileSync over it.
    var syncManager: SyncManager { get throws { try #require(try manager.syncManager()) } }
    /// Who is logged in.
    var currentUser: UserAccount? { manager.accountManager?.currentAccount }

    /// Quits the app (its store files stay; the shared store is closed as a process exit would).
    func terminate() async throws {
        try host.terminate()
        try store.close()
        try? FileManager.default.removeItem(at: configDirectory)
    }
}

@MainActor
struct OfflineDataContractTests {
    // The issue's acceptance test; names adapted: rows of a Smart SQL query are arrays (the id is
    // selected beside the name), `store.update(soup:id:fields:)` is `updateLocally(inSoup:recordId:fields:)`.
    @MainActor @Test func contractSyncedDataSurvivesARelaunchAndLocalChangesSyncUp() async throws {
        let org = EmbeddedOrg.sample()
        let dataHome = try TemporaryDirectory()                     // removed at the end
        var app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)   // logs in, syncs down
        let names = try app.store.query(.smart("select {Account:Name}, {Account:Id} from {Account} order by {Account:Name}"))
        #expect(names.count == org.records(of: "Account").count)
        org.faults.failAllRequests = true                           // offline
        let firstID = try #require(names.first?.arrayValue?[1].stringValue)
        _ = try app.store.updateLocally(inSoup: "Account", recordId: firstID, fields: ["Name": "Renamed offline"])
        try await app.terminate()
        app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)       // no login asked
        #expect(app.currentUser != nil)
        #expect(try app.store.locallyModified(soup: "Account").count == 1)
        org.faults.failAllRequests = false
        let result = try await app.syncManager.syncUp(named: "syncUpAccounts")
        #expect(result.failed.isEmpty)
        #expect(org.records(of: "Account").contains { $0["Name"] == "Renamed offline" })
        try await app.terminate()
    }

    @MainActor @Test func aLogoutDeletesTheUsersStoreFiles() async throws {
        let org = EmbeddedOrg.sample()
        let dataHome = try TemporaryDirectory()
        let app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)
        let user = try #require(app.currentUser)
        let userFolder = dataHome.url.appendingPathComponent("\(user.identity.orgID)/\(user.identity.userID)")
        #expect(FileManager.default.fileExists(atPath: userFolder.appendingPathComponent("stores").path))
        await app.manager.accountManager?.logout(user.identity, reason: .userInitiated)
        #expect(!FileManager.default.fileExists(atPath: userFolder.appendingPathComponent("stores").path))
        await app.manager.reauthentication?.value
        try await app.terminate()
    }
}
