import Foundation
import LoopbackServer

/// The loopback OAuth server of these tests: `Fixtures/oauth_server.py`.
enum LoopbackOAuthServer {
    static let clientID = "3MVG9-loopback"

    static func start() async throws -> PythonServer {
        try await PythonServer.start(script: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/oauth_server.py"))
    }
}
