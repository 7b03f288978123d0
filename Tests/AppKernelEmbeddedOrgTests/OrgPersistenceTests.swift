import AppKernelCore
import AppKernelEmbeddedOrg
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The org's state holds refresh tokens: it is sealed, written owner-only from its first byte, a failed write
/// throws, a linked folder is refused, and two instances persisting to one folder lose nothing.
@MainActor
struct OrgPersistenceTests {
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("orgjson-\(UUID().uuidString)")
        /// A key ring of its own (an in-memory master key), beside the org's folder.
        let keyRing: KeyRing
        init() throws {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            keyRing = try KeyRing(directory: url.appendingPathComponent("keys"), provider: .inMemory(SecretKey.random()))
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }
    }

    /// The writer reports the mode of every file as it is created, before its first byte: the
    /// old `Data.write(.atomic)` + chmod made it with the umask's 0644 and narrowed it after.
    @Test func orgJSONIsOwnerOnlyFromItsFirstByte() throws {
        let scratch = try Scratch()
        let created = Locked<[String: UInt32]>([:])
        try PrivateFile.$creationObserver.withValue({ url, mode in created.withLock { $0[url.lastPathComponent] = mode } }) {
            try EmbeddedOrg.sample().persist(to: scratch.path("embedded-org"), keyRing: scratch.keyRing)
        }
        #expect(created.withLock { $0 } == ["org.sealed": 0o600, "global.key": 0o600])
        var status = stat()
        #expect(stat(scratch.path("embedded-org/org.sealed").path, &status) == 0 && status.st_mode & 0o7777 == 0o600)
        #expect(stat(scratch.path("embedded-org").path, &status) == 0 && status.st_mode & 0o7777 == 0o700)
    }

    @Test func aFailedWriteThrowsATypedError() throws {
        let scratch = try Scratch()
        try Data("not a folder".utf8).write(to: scratch.path("embedded-org"))
        #expect(throws: DataHomeError(path: scratch.path("embedded-org").path, problem: .notADirectory)) {
            try EmbeddedOrg.sample().persist(to: scratch.path("embedded-org"), keyRing: scratch.keyRing)
        }
    }

    @Test func aLinkedFolderIsRefusedAndNotWrittenThrough() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("victim"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: scratch.path("embedded-org"), withDestinationURL: scratch.path("victim"))
        #expect(throws: DataHomeError(path: scratch.path("embedded-org").path, problem: .symbolicLink(target: scratch.path("victim").path))) {
            try EmbeddedOrg.sample().persist(to: scratch.path("embedded-org"), keyRing: scratch.keyRing)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("victim").path).isEmpty)
    }

    /// Two instances of an app restore the same org, each logs a user in and edits a different
    /// record, then both persist at exit: the later write used to replace the earlier one whole
    /// (its refresh token gone, its edit undone). Now each persist merges under a lock.
    @Test func twoInstancesPersistingToOneFolderLoseNothing() async throws {
        let scratch = try Scratch()
        let folder = scratch.path("embedded-org")
        let seed = EmbeddedOrg.sample()
        let orgID = seed.users[0].orgID
        let one = seed.insert("Account", ["Name": "One"], orgID: orgID)
        let two = seed.insert("Account", ["Name": "Two"], orgID: orgID)
        try seed.persist(to: folder, keyRing: scratch.keyRing)
        let first = EmbeddedOrg.sample(), second = EmbeddedOrg.sample()
        try first.restore(from: folder, keyRing: scratch.keyRing)
        try second.restore(from: folder, keyRing: scratch.keyRing)
        _ = try await first.loggedInClient()
        _ = try await second.loggedInClient()
        try first.update(recordID: one, fields: ["Name": "One, edited by the first"])
        try second.update(recordID: two, fields: ["Name": "Two, edited by the second"])
        try first.persist(to: folder, keyRing: scratch.keyRing)
        try second.persist(to: folder, keyRing: scratch.keyRing)
        let later = EmbeddedOrg.sample()
        try later.restore(from: folder, keyRing: scratch.keyRing)
        #expect(later.record(withID: one)?["Name"] == "One, edited by the first")
        #expect(later.record(withID: two)?["Name"] == "Two, edited by the second")
        let sealed = try #require(try SealedFile.read(folder.appendingPathComponent(EmbeddedOrg.persistedFileName), purpose: EmbeddedOrg.persistedPurpose,
                                                      owner: KeyRing.globalOwner, key: scratch.keyRing.dataKey(for: KeyRing.globalOwner)))
        let stored = try JSONSerialization.jsonObject(with: Data(sealed)) as? [String: Any]
        #expect((stored?["refreshTokens"] as? [String: String])?.count == 2, "both instances' users stay logged in")
    }
}
