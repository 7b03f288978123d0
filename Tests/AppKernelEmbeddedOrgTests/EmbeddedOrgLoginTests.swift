import Foundation
import Testing
import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelTesting

/// The embedded org's device and client-credentials grants, its login history, and the
/// User-Agent on REST requests. Sources: Salesforce Help "OAuth 2.0 Device Flow for IoT
/// Integration" (the token endpoint's `response_type=device_code`, then `grant_type=device`
/// with `code`; `authorization_pending` until the user allows); "OAuth 2.0 Client Credentials
/// Flow for Server-to-Server Integration" (no refresh token); "Login History" (its Browser and
/// Platform columns, `Unknown` for a request without an agent it knows — the iOS SDK's #3166);
/// SalesforceMobileSDK-iOS `SFNetwork.m` (the agent on every REST request).
@MainActor @Suite struct EmbeddedOrgLoginTests {
    /// A transport that records every request's User-Agent on its way to the org.
    final class Recording: HTTPTransport {
        let org: EmbeddedOrg
        let seen = Locked<[(path: String, agent: String?)]>([])
        init(_ org: EmbeddedOrg) { self.org = org }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            seen.withLock { $0.append((request.url.path, request.headers["User-Agent"])) }
            return try await org.send(request)
        }
    }

    static let agent = UserAgent(sdkVersion: "13.2.0", osName: "Linux", osVersion: "6.8.0", model: "x86_64", appName: "Accounts",
                                 appVersion: "1.2(7)", appType: .native, deviceID: "0A1B")

    @Test func aDeviceLoginInSalesforcesFormOnAVirtualClock() async throws {
        let org = EmbeddedOrg.sample()
        let clock = TestClock()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        let login = Task {
            try await accounts.logIn(config: org.oauthConfig, using: .deviceFlow(presenter: DeviceCodePresenter { _ in }, clock: clock))
        }
        try await clock.waitForSleepers(1)
        let userCode = try #require(org.pendingDeviceUserCodes.first)
        await clock.advance(by: .seconds(5))               // a poll: authorization_pending
        try await clock.waitForSleepers(1)
        #expect(org.approveDevice(userCode: userCode, username: "ada@acme.com"))
        await clock.advance(by: .seconds(5))               // the next poll gets the tokens
        let account = try await login.value
        #expect(account.userIdentity?.username == "ada@acme.com")
        #expect(account.credentials.refreshToken != nil)
        #expect(org.loginHistory.map(\.grant) == ["device"])
        #expect(org.pendingDeviceUserCodes.isEmpty)
    }

    @Test func aDeniedDeviceLoginEndsWithAccessDenied() async throws {
        let org = EmbeddedOrg.sample()
        let clock = TestClock()
        let session = LoginSession(config: org.oauthConfig, transport: org)
        let login = Task { try await session.logIn(using: .deviceFlow(presenter: DeviceCodePresenter { _ in }, clock: clock)) }
        try await clock.waitForSleepers(1)
        #expect(org.approveDevice(userCode: try #require(org.pendingDeviceUserCodes.first), username: "ada@acme.com", deny: true))
        await clock.advance(by: .seconds(5))
        do {
            _ = try await login.value
            Issue.record("the login succeeded")
        } catch let error as LoginError {
            #expect(error.step == .devicePolling)
            if case .serverError(code: "access_denied", _, _) = error.error {} else { Issue.record("\(error)") }
        }
    }

    @Test func theClientCredentialsGrantIssuesATokenForTheIntegrationUser() async throws {
        let org = EmbeddedOrg.sample()
        #expect(org.enableClientCredentials(consumerSecret: "s3cret", runAs: "ada@acme.com"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("org-creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("s3cret\n".utf8).write(to: directory.appendingPathComponent("sf"))
        let recording = Recording(org)
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: recording)
        accounts.userAgent = Self.agent
        let secret = ClientSecret.systemdCredential(named: "sf", environment: ["CREDENTIALS_DIRECTORY": directory.path])
        let account = try await accounts.logIn(config: org.oauthConfig, using: .clientCredentials(secret: secret))
        #expect(account.credentials.refreshToken == nil)
        #expect(account.userIdentity?.username == "ada@acme.com")
        let renewed = try await accounts.refreshCredentials(for: account.identity)
        #expect(renewed.credentials.accessToken != account.credentials.accessToken, "a new login in place of a refresh")
        #expect(org.loginHistory.map(\.grant) == ["client_credentials", "client_credentials"])

        // The REST client of the current user carries the same agent.
        let client = try #require(RestClient.forCurrentUser(of: accounts, transport: recording))
        _ = try await client.send(request: client.request(forQuery: "SELECT Id FROM Account", apiVersion: nil))
        let seen = recording.seen.withLock { $0 }
        #expect(seen.contains { $0.path.hasSuffix("/query") })
        #expect(seen.allSatisfy { $0.agent == Self.agent.string() }, "\(seen)")
    }

    @Test func theLoginHistoryShowsTheSDKsAgent() async throws {
        let org = EmbeddedOrg.sample()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org)
        accounts.userAgent = Self.agent
        _ = try await accounts.logIn(config: org.oauthConfig, using: .autoApprove())
        _ = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer, loginHint: nil)
        let history = org.loginHistory
        #expect(history.count == 2)
        #expect(history[0].browser == "Salesforce Mobile SDK" && history[0].platform == "Linux 6.8.0")
        #expect(history[0].userAgent == Self.agent.string())
        #expect(history[1].browser == "Unknown", "a request with no agent: what issue #3166 saw")
    }

    @Test func theGrantIsRefusedWithTheWrongSecretOrWhenOff() async throws {
        let org = EmbeddedOrg.sample()
        let form = { (secret: String) in
            HTTPRequest.form(org.oauthConfig.tokenURL, [("grant_type", "client_credentials"), ("client_id", org.clientID), ("client_secret", secret)])
        }
        #expect(try await org.send(form("s3cret")).text.contains("invalid_grant"), "off until enabled")
        org.enableClientCredentials(consumerSecret: "s3cret", runAs: "ada@acme.com")
        let wrong = try await org.send(form("guess"))
        #expect(wrong.status == 400 && wrong.text.contains("invalid_client"))
    }
}
