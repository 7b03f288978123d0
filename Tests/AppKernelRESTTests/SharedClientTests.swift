import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelTesting

/// The shared client for the current user refreshes through the account manager, so a refused
/// refresh token logs the user out.
@MainActor
struct CurrentUserClientTests {
    @Test func invalidGrantLogsTheUserOutThroughTheAccountManager() async throws {
        let org = EmbeddedOrg.sample()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        let account = try await accounts.logIn(config: org.oauthConfig, flow: .webServer)
        let client = try #require(RestClient.forCurrentUser(of: accounts, transport: org))
        #expect(try await client.send(request: client.requestForLimits(apiVersion: nil)).status == 200)
        org.expireAccessTokens()
        #expect(try await client.send(request: client.requestForLimits(apiVersion: nil)).status == 200, "refreshed through the manager")
        #expect(accounts.currentAccount?.credentials.accessToken == (await client.credentials.accessToken), "the manager stored the new token")
        var events: [AccountEvent] = []
        let observation = accounts.observe { events.append($0) }
        try await TokenClient(config: org.oauthConfig, transport: org).revoke(token: try #require(account.credentials.refreshToken))
        org.expireAccessTokens()
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
        guard case .apiFailed(_, let underlying as OAuthError, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(underlying == .serverError(code: "invalid_grant", description: "expired access/refresh token"))
        #expect(events.first == .willLogout(account.identity, .tokenExpired))
        #expect(accounts.allAccounts.isEmpty)
        #expect(RestClient.forCurrentUser(of: accounts, transport: org) == nil, "nobody is logged in")
        withExtendedLifetime(observation) {}
    }
}

/// The client against a real login: without a refresher an expired token is the server's 401;
/// the shared client follows the account manager's current user.
@MainActor
struct RestClientSessionTests {
    @Test func anExpiredTokenWithoutARefresherIsInvalidSessionID() async throws {
        let org = EmbeddedOrg.sample()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer)
        let client = RestClient(credentials: credentials, transport: org)
        org.expireAccessTokens()
        let error = await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
        #expect(error?.statusCode == 401)
        #expect(error?.serverErrors.first?.errorCode == "INVALID_SESSION_ID")
    }

    @Test func theSharedClientFollowsTheCurrentUser() async throws {
        let org = EmbeddedOrg.sample()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        RestClient.configureShared(accounts: accounts, transport: org)
        #expect(RestClient.shared == nil, "nobody is logged in")
        try await accounts.logIn(config: org.oauthConfig, flow: .webServer, loginHint: "ada@acme.com")
        let adaClient = try #require(RestClient.shared)
        #expect(RestClient.shared === adaClient, "kept for the same user")
        try await accounts.logIn(config: org.oauthConfig, flow: .webServer, loginHint: "bob@beta.com")
        let bobClient = try #require(RestClient.shared)
        #expect(bobClient !== adaClient)
        #expect(await bobClient.credentials.orgID == "00DBETA000000002")
    }
}
