import Foundation
import Testing
@testable import AppKernelAuth
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The credential store's folder is checked like ssh's `StrictModes` checks a home (sshd_config(5),
/// `StrictModes`): a linked, foreign or open `accounts/` is refused, never followed or chmodded;
/// and two instances of the app on one store lose nothing (its writes hold a `flock(2)` lock).
struct CredentialStoreDataHomeTests {
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("credhome-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false) }
        deinit {
            if let items = FileManager.default.enumerator(atPath: url.path) {
                for case let item as String in items { _ = lchown(url.appendingPathComponent(item).path, geteuid(), getegid()) }
            }
            try? FileManager.default.removeItem(at: url)
        }
        func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }
    }

    func account(_ user: String, org: String = "00DORG") -> UserAccount {
        UserAccount(credentials: Credentials(accessToken: "AT-\(user)", refreshToken: "RT-\(user)", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                             identityURL: URL(string: "https://login.salesforce.com/id/\(org)/\(user)")!, userID: user, orgID: org),
                    loginHost: URL(string: "https://login.salesforce.com")!, clientID: "client")
    }

    func mode(_ url: URL) -> mode_t {
        var status = stat()
        _ = lstat(url.path, &status)
        return status.st_mode & 0o7777
    }

    /// A server that refuses every revocation with 503 (worth retrying: kept pending).
    struct Unavailable: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 503) }
    }

    @Test func aSymlinkedAccountsFolderIsRefusedAndItsTargetUntouched() throws {
        let scratch = try Scratch()
        let victim = scratch.path("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try Data("theirs".utf8).write(to: victim.appendingPathComponent("file"))
        let root = scratch.path("accounts")
        try FileManager.default.createSymbolicLink(at: root, withDestinationURL: victim)
        let store = try FileCredentialStore(testRoot: root, keyHome: scratch.url)
        #expect { try store.save(account("005A")) } throws: { error in
            "\(error)".contains("symbolic link") && "\(error)".contains(root.path)
        }
        #expect(throws: CredentialStoreError.self) { try store.load() }
        #expect(throws: CredentialStoreError.self) { try store.saveCurrentUser(UserAccountIdentity(userID: "005A", orgID: "00DORG")) }
        #expect(mode(victim) == 0o755, "the link's target was not chmodded")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path) == ["file"], "nothing was written through the link")
    }

    @Test func aGroupWritableAccountsFolderIsRefusedWithTheChmodFix() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        #expect(mkdir(root.path, 0o700) == 0 && chmod(root.path, 0o770) == 0)
        let store = try FileCredentialStore(testRoot: root, keyHome: scratch.url)
        #expect { try store.save(account("005A")) } throws: { error in
            (error as? CredentialStoreError)?.dataHome?.problem == .writableByOthers(mode: 0o770) && "\(error)".contains("chmod go-w \(root.path)")
        }
        #expect(mode(root) == 0o770, "refused, not repaired")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }

    @Test func aLinkedUserFolderInsideTheStoreIsReportedNotRead() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        let store = try FileCredentialStore(testRoot: root, keyHome: scratch.url)
        try store.save(account("005A"))
        let elsewhere = scratch.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        try FileManager.default.copyItem(at: root.appendingPathComponent("00DORG/005A/account.sealed"), to: elsewhere.appendingPathComponent("account.sealed"))
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("00DORG/005B"), withDestinationURL: elsewhere)
        let contents = try store.load()
        #expect(contents.accounts.map(\.identity.userID) == ["005A"])
        #expect(contents.problems.map(\.path) == [root.appendingPathComponent("00DORG/005B").path])
        #expect(contents.problems.first?.reason.contains("symbolic link") == true)
        #expect(throws: CredentialStoreError.self) { try store.save(account("005B")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == ["account.sealed"])
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give a folder to another user (uid 65534)"))
    func anAccountsFolderOwnedByAnotherUserIsRefused() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        #expect(mkdir(root.path, 0o700) == 0 && chown(root.path, 65534, 65534) == 0)
        #expect { try FileCredentialStore(testRoot: root, keyHome: scratch.url).save(account("005A")) } throws: { error in
            (error as? CredentialStoreError)?.dataHome?.problem == .foreignOwner(owner: 65534, user: geteuid())
                && "\(error)".contains("owned by uid 65534")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }

    /// Two instances of an app (two managers, two stores, one root) each log a user out while the
    /// server is down: both revocations must stay pending. Before the lock and the
    /// read-modify-write, the second instance wrote its own list over the first's.
    @MainActor @Test func twoInstancesLoggingOutKeepBothPendingRevocations() async throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        let first = try UserAccountManager(store: FileCredentialStore(testRoot: root, keyHome: scratch.url), transport: Unavailable())
        let second = try UserAccountManager(store: FileCredentialStore(testRoot: root, keyHome: scratch.url), transport: Unavailable())
        try first.add(account("005A"))
        try second.add(account("005B"))
        await first.logout(UserAccountIdentity(userID: "005A", orgID: "00DORG"), reason: .userInitiated)
        await second.logout(UserAccountIdentity(userID: "005B", orgID: "00DORG"), reason: .userInitiated)
        let kept = try FileCredentialStore(testRoot: root, keyHome: scratch.url).loadPendingRevocations()
        #expect(Set(kept.map(\.identity.userID)) == ["005A", "005B"], "no instance's revocation was lost")
        #expect(Set(second.pendingRevocations.map(\.identity.userID)) == ["005A", "005B"], "the manager took the store's list")
    }

    /// Store-level interleaving: each instance reads, then both write — the read-modify-write
    /// keeps both additions.
    @Test func interleavedUpdatesOfTwoStoresOnOneRootLoseNothing() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        let first = try FileCredentialStore(testRoot: root, keyHome: scratch.url), second = try FileCredentialStore(testRoot: root, keyHome: scratch.url)
        let revocation = { (user: String) in
            PendingRevocation(identity: UserAccountIdentity(userID: user, orgID: "00DORG"), revokeURL: URL(string: "https://login.salesforce.com/services/oauth2/revoke")!,
                              clientID: "client", tokenTypeHint: .refreshToken, token: "RT-\(user)", failure: .httpStatus(503, body: ""))
        }
        _ = try first.updatePendingRevocations { $0 + [revocation("005A")] }
        _ = try second.updatePendingRevocations { $0 + [revocation("005B")] }
        _ = try first.updatePendingRevocations { $0.map { var kept = $0; kept.attempts += 1; return kept } }
        let kept = try second.loadPendingRevocations()
        #expect(kept.map(\.identity.userID) == ["005A", "005B"])
        #expect(kept.map(\.attempts) == [2, 2])
    }

    /// A change waits for another instance's write; one that outlasts the store's timeout is
    /// refused with nothing written.
    @Test func aWriteWhileAnotherInstanceHoldsTheLockIsRefusedWithNothingWritten() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        let store = try FileCredentialStore(testRoot: root, keyHome: scratch.url, lockTimeout: .milliseconds(20))
        try store.save(account("005A"))
        _ = try FileLock.withExclusiveLock(at: root.appendingPathComponent(".lock")) {
            #expect { try store.save(account("005B")) } throws: { error in "\(error)".contains("stayed locked") }
        }
        #expect(try store.load().accounts.map(\.identity.userID) == ["005A"])
    }

    @Test func aDeleteNeverRemovesAnOrgFolderThatIsNotEmpty() throws {
        let scratch = try Scratch()
        let root = scratch.path("accounts")
        let first = try FileCredentialStore(testRoot: root, keyHome: scratch.url), second = try FileCredentialStore(testRoot: root, keyHome: scratch.url)
        try first.save(account("005A"))
        try second.save(account("005B"))
        try first.delete(UserAccountIdentity(userID: "005A", orgID: "00DORG"))
        #expect(try second.load().accounts.map(\.identity.userID) == ["005B"])
        try second.delete(UserAccountIdentity(userID: "005B", orgID: "00DORG"))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("00DORG").path))
    }
}
