import Foundation
import Testing
import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelSDK
import AppKernelEmbeddedOrg

/// The SDK manager's User-Agent: app name, version and type from its configuration, on the
/// login's requests and the current user's REST requests. Source: SalesforceMobileSDK-iOS
/// `SalesforceSDKManager.m` (`defaultUserAgentString`, `appType`, `getAppTypeAsString`) and
/// `SFNetwork.m` (the agent set on every request).
@MainActor @Suite struct SDKUserAgentTests {
    /// A transport that records every request's User-Agent on its way to the org.
    final class Recording: HTTPTransport {
        let org: EmbeddedOrg
        let agents = Locked<[String?]>([])
        init(_ org: EmbeddedOrg) { self.org = org }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            agents.withLock { $0.append(request.headers["User-Agent"]) }
            return try await org.send(request)
        }
    }

    @Test func theManagersAppNameVersionAndTypeReachEveryRequest() async throws {
        let org = EmbeddedOrg.sample()
        let recording = Recording(org)
        var boot = BootConfig(remoteAccessConsumerKey: org.clientID, oauthRedirectURI: org.redirectURI.absoluteString,
                              oauthScopes: ["api", "refresh_token"], loginHost: org.baseURL.absoluteString)
        boot.hybrid = BootConfig.HybridSettings()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: recording)
        let manager = SDKManager(bootConfig: boot, accountManager: accounts)
        manager.appName = "Accounts"
        manager.appVersion = "1.2(7)"
        manager.transport = recording
        #expect(manager.userAgent.appType == .hybrid, "a boot config with hybrid settings: a hybrid app, as iOS decides by its classes")
        manager.accountManager = accounts                       // observing it hands it the agent
        #expect(accounts.userAgent == manager.userAgent)
        _ = try await accounts.logIn(config: boot.oauthConfig, using: .autoApprove())
        let client = try #require(manager.restClientForCurrentUser())
        _ = try await client.send(request: client.request(forQuery: "SELECT Id FROM Account", apiVersion: nil))
        let agents = recording.agents.withLock { $0 }
        #expect(agents.count >= 4, "authorize, token, identity, query")
        #expect(agents.allSatisfy { $0 == manager.userAgent.string() }, "\(agents)")
        #expect(manager.userAgent.string().contains(" Accounts/1.2(7) Hybrid uid_"))
        manager.appType = .nativeSwift
        #expect(manager.userAgent.string().contains(" NativeSwift uid_"))
    }
}
