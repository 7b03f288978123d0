import Foundation
import Testing
import AppKernelAuth
import LoopbackServer

/// Token and identity answers are bounded by `OAuthConfig.maximumResponseBytes` (1 MiB), over the
/// default transport against hostile loopback servers (issue 29: "1 MB token/identity").
@Suite struct OAuthResponseLimitTests {
    func config(_ server: HostileServer) -> OAuthConfig {
        OAuthConfig(clientID: "3MVG9-limit", redirectURI: URL(string: "test://callback")!, loginHost: server.url)
    }

    func credentials(_ server: HostileServer) -> Credentials {
        Credentials(accessToken: "A", refreshToken: "R", instanceURL: server.url,
                    identityURL: server.url.appendingPathComponent("id/00D000000000001/005000000000001"),
                    userID: "005000000000001", orgID: "00D000000000001")
    }

    @Test func aTokenAnswerOverOneMebibyteIsRefused() async throws {
        let server = try await HostileServer.start(.unannounced(bytes: 4 << 20))
        defer { server.stop() }
        let error = await #expect(throws: OAuthError.self) { _ = try await TokenClient(config: config(server)).refresh(credentials(server)) }
        guard case .responseTooLarge(let refused)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(refused.limit == 1 << 20)
        #expect(refused.setting == "OAuthConfig.maximumResponseBytes")
        #expect(refused.url.path == "/services/oauth2/token")
        #expect("\(refused)".contains("1 MiB"))
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
    }

    @Test func anIdentityAnswerOverItsLimitIsRefused() async throws {
        let server = try await HostileServer.start(.endlessChunked)
        defer { server.stop() }
        var settings = config(server)
        settings.maximumResponseBytes = 64 << 10
        let error = await #expect(throws: OAuthError.self) {
            _ = try await LoginSession(config: settings).identity(for: credentials(server))
        }
        guard case .responseTooLarge(let refused)? = error, case .received(let count) = refused.evidence else {
            Issue.record("\(String(describing: error))"); return
        }
        #expect(refused.limit == 64 << 10 && count > 64 << 10)
    }

    @Test func aCompressedTokenAnswerIsRefusedUnread() async throws {
        let server = try await HostileServer.start(.gzipBomb(expandedBytes: 1 << 30))
        defer { server.stop() }
        let error = await #expect(throws: OAuthError.self) { _ = try await TokenClient(config: config(server)).refresh(credentials(server)) }
        guard case .transport(let reason)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("content coding 'gzip'"), "\(reason)")
    }

    @Test func anAnnouncedOversizedRevokeAnswerIsRefusedBeforeReading() async throws {
        let server = try await HostileServer.start(.body(bytes: 8 << 20))
        defer { server.stop() }
        let error = await #expect(throws: OAuthError.self) { try await TokenClient(config: config(server)).revoke(token: "R") }
        #expect(error == .responseTooLarge(ResponseTooLarge(method: "POST", url: config(server).revokeURL, limit: 1 << 20,
                                                            setting: "OAuthConfig.maximumResponseBytes", evidence: .announced(8 << 20))))
    }
}
