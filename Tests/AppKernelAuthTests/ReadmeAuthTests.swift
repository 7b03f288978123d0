// The README's "Logging in" snippet, run as written against a server with a login form. Only
// the names it leaves to the app are defined here: the app's directory, the master key's
// provider (an in-memory key here, a key file apart from the data in an app), the connected
// app's consumer key and registered callback, and the opener (the app passes `.system`; the
// test plays the browser).
import AppKernelAuth
import AppKernelCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// The snippet's `print`, kept out of the test run's output (shown when `APPKERNEL_TEST_FIGURES`
/// is set): the block runs verbatim, its lines go nowhere else.
private func print(_ items: Any...) { figure(items.map { "\($0)" }.joined(separator: " ")) }

/// The README's block, as written; a namespace here so its names stay the README's.
private struct ReadmeLogin {
    /// Logs a user in with the org's login page, then out. `appSupport`: the app's data folder;
    /// `consumerKey`, `registeredCallback`: its connected app's; `keyProvider`: its master key's.
    @MainActor func logInAndOut(appSupport: URL, consumerKey: String, registeredCallback: URL, keyProvider: KeyProvider,
                                opener: BrowserOpener = .system) async throws -> (UserAccount, UserAccountManager) {
        let hosts = try LoginHostStorage(directory: appSupport)          // production, sandbox, the user's My Domains
        let config = OAuthConfig(clientID: consumerKey, redirectURI: registeredCallback,   // http://localhost:1717/OauthRedirect
                                 loginHost: hosts.selected, scopes: ["api", "refresh_token"])
        let keys = try KeyRing(dataHome: appSupport, provider: keyProvider)  // .keyFile(application: "MyApp"): the master key in ~/.config/MyApp
        let accounts = try UserAccountManager(store: FileCredentialStore(root: appSupport, keyRing: keys), transport: SocketTransport())
        let ada = try await accounts.logIn(config: config, using: .loopback(opener: opener))   // login page in the browser; waits for the redirect
        let watcher = accounts.observe { event in print(event) }         // willSwitch, willLogout (wipe here), revocationFailed, …
        await accounts.logout(ada.identity, reason: .userInitiated)      // delete files, revoke (kept and retried if it fails), notify
        withExtendedLifetime(watcher) {}                                 // observed until here
        return (ada, accounts)
    }
}

@MainActor @Test func readmeLogsInThroughTheLoopbackFlow() async throws {
    let server = try await LoginFormServer.start()
    defer { server.stop() }
    let appSupport = FileManager.default.temporaryDirectory.appendingPathComponent("readme-auth-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: appSupport) }
    let keyProvider = KeyProvider.inMemory(try SecretKey.random())
    let consumerKey = LoginFormServer.clientID
    let probe = try TestHTTPServer.start { _ in .init(status: 200) }
    probe.stop()
    let registeredCallback = URL(string: "http://localhost:\(probe.port)/OauthRedirect")!
    try LoginHostStorage(directory: appSupport).add(name: "Form Org", host: server.baseURL.absoluteString, select: true)
    let opener = server.browser
    let browsing = Task { try await server.playBrowser(submittingLoginFormAt: try await server.nextAuthorizeRequest(), user: "ada", password: "secret") }

    let (ada, accounts) = try await ReadmeLogin().logInAndOut(appSupport: appSupport, consumerKey: consumerKey, registeredCallback: registeredCallback,
                                                               keyProvider: keyProvider, opener: opener)

    #expect(try await browsing.value.status == 200)
    #expect(ada.userIdentity?.username == "ada@example.com")
    #expect(server.revokeRequests.count == 1)
    #expect(accounts.allAccounts.isEmpty)
}
