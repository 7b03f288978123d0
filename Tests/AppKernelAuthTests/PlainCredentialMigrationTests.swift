import Foundation
import Testing
@testable import AppKernelAuth
import AppKernelCore

/// The plain files of the previous version (`Fixtures/plain-credentials`: written by
/// FileCredentialStore before issue 30, byte for byte) are sealed at the first load: the sealed
/// copy is written first, then the plain file is overwritten with zeros, `fsync`ed and unlinked —
/// so a load killed midway loses nothing.
struct PlainCredentialMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/plain-credentials")
    static let secrets = ["PLAIN-ACCESS-TOKEN-1234", "PLAIN-REFRESH-TOKEN-5678", "PLAIN-PENDING-TOKEN-9999", "plain-user@example.com"]
    static let plainAccount = "00DPLAIN/005PLAIN/account.json"
    static let plainFiles = [plainAccount, "current-user.json", "pending-revocations.json"]

    /// A data home whose `accounts` folder is a copy of the fixture, `0700` as the old store made it.
    final class Home {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("plain-cred-\(UUID().uuidString)")
        let master: SecretKey
        init() throws {
            master = try SecretKey.random()
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try FileManager.default.copyItem(at: PlainCredentialMigrationTests.fixture, to: root)
            for folder in ["", "00DPLAIN", "00DPLAIN/005PLAIN"] {
                try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root.appendingPathComponent(folder).path)
            }
            for file in PlainCredentialMigrationTests.plainFiles {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: root.appendingPathComponent(file).path)
            }
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var root: URL { url.appendingPathComponent("accounts") }
        func store() throws -> FileCredentialStore { FileCredentialStore(root: root, keyRing: try KeyRing(dataHome: url, provider: .inMemory(master))) }
        func allBytes() throws -> [(String, Data)] {
            var files: [(String, Data)] = []
            let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
            while let file = enumerator?.nextObject() as? URL {
                if try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true { files.append((file.path, try Data(contentsOf: file))) }
            }
            return files
        }
    }

    func expectEverythingRead(_ contents: CredentialStoreContents, pending: [PendingRevocation]) {
        #expect(contents.accounts.map(\.credentials.refreshToken) == ["PLAIN-REFRESH-TOKEN-5678"])
        #expect(contents.accounts.first?.userIdentity?.username == "plain-user@example.com")
        #expect(contents.currentUser == UserAccountIdentity(userID: "005PLAIN", orgID: "00DPLAIN"))
        #expect(contents.problems.isEmpty, "\(contents.problems)")
        #expect(pending.map(\.identity.userID) == ["005GONE"])
    }

    @Test func thePlainFilesOfThePreviousVersionAreSealedAndShreddedAtLoad() throws {
        let home = try Home()
        // A second name for each plain file's inode shows what the shred left in it.
        var links: [URL] = []
        for (number, file) in Self.plainFiles.enumerated() {
            let link = home.url.appendingPathComponent("link-\(number)")
            try FileManager.default.linkItem(at: home.root.appendingPathComponent(file), to: link)
            links.append(link)
        }
        let store = try home.store()
        expectEverythingRead(try store.load(), pending: try store.loadPendingRevocations())
        for file in Self.plainFiles { #expect(!FileManager.default.fileExists(atPath: home.root.appendingPathComponent(file).path), "\(file) unlinked") }
        for link in links {
            let left = try Data(contentsOf: link)
            #expect(!left.isEmpty && left.allSatisfy { $0 == 0 }, "\(link.lastPathComponent): overwritten with zeros before the unlink")
            try FileManager.default.removeItem(at: link)
        }
        for (path, bytes) in try home.allBytes() {
            for secret in Self.secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) readable in \(path)") }
        }
        expectEverythingRead(try home.store().load(), pending: try home.store().loadPendingRevocations())
    }

    /// Killed after the sealed copy was written and before the plain file went: both are there.
    /// The next load reads the sealed copy and shreds the plain one; nothing is lost or reported.
    @Test func aMigrationKilledBeforeThePlainFileWentLosesNothing() throws {
        let home = try Home()
        let plain = try Self.plainFiles.map { ($0, try Data(contentsOf: home.root.appendingPathComponent($0))) }
        let store = try home.store()
        _ = try store.load()
        _ = try store.loadPendingRevocations()
        for (file, bytes) in plain { try bytes.write(to: home.root.appendingPathComponent(file)) }
        expectEverythingRead(try store.load(), pending: try store.loadPendingRevocations())
        for file in Self.plainFiles { #expect(!FileManager.default.fileExists(atPath: home.root.appendingPathComponent(file).path)) }
    }

    /// Killed before the sealed copy was complete (a sealed write is atomic: it is absent): the
    /// plain files are as they were, and the next load migrates them.
    @Test func aMigrationKilledBeforeTheSealedCopyLeavesThePlainFilesToMigrateAgain() throws {
        let home = try Home()
        // A temporary file of a sealed write cut short is all such a kill leaves.
        try Data([0x41, 0x4b]).write(to: home.root.appendingPathComponent("00DPLAIN/005PLAIN/.account.sealed.tmp-cut"))
        let store = try home.store()
        expectEverythingRead(try store.load(), pending: try store.loadPendingRevocations())
    }

    /// A plain file that is damaged is set aside and reported as before, never sealed.
    @Test func aDamagedPlainFileIsSetAsideNotSealed() throws {
        let home = try Home()
        let file = home.root.appendingPathComponent(Self.plainAccount)
        try Data("{\"identity\": {\"userID\": \"005PLAIN\"".utf8).write(to: file)
        let contents = try home.store().load()
        #expect(contents.accounts.isEmpty)
        #expect(contents.problems.map(\.path) == [file.path])
        #expect(contents.problems.first?.reason.hasPrefix("not valid JSON") == true)
        #expect(contents.problems.first?.movedTo == file.path + ".corrupt-1")
        #expect(!FileManager.default.fileExists(atPath: file.deletingLastPathComponent().appendingPathComponent(FileCredentialStore.accountFileName).path))
    }
}
