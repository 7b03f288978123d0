// The README's SDK snippet, run as written, in a SharedScope of its own (SDKManager.shared is the test's).
import AppKernelAuth
import Foundation
import Testing
import AppKernel
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import TestSupport

/// The snippet's `print`, kept out of the test run's output (shown when `APPKERNEL_TEST_FIGURES`
/// is set): the block runs verbatim, its lines go nowhere else.
private func print(_ items: Any...) { figure(items.map { "\($0)" }.joined(separator: " ")) }

/// The README's block, as written; a namespace here so its names stay the README's.
private struct ReadmeSDK {
    final class AppSDKManager: SDKManager {
        override func run(_ phase: LaunchPhase) async throws {
            print("launch phase \(phase)")
            try await super.run(phase)
        }
    }

    /// Sets the SDK up for `app` before it launches; the tokens keep its hooks.
    @MainActor func setUpSDK(for app: Application, resources: URL, accounts: any AccountManaging) throws -> [ListenerToken] {
        try AppSDKManager.initializeSDK()                  // SDKManager.shared is now an AppSDKManager
        let manager = SDKManager.shared
        manager.configDirectory = resources                 // bootconfig.json, userstore.json, usersyncs.json
        manager.accountManager = accounts                   // a UserAccountManager
        var tokens: [ListenerToken] = []                    // a hook lives as long as its token
        manager.hooks.handle(.passcode) { _ in .return }.store(in: &tokens)   // skip a phase's default work
        manager.attach(to: app)                             // launches when the app finishes launching
        return tokens
    }
}

extension SharedManagerTests {
    @Test func readmeSDKExample() async throws { try await inOwnScope {
        let resources = try configDirectory(["bootconfig.json": #"{"remoteAccessConsumerKey": "3MVG9-test", "oauthRedirectURI": "testapp://callback"}"#,
                                             "userstore.json": userstoreJSON, "usersyncs.json": usersyncsJSON])
        defer { try? FileManager.default.removeItem(at: resources) }
        let accounts = FakeAccountManager()
        accounts.add("005A")
        let app = Application(delegate: DefaultApplicationDelegate(), clock: TestClock())

        let tokens = try ReadmeSDK().setUpSDK(for: app, resources: resources, accounts: accounts)
        let manager = SDKManager.shared
        #expect(manager is ReadmeSDK.AppSDKManager)

        try app.handle(.launch(LaunchOptions(), inBackground: false))
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        #expect(manager.lastResult?.flags == [.alreadyAuthenticated], "the passcode phase's default work was skipped")
        #expect(manager.lastResult?.currentUser?.identity.userID == "005A")
        #expect(manager.stores.soups(for: .user(FakeAccountManager.account("005A").identity)).map(\.name) == ["Account"])
        // Issue 31 changed this from `isEmpty`: userstore.json without a dataDirectory is a
        // launch warning now, not silence.
        #expect(app.diagnostics.map(\.kind) == [.settingIgnored])
        try app.handle(.terminate)
        withExtendedLifetime(tokens) {}
    } }
}
