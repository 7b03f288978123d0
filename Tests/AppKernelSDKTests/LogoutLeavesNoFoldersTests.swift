import Foundation
import Testing
import AppKernelAuth
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelSDK

/// Issue 35: a logged-out user leaves nothing in the data home — not their files (removed by
/// the logout) and not the empty folders that held them.
@MainActor
struct LogoutLeavesNoFoldersTests {
    @Test func aLogoutRemovesTheUsersEmptyFoldersToo() async throws {
        let home = try TemporaryDirectory()
        let app = try await AccountsFixture.launch(org: EmbeddedOrg.sample(), dataHome: home.url)
        let user = try #require(app.currentUser)
        let userPaths = try Self.tree(home.url).filter { $0.contains(user.identity.userID) || $0.contains(user.identity.orgID) }
        #expect(!userPaths.isEmpty, "the user had folders of their own")
        try await app.logout()
        let left = try Self.tree(home.url).filter { $0.contains(user.identity.userID) }
        #expect(left == [], "nothing of the user's is left: \(left)")
        #expect(!FileManager.default.fileExists(atPath: home.url.appendingPathComponent(user.identity.orgID).path),
                "the org's folder held only this user: it goes too")
        try await app.terminate()
    }

    /// Every path under `root`, relative, folders included.
    static func tree(_ root: URL) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return walker.compactMap { $0 as? String }.sorted()
    }
}
