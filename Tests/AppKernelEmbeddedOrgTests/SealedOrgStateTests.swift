import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelREST
import Foundation
import Testing

/// Issue 30, "everything else sealed": the embedded org's state (its records and the refresh
/// tokens of its users) is sealed with the key ring's global data key (purpose `org-state`);
/// before, `org.json` held every token and record in clear. An earlier version's plain
/// `org.json` is read once and rewritten sealed, its bytes overwritten before the unlink; a
/// damaged, truncated, wrong-key, other-purpose or other-owner file is a typed error naming it,
/// and nothing is overwritten.
@MainActor
struct SealedOrgStateTests {
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("orgstate-\(UUID().uuidString)")
        let keyRing: KeyRing
        init() throws {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            keyRing = try KeyRing(directory: url.appendingPathComponent("keys"), provider: .inMemory(SecretKey.random()))
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var folder: URL { url.appendingPathComponent("embedded-org") }
        var sealed: URL { folder.appendingPathComponent(EmbeddedOrg.persistedFileName) }
        var plain: URL { folder.appendingPathComponent(EmbeddedOrg.legacyFileName) }

        /// Every regular file under the scratch folder (the org's folder and the key ring), by path.
        func allFiles() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for case let path as String in FileManager.default.enumerator(atPath: url.path)?.allObjects ?? [] {
                let file = url.appendingPathComponent(path)
                if (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                    files[path] = try Data(contentsOf: file)
                }
            }
            return files
        }

        /// The state as sealed, opened with the global data key: the test's view of the file.
        func opened() throws -> [String: Any] {
            let bytes = try #require(try SealedFile.read(sealed, purpose: EmbeddedOrg.persistedPurpose, owner: KeyRing.globalOwner,
                                                         key: keyRing.dataKey(for: KeyRing.globalOwner)))
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
    }

    /// An org with a canary record and a logged-in user (a refresh token), persisted.
    func persistedOrg(_ scratch: Scratch, canary: String) async throws -> EmbeddedOrg {
        let org = EmbeddedOrg.sample()
        _ = org.insert("Account", ["Name": .string(canary)], orgID: org.users[0].orgID)
        _ = try await org.loggedInClient()
        try org.persist(to: scratch.folder, keyRing: scratch.keyRing)
        return org
    }

    /// A plain `org.json` as the previous version wrote it (pretty, sorted keys).
    func writePlain(_ scratch: Scratch, canary: String, token: String) throws {
        let fields = String(decoding: try JSONSerialization.data(withJSONObject: ["Id": "001LEGACY0000001AAA", "Name": canary]), as: UTF8.self)
        let snapshot: [String: Any] = [
            "nextNumber": 900,
            "records": [["id": "001LEGACY0000001AAA", "type": "Account", "orgID": "00DACME000000001", "isDeleted": false, "fields": fields]],
            "refreshTokens": [token: "005ADA000000001"],
        ]
        try FileManager.default.createDirectory(at: scratch.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try JSONSerialization.data(withJSONObject: snapshot, options: [.prettyPrinted, .sortedKeys]).write(to: scratch.plain)
        chmod(scratch.plain.path, 0o600)
    }

    /// Expects `body` to fail with `expected` and every file of the scratch folder to be as it was.
    func expectRefusedUntouched(_ scratch: Scratch, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation,
                                _ expected: (any Error) -> Bool) throws {
        let before = try scratch.allFiles().filter { !$0.key.hasSuffix(".lock") }
        let error = #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try body() }
        #expect(error.map(expected) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(try scratch.allFiles().filter { !$0.key.hasSuffix(".lock") } == before, "nothing was overwritten", sourceLocation: sourceLocation)
    }

    @Test func noTokenNorRecordIsInClearInAnyFileOfTheFolder() async throws {
        let scratch = try Scratch()
        let canary = "Canary-\(UUID().uuidString)"
        _ = try await persistedOrg(scratch, canary: canary)
        let tokens = try #require(try scratch.opened()["refreshTokens"] as? [String: String])
        #expect(tokens.count == 1, "the logged-in user's refresh token is persisted")
        let secrets = [canary, "Acme Corporation", "005ADA000000001", "refreshTokens"] + Array(tokens.keys)
        let files = try scratch.allFiles()
        #expect(Set(files.keys) == ["embedded-org/org.sealed", "embedded-org/org.lock", "keys/global.key", "keys/keys.lock"])
        for (path, data) in files {
            for secret in secrets { #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in clear in \(path)") }
        }
        let header = try SealedFile.header(of: Array(files["embedded-org/org.sealed"] ?? Data()), path: scratch.sealed.path)
        #expect(header.purpose == "org-state" && header.owner == "global")
    }

    @Test func aRoundTripRestoresRecordsAndTokens() async throws {
        let scratch = try Scratch()
        let canary = "Canary-\(UUID().uuidString)"
        _ = try await persistedOrg(scratch, canary: canary)
        let later = EmbeddedOrg.sample()
        try later.restore(from: scratch.folder, keyRing: scratch.keyRing)
        let client = try await later.loggedInClient()
        let answer = try await client.send(request: client.request(forQuery: "SELECT Name FROM Account WHERE Name = '\(canary)'", apiVersion: nil)).asJSON()
        #expect(answer["totalSize"]?.intValue == 1)
        // The restored org persists what it restored (and the new login) without losing the first's token.
        try later.persist(to: scratch.folder, keyRing: scratch.keyRing)
        #expect((try scratch.opened()["refreshTokens"] as? [String: String])?.count == 2)
    }

    /// The previous version's plain `org.json` is read once, sealed, and shredded: a second name
    /// of its inode (a hard link outside the folder) shows its bytes were overwritten before the
    /// unlink, not just renamed away.
    @Test func aPlainOrgJSONOfThePreviousVersionIsSealedOnceAndShredded() throws {
        let scratch = try Scratch()
        let canary = "Legacy-\(UUID().uuidString)", token = "5AepLegacy-\(UUID().uuidString)"
        try writePlain(scratch, canary: canary, token: token)
        let witness = scratch.url.appendingPathComponent("witness")
        #expect(link(scratch.plain.path, witness.path) == 0)
        let org = EmbeddedOrg.sample()
        try org.restore(from: scratch.folder, keyRing: scratch.keyRing)
        #expect(org.record(withID: "001LEGACY0000001AAA")?["Name"] == .string(canary))
        #expect(!FileManager.default.fileExists(atPath: scratch.plain.path), "org.json unlinked")
        let old = try Data(contentsOf: witness)
        #expect(!old.isEmpty && old.allSatisfy { $0 == 0 }, "its bytes were overwritten with zeros first")
        try FileManager.default.removeItem(at: witness)
        #expect((try scratch.opened()["refreshTokens"] as? [String: String]) == [token: "005ADA000000001"])
        for (path, data) in try scratch.allFiles() {
            #expect(data.range(of: Data(canary.utf8)) == nil && data.range(of: Data(token.utf8)) == nil, "in clear in \(path)")
        }
        let again = EmbeddedOrg.sample()
        try again.restore(from: scratch.folder, keyRing: scratch.keyRing)
        #expect(again.record(withID: "001LEGACY0000001AAA")?["Name"] == .string(canary), "read from the sealed file now")
    }

    /// An app that persists without restoring first (a new instance beside an old data home)
    /// merges over the plain file, then shreds it.
    @Test func aPersistOverAPlainOrgJSONMergesItAndShredsIt() throws {
        let scratch = try Scratch()
        let canary = "Legacy-\(UUID().uuidString)", token = "5AepLegacy-\(UUID().uuidString)"
        try writePlain(scratch, canary: canary, token: token)
        try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing)
        #expect(!FileManager.default.fileExists(atPath: scratch.plain.path))
        let later = EmbeddedOrg.sample()
        try later.restore(from: scratch.folder, keyRing: scratch.keyRing)
        #expect(later.record(withID: "001LEGACY0000001AAA")?["Name"] == .string(canary), "the plain file's record was kept")
        #expect((try scratch.opened()["refreshTokens"] as? [String: String])?[token] != nil, "and its token")
    }

    /// A migration killed after the sealed file was written but before the plain one was
    /// unlinked: the next restore reads the sealed file and finishes the shredding.
    @Test func aPlainFileLeftBesideTheSealedOneIsShreddedAtTheNextRestore() async throws {
        let scratch = try Scratch()
        let canary = "Canary-\(UUID().uuidString)"
        _ = try await persistedOrg(scratch, canary: canary)
        try Data("{\"leftover\": true}".utf8).write(to: scratch.plain)
        try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing)
        #expect(!FileManager.default.fileExists(atPath: scratch.plain.path))
    }

    // MARK: Bad input: each a typed error naming the file; nothing overwritten, nothing restored

    @Test func aBitFlippedStateFileIsDamaged() async throws {
        let scratch = try Scratch()
        _ = try await persistedOrg(scratch, canary: "x")
        var bytes = try Data(contentsOf: scratch.sealed)
        bytes[bytes.count - 20] ^= 0x01
        try bytes.write(to: scratch.sealed)
        let expected = SealedFileError(path: scratch.sealed.path, problem: .damaged)
        let org = EmbeddedOrg.sample()
        try expectRefusedUntouched(scratch, { try org.restore(from: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
        try expectRefusedUntouched(scratch, { try org.persist(to: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
    }

    @Test func aTruncatedStateFileIsTruncated() async throws {
        let scratch = try Scratch()
        _ = try await persistedOrg(scratch, canary: "x")
        try Data(contentsOf: scratch.sealed).prefix(30).write(to: scratch.sealed)
        let expected = SealedFileError(path: scratch.sealed.path, problem: .truncated)
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
    }

    /// Another install's key ring (another master key, another global data key): the key id in
    /// the header does not match.
    @Test func aStateFileSealedWithAnotherKeyIsWrongKey() async throws {
        let scratch = try Scratch()
        _ = try await persistedOrg(scratch, canary: "x")
        let other = try KeyRing(directory: scratch.url.appendingPathComponent("other-keys"), provider: .inMemory(SecretKey.random()))
        _ = try other.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
        let isWrongKey: (any Error) -> Bool = { error in
            guard let error = error as? SealedFileError, case .wrongKey = error.problem else { return false }
            return error.path == scratch.sealed.path
        }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: other) }, isWrongKey)
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: other) }, isWrongKey)
    }

    /// Another sealed secret of the same owner and key (the passcode record, say) copied over the
    /// state file: its purpose does not match.
    @Test func anotherPurposesFileCopiedOverTheStateIsWrongPurpose() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try SealedFile.write(Array("{}".utf8), to: scratch.sealed, purpose: "passcode", owner: KeyRing.globalOwner,
                             key: scratch.keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true))
        let expected = SealedFileError(path: scratch.sealed.path, problem: .wrongPurpose(found: "passcode"))
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
    }

    /// A user's sealed file copied over the org's global state: its owner does not match.
    @Test func aUsersFileCopiedOverTheStateIsWrongOwner() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let user = KeyRing.owner(of: UserAccountIdentity(userID: "005ADA000000001", orgID: "00DACME000000001"))
        try SealedFile.write(Array("{}".utf8), to: scratch.sealed, purpose: EmbeddedOrg.persistedPurpose, owner: user,
                             key: scratch.keyRing.dataKey(for: user, creatingIfMissing: true))
        _ = try scratch.keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
        let expected = SealedFileError(path: scratch.sealed.path, problem: .wrongOwner(found: user))
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
    }

    /// Before, an unreadable `org.json` was moved aside and replaced by what this instance alone
    /// knew; now a state file that is not one is an error naming it, and stays.
    @Test func aStateFileThatIsNotSealedOrAPlainOrgJSONThatDoesNotParseIsRefused() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try Data("{\"nextNumber\": ".utf8).write(to: scratch.plain)
        let isPlainRefused: (any Error) -> Bool = { ($0 as? OrgStateError)?.path == scratch.plain.path }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }, isPlainRefused)
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }, isPlainRefused)
        try FileManager.default.removeItem(at: scratch.plain)
        try Data("not sealed at all".utf8).write(to: scratch.sealed)
        let expected = SealedFileError(path: scratch.sealed.path, problem: .notSealed)
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }) { $0 as? SealedFileError == expected }
    }

    /// The global data key gone while its sealed state is there: a `KeyError`, and no new key
    /// made (it could not open the state, and would orphan it).
    @Test func aMissingGlobalKeyIsAKeyErrorAndNoNewKeyIsMade() async throws {
        let scratch = try Scratch()
        _ = try await persistedOrg(scratch, canary: "x")
        try scratch.keyRing.destroy(owner: KeyRing.globalOwner)
        let isMissing: (any Error) -> Bool = { error in
            guard let error = error as? KeyError, case .missingDataKey(let owner, _) = error.problem else { return false }
            return owner == KeyRing.globalOwner
        }
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }, isMissing)
        try expectRefusedUntouched(scratch, { try EmbeddedOrg.sample().persist(to: scratch.folder, keyRing: scratch.keyRing) }, isMissing)
        #expect(try scratch.keyRing.owners().isEmpty, "no key was created in its place")
    }

    /// Replay (issue 30's scope, stated in DESIGN): an older copy sealed with the same global key
    /// opens — the format holds no counter; once that key is replaced, the copy fails.
    @Test func anOlderCopyUnderTheSameKeyOpensButNotUnderANewKey() async throws {
        let scratch = try Scratch()
        let org = try await persistedOrg(scratch, canary: "Before")
        let older = try Data(contentsOf: scratch.sealed)
        _ = org.insert("Account", ["Name": "After"], orgID: org.users[0].orgID)
        try org.persist(to: scratch.folder, keyRing: scratch.keyRing)
        try older.write(to: scratch.sealed)
        try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing)   // not detected
        try scratch.keyRing.destroy(owner: KeyRing.globalOwner)
        _ = try scratch.keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
        let error = #expect(throws: SealedFileError.self) { try EmbeddedOrg.sample().restore(from: scratch.folder, keyRing: scratch.keyRing) }
        guard case .wrongKey = error?.problem else { Issue.record("not a wrong key: \(String(describing: error))"); return }
    }
}
