import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelSDKTesting

@MainActor
struct UserStoreRegistryTests {
    let ada = StoreOwner.user(UserAccountIdentity(userID: "005A", orgID: "00D"))
    let account = SoupSpec(name: "Account", indexes: [IndexSpec(path: "Id", type: .string)])
    let contact = SoupSpec(name: "Contact", indexes: [IndexSpec(path: "Id", type: .string)])

    @Test func registeringIsAllOrNoneAndIdempotent() throws {
        let registry = UserStoreRegistry()
        try registry.register(soups: [account], for: ada)
        try registry.register(soups: [account, contact], for: ada)
        #expect(registry.soups(for: ada).map(\.name) == ["Account", "Contact"], "the identical soup was skipped")
        let changed = SoupSpec(name: "Account", indexes: [IndexSpec(path: "Name", type: .fullText)])
        let lead = SoupSpec(name: "Lead", indexes: [])
        let error = #expect(throws: ConfigError.self) { try registry.register(soups: [lead, changed], for: ada) }
        #expect(error?.keyPath == "soups[1].soupName")
        #expect(error?.reason == "the soup 'Account' is already registered for 00D/005A differently")
        #expect(registry.soups(for: ada).map(\.name) == ["Account", "Contact"], "Lead was not registered either")
    }

    @Test func syncsNeedTheirSoupForTheSameOwner() throws {
        let registry = UserStoreRegistry()
        try registry.register(soups: [account], for: .global)
        let sync = SyncSpec(name: "down", type: .syncDown, soupName: "Account", targetType: .mru)
        let error = #expect(throws: ConfigError.self) { try registry.register(syncs: [sync], for: ada) }
        #expect(error?.code == .unknownSoup)
        try registry.register(syncs: [sync], for: .global)
        #expect(throws: ConfigError.self) {
            try registry.register(syncs: [SyncSpec(name: "down", type: .syncDown, soupName: "Account", targetType: .soql, query: "x")], for: .global)
        }
        #expect(registry.syncs(for: .global) == [sync])
        registry.wipe(.global)
        #expect(registry.owners.isEmpty)
    }
}

/// The README's SDK-manager snippet, with the names it assumes.
@MainActor @Test func readmeSDKManagerExample() async throws {
    final class AppSDKManager: SDKManager {
        var phases: [String] = []
        override func run(_ phase: LaunchPhase) async throws {
            phases.append("\(phase)")
            try await super.run(phase)
        }
    }
    let resources = try configDirectory(["bootconfig.json": #"{"remoteAccessConsumerKey": "3MVG9-readme", "oauthRedirectURI": "myapp://done"}"#,
                                         "userstore.json": userstoreJSON])
    defer { try? FileManager.default.removeItem(at: resources) }
    let accounts = FakeAccountManager()
    accounts.add("005A")
    let manager = AppSDKManager()
    manager.configDirectory = resources                 // bootconfig.json, userstore.json, usersyncs.json
    manager.accountManager = accounts                   // a UserAccountManager
    var tokens: [ListenerToken] = []                    // a hook lives as long as its token
    manager.hooks.handle(.passcode) { _ in .return }.store(in: &tokens)   // skip a phase's default work
    let app = Application(delegate: DefaultApplicationDelegate(), clock: ContinuousClock())
    manager.attach(to: app)                             // launches when the app finishes launching
    try app.handle(.launch(LaunchOptions(), inBackground: false))
    await manager.automaticLaunch?.value
    #expect(manager.phases == ["config", "sdkInit", "passcode", "auth", "rootController"])
    #expect(manager.lastResult?.flags == [.alreadyAuthenticated])
    #expect(manager.stores.soups(for: manager.currentStoreOwner).map(\.name) == ["Account"])
}
