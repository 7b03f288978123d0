// Issue 31: `RestClient.shared` resolves through the current SharedScope — each scope (a test)
// configures and gets its own client; outside any scope, the process's (SharedClientTests).
import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelREST
import Testing

@MainActor
struct ScopedSharedClientTests {
    @Test func eachScopeHasItsOwnSharedClient() async throws {
        let org = EmbeddedOrg.sample()
        let ada = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        let bob = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        try await ada.logIn(config: org.oauthConfig, flow: .webServer, loginHint: "ada@acme.com")
        try await bob.logIn(config: org.oauthConfig, flow: .webServer, loginHint: "bob@beta.com")
        let first = SharedScope(name: "ada"), second = SharedScope(name: "bob"), unconfigured = SharedScope(name: "none")
        defer { first.finish(); second.finish(); unconfigured.finish() }
        first.withValue { RestClient.configureShared(accounts: ada, transport: org) }
        second.withValue { RestClient.configureShared(accounts: bob, transport: org) }
        let adaClient = try #require(first.withValue { RestClient.shared })
        let bobClient = try #require(second.withValue { RestClient.shared })
        #expect(first.withValue { RestClient.shared } === adaClient, "kept in its scope")
        #expect(await adaClient.credentials.orgID != bobClient.credentials.orgID)
        #expect(unconfigured.withValue { RestClient.shared } == nil, "a scope that configured nothing has none")
        first.finish()
        #expect(first.withValue { RestClient.shared } == nil, "a finished scope forgets its client")
    }
}
