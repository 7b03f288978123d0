import Foundation
import Testing
import AppKernelAuth
import AppKernelCore
import LoopbackServer

/// Accounts over real loopback logins: several orgs and users, switch, logout, refresh, restart.
@MainActor @Suite(.serialized, .enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
struct UserAccountManagerTests {
    func withManager(_ body: (UserAccountManager, OAuthConfig, URL) async throws -> Void) async throws {
        let server = try await LoopbackOAuthServer.start()
        defer { server.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let config = OAuthConfig(clientID: LoopbackOAuthServer.clientID, redirectURI: URL(string: "test://callback")!,
                                 loginHost: server.baseURL, scopes: ["api", "refresh_token"])
        let manager = try UserAccountManager(store: FileCredentialStore(testRoot: root), transport: URLSessionTransport(timeout: 10))
        try await body(manager, config, root)
    }

    let ada = UserAccountIdentity(userID: "005ADA000000001", orgID: "00DACME00000001")
    let bob = UserAccountIdentity(userID: "005BOB000000002", orgID: "00DACME00000001")
    let cy = UserAccountIdentity(userID: "005CY0000000003", orgID: "00DBETA00000002")

    @Test func severalOrgsAndUsersAtOnce() async throws {
        try await withManager { manager, config, _ in
            var events: [AccountEvent] = []
            let observation = manager.observe { events.append($0) }
            try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            try await manager.logIn(config: config, flow: .userAgent, loginHint: "bob@acme.com", makeCurrent: false)
            try await manager.logIn(config: config, flow: .webServer, loginHint: "cy@beta.com", makeCurrent: false)
            #expect(manager.allAccounts.map(\.identity) == [ada, bob, cy])
            #expect(manager.orgIDs == ["00DACME00000001", "00DBETA00000002"])
            #expect(manager.accounts(inOrg: "00DACME00000001").map(\.identity) == [ada, bob])
            #expect(manager.currentIdentity == ada)
            #expect(manager.currentAccount?.userIdentity?.displayName == "Ada Lovelace")
            // The Mobile SDK's order: the first user becomes current with no switch, then DidLogIn.
            #expect(events == [.didLogin(ada), .didLogin(bob), .didLogin(cy)])
            withExtendedLifetime(observation) {}
        }
    }

    @Test func aLaterUserLoggingInAsCurrentSwitchesThenSaysDidLoginLast() async throws {
        // The Mobile SDK's switchToNewUserAccount: the account is stored, WillSwitch → current
        // set → DidSwitch, and DidLogIn last.
        try await withManager { manager, config, _ in
            try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            var events: [AccountEvent] = []
            var currentAtDidLogin: UserAccountIdentity?
            let observation = manager.observe { event in
                events.append(event)
                if case .didLogin = event { currentAtDidLogin = manager.currentIdentity }
            }
            try await manager.logIn(config: config, flow: .webServer, loginHint: "bob@acme.com")
            #expect(events == [.willSwitch(from: ada, to: bob), .didSwitch(from: ada, to: bob), .didLogin(bob)])
            #expect(currentAtDidLogin == bob, "DidLogIn comes when the new user is current")
            withExtendedLifetime(observation) {}
        }
    }

    @Test func switchingNotifiesFromAndToAndIsANoOpForTheCurrentUser() async throws {
        try await withManager { manager, config, _ in
            try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            try await manager.logIn(config: config, flow: .webServer, loginHint: "cy@beta.com", makeCurrent: false)
            var events: [AccountEvent] = []
            let observation = manager.observe { events.append($0) }
            try manager.switchTo(cy)
            try manager.switchTo(cy)
            #expect(events == [.willSwitch(from: ada, to: cy), .didSwitch(from: ada, to: cy)])
            #expect(manager.currentIdentity == cy)
            #expect(throws: CredentialStoreError.self) {
                try manager.switchTo(UserAccountIdentity(userID: "005NOBODY", orgID: "00DNONE"))
            }
            withExtendedLifetime(observation) {}
        }
    }

    @Test func logoutWipesDeletesRevokesClearsAndNotifiesInOrder() async throws {
        try await withManager { manager, config, root in
            let adaAccount = try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            try await manager.logIn(config: config, flow: .webServer, loginHint: "bob@acme.com", makeCurrent: false)
            var steps: [String] = []
            func file(_ identity: UserAccountIdentity) -> URL {
                root.appendingPathComponent("\(identity.orgID)/\(identity.userID)/\(FileCredentialStore.accountFileName)")
            }
            let adaFile = file(ada)
            let observation = manager.observe { event in
                switch event {
                case .willLogout(let identity, let reason):
                    steps.append("willLogout(\(identity.userID), \(reason))")
                    steps.append("wipe: file still there = \(FileManager.default.fileExists(atPath: file(identity).path))")
                    steps.append("wipe: still current = \(manager.currentIdentity == identity)")
                case .didLogout(let identity, _):
                    steps.append("didLogout(\(identity.userID)), current = \(String(describing: manager.currentIdentity))")
                case .orgDidLogout(let org): steps.append("orgDidLogout(\(org))")
                default: steps.append("\(event)")
                }
            }
            await manager.logout(ada, reason: .userInitiated)
            #expect(steps == ["willLogout(005ADA000000001, userInitiated)", "wipe: file still there = true", "wipe: still current = true",
                              "didLogout(005ADA000000001), current = nil"])
            #expect(!FileManager.default.fileExists(atPath: adaFile.path))
            #expect(manager.failedRevocations.isEmpty)
            // The refresh token is revoked: refreshing the old credentials now fails.
            let tokens = TokenClient(config: config, transport: URLSessionTransport(timeout: 10))
            await #expect(throws: OAuthError.self) { _ = try await tokens.refresh(adaAccount.credentials) }
            steps.removeAll()
            await manager.logout(bob, reason: .tokenExpired)
            #expect(steps == ["willLogout(005BOB000000002, tokenExpired)", "wipe: file still there = true", "wipe: still current = false",
                              "didLogout(005BOB000000002), current = nil", "orgDidLogout(00DACME00000001)"])
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("00DACME00000001").path))
            withExtendedLifetime(observation) {}
        }
    }

    @Test func aFailedRevokeDoesNotBlockTheLogout() async throws {
        try await withManager { manager, config, _ in
            try await manager.logIn(config: config, flow: .webServer, loginHint: "cy@beta.com")   // the server refuses to revoke cy's tokens
            await manager.logout(cy, reason: .userInitiated)
            #expect(manager.allAccounts.isEmpty)
            #expect(manager.currentIdentity == nil)
            #expect(manager.failedRevocations.count == 1)
            if case .httpStatus(503, _)? = manager.failedRevocations.first?.1 {} else {
                Issue.record("expected the server's 503, got \(String(describing: manager.failedRevocations.first?.1))")
            }
        }
    }

    @Test func refreshUpdatesTheStoredAccountAndARevokedTokenLogsOut() async throws {
        try await withManager { manager, config, root in
            let original = try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            let refreshed = try await manager.refreshCredentials(for: ada)
            #expect(refreshed.credentials.accessToken != original.credentials.accessToken)
            #expect(refreshed.credentials.refreshToken == original.credentials.refreshToken)
            let reloaded = try FileCredentialStore(testRoot: root).load()
            #expect(reloaded.accounts.first?.credentials.accessToken == refreshed.credentials.accessToken)
            // Revoke behind the manager's back: the next refresh is refused and logs the user out.
            try await TokenClient(config: config, transport: URLSessionTransport(timeout: 10))
                .revoke(token: try #require(original.credentials.refreshToken))
            var events: [AccountEvent] = []
            let observation = manager.observe { events.append($0) }
            await #expect(throws: OAuthError.self) { try await manager.refreshCredentials(for: ada) }
            #expect(events.first == .willLogout(ada, .tokenExpired))
            #expect(manager.allAccounts.isEmpty)
            withExtendedLifetime(observation) {}
        }
    }

    @Test func accountsAndTheCurrentUserSurviveARestart() async throws {
        try await withManager { manager, config, root in
            try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            try await manager.logIn(config: config, flow: .webServer, loginHint: "cy@beta.com")
            let restarted = try UserAccountManager(store: FileCredentialStore(testRoot: root), transport: URLSessionTransport())
            #expect(restarted.allAccounts.map(\.identity) == [ada, cy])
            #expect(restarted.currentIdentity == cy)
            #expect(restarted.currentAccount?.credentials == manager.currentAccount?.credentials)
            #expect(restarted.loadProblems.isEmpty)
        }
    }

    @Test func logoutAllLogsEveryUserOutAndEveryOrgLeaves() async throws {
        try await withManager { manager, config, root in
            try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            try await manager.logIn(config: config, flow: .webServer, loginHint: "bob@acme.com")
            try await manager.logIn(config: config, flow: .webServer, loginHint: "cy@beta.com")
            var orgs: [String] = []
            var loggedOut: [String] = []
            let observation = manager.observe { event in
                if case .orgDidLogout(let org) = event { orgs.append(org) }
                if case .didLogout(let identity, .appInitiated) = event { loggedOut.append(identity.userID) }
            }
            await manager.logoutAll(reason: .appInitiated)
            #expect(loggedOut == ["005ADA000000001", "005BOB000000002", "005CY0000000003"])
            #expect(orgs == ["00DACME00000001", "00DBETA00000002"])
            #expect(manager.allAccounts.isEmpty)
            #expect(try FileCredentialStore(testRoot: root).load() == CredentialStoreContents())
            withExtendedLifetime(observation) {}
        }
    }

    @Test func accountsPrintWithoutTokens() async throws {
        try await withManager { manager, config, _ in
            let account = try await manager.logIn(config: config, flow: .webServer, loginHint: "ada@acme.com")
            let text = "\(account) \(String(reflecting: account))"
            #expect(!text.contains(account.credentials.accessToken))
            #expect(!text.contains(try #require(account.credentials.refreshToken)))
            #expect(text.contains("ada@acme.com"))
        }
    }
}
