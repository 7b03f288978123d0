import Foundation
import Testing
@testable import AppKernelAuth
import AppKernelCore

/// Issue 30, "Sealed at rest": the credential store's files are sealed (Core's `SealedFile`) under
/// the key ring's keys — each user's account with that user's data key, the current user and the
/// pending revocations with the global key; a logout crypto-shreds; the plain files of the
/// previous version are sealed at load. Each bad input is detected, typed and names the file.
struct SealedCredentialStoreTests {
    /// A data home (`<home>/accounts` and `<home>/keys`, as the SDK lays them out), removed at the end.
    final class Home {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-cred-\(UUID().uuidString)")
        let master: SecretKey
        init() throws {
            master = try SecretKey.random()
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var root: URL { url.appendingPathComponent("accounts") }
        func keyRing() throws -> KeyRing { try KeyRing(dataHome: url, provider: .inMemory(master)) }
        func store() throws -> FileCredentialStore { FileCredentialStore(root: root, keyRing: try keyRing()) }
        func accountFile(_ user: String, org: String = "00DORG") -> URL {
            root.appendingPathComponent(org).appendingPathComponent(user).appendingPathComponent(FileCredentialStore.accountFileName)
        }
        /// Every regular file under the home, with its bytes.
        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
            while let file = enumerator?.nextObject() as? URL {
                if try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true { files[file.path] = try Data(contentsOf: file) }
            }
            return files
        }
    }

    static let accessToken = "00DORG!AccessToken-\(UUID().uuidString)"
    static let refreshToken = "5Aep-RefreshToken-\(UUID().uuidString)"

    func account(_ user: String, org: String = "00DORG", token: String = accessToken) -> UserAccount {
        let credentials = Credentials(accessToken: token, refreshToken: Self.refreshToken, instanceURL: URL(string: "https://na1.salesforce.com")!,
                                      identityURL: URL(string: "https://login.salesforce.com/id/\(org)/\(user)")!, userID: user, orgID: org)
        let identity = UserIdentity(userID: user, orgID: org, username: "\(user.lowercased())@sealed.example.com", displayName: "User \(user)", urls: [:])
        return UserAccount(credentials: credentials, userIdentity: identity, loginHost: URL(string: "https://login.salesforce.com")!, clientID: "client")
    }

    func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func identity(_ user: String, org: String = "00DORG") -> UserAccountIdentity { UserAccountIdentity(userID: user, orgID: org) }

    func pending(_ user: String, token: String) -> PendingRevocation {
        PendingRevocation(identity: identity(user), revokeURL: URL(string: "https://login.salesforce.com/services/oauth2/revoke")!, clientID: "client",
                          tokenTypeHint: .refreshToken, token: token, failure: .httpStatus(503, body: ""))
    }

    // MARK: Nothing readable, round trip, wrong master key

    @Test func noTokenOrUsernameIsReadableInAnyFileUnderTheDataHome() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.save(account("005B", org: "00DOTHER"))
        try store.saveCurrentUser(identity("005A"))
        let pendingToken = "PendingToken-\(UUID().uuidString)"
        try store.savePendingRevocations([pending("005GONE", token: pendingToken)])
        let files = try home.snapshot()
        #expect(files.count >= 8, "accounts, current user, revocations, key check, three keys: \(files.keys.sorted())")
        for secret in [Self.accessToken, Self.refreshToken, pendingToken, "005a@sealed.example.com", "005b@sealed.example.com", "User 005A"] {
            for (path, bytes) in files { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is readable in \(path)") }
        }
    }

    @Test func aStoreReopenedWithTheSameKeyRingReadsEverythingBack() throws {
        let home = try Home()
        let first = try home.store()
        try first.save(account("005A"))
        try first.save(account("005B"))
        try first.saveCurrentUser(identity("005B"))
        try first.savePendingRevocations([pending("005GONE", token: "T1")])
        let second = try home.store()
        let contents = try second.load()
        #expect(contents.accounts == [account("005A"), account("005B")])
        #expect(contents.currentUser == identity("005B"))
        #expect(contents.problems.isEmpty)
        #expect(try second.loadPendingRevocations().map(\.identity) == [identity("005GONE")])
    }

    @Test func aWrongMasterKeyIsAKeyErrorAndNothingIsOverwritten() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.saveCurrentUser(identity("005A"))
        let before = try home.snapshot()
        let wrong = try SecretKey.random()
        let error = #expect(throws: KeyError.self) { try KeyRing(dataHome: home.url, provider: .inMemory(wrong)) }
        if case .wrongMasterKey = error?.problem {} else { Issue.record("expected wrongMasterKey, got \(String(describing: error))") }
        #expect(try home.snapshot() == before, "nothing was created or overwritten")
        #expect(try home.store().load().accounts == [account("005A")], "the right key still opens everything")
    }

    // MARK: Bad inputs

    /// Every byte of a sealed account file flipped in turn — header (magic, version, key id,
    /// purpose, owner), nonce, ciphertext and tag — and the file cut at several lengths: each is
    /// detected, typed and names the file; it is moved aside and the other user still loads.
    @Test func everyFlippedOrTruncatedByteOfAnAccountFileIsDetectedTypedAndNamed() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.save(account("005B"))
        let file = home.accountFile("005A")
        let sealed = try Data(contentsOf: file)
        let owner = KeyRing.owner(of: identity("005A"))
        let headerLength = 4 + 1 + 16 + 1 + FileCredentialStore.accountPurpose.utf8.count + 2 + owner.utf8.count
        func problem(after bytes: Data) throws -> SealedFileError.Problem? {
            try bytes.write(to: file)
            let contents = try store.load()
            try? FileManager.default.removeItem(atPath: file.path + ".corrupt-1")
            #expect(contents.accounts.map(\.identity) == [identity("005B")], "the other user is not blocked")
            #expect(contents.problems.count == 1 && contents.problems.first?.path == file.path, "\(contents.problems)")
            #expect(contents.problems.first?.movedTo == file.path + ".corrupt-1")
            return contents.problems.first?.sealedFile?.problem
        }
        for offset in sealed.indices {
            var flipped = sealed
            flipped[offset] ^= 0x80
            let found = try problem(after: flipped)
            let expected: SealedFileError.Problem? = switch offset {
            case 0..<4: .notSealed
            case 4: .unsupportedVersion(sealed[4] ^ 0x80)
            case 5..<21: .wrongKey(found: hex(flipped[5..<21]))
            case 22..<(22 + 7): .wrongPurpose(found: String(decoding: flipped[22..<29], as: UTF8.self))
            case 31..<headerLength: .wrongOwner(found: String(decoding: flipped[31..<headerLength], as: UTF8.self))
            case headerLength...: .damaged
            default: nil   // a length byte: the purpose or owner read is another, or runs off the end
            }
            if let expected {
                #expect(found == expected, "byte \(offset)")
            } else {
                #expect(found != nil, "byte \(offset) (a length)")
            }
        }
        for length in [0, 3, 4, 20, headerLength, headerLength + 12, headerLength + 12 + 15] {
            #expect(try problem(after: sealed.prefix(length)) == .truncated, "cut at \(length)")
        }
        #expect(try problem(after: sealed.dropLast()) == .damaged, "one byte short: the tag no longer verifies")
    }

    @Test func anotherUsersAccountFileCopiedOverIsDetected() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.save(account("005B"))
        try FileManager.default.removeItem(at: home.accountFile("005B"))
        try FileManager.default.copyItem(at: home.accountFile("005A"), to: home.accountFile("005B"))
        let contents = try store.load()
        #expect(contents.accounts.map(\.identity) == [identity("005A")])
        #expect(contents.problems.map(\.path) == [home.accountFile("005B").path])
        #expect(contents.problems.first?.sealedFile?.problem == .wrongOwner(found: KeyRing.owner(of: identity("005A"))))
    }

    @Test func theCurrentUserFileCopiedIntoAnAccountFileIsDetected() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.saveCurrentUser(identity("005A"))
        try FileManager.default.removeItem(at: home.accountFile("005A"))
        try FileManager.default.copyItem(at: home.root.appendingPathComponent(FileCredentialStore.currentUserFileName), to: home.accountFile("005A"))
        let contents = try store.load()
        #expect(contents.accounts.isEmpty && contents.currentUser == nil)
        #expect(contents.problems.map(\.path) == [home.accountFile("005A").path])
        #expect(contents.problems.first?.sealedFile?.problem == .wrongPurpose(found: FileCredentialStore.currentUserPurpose))
    }

    /// A logout destroys the user's key; the next login makes a new one. An old copy of the
    /// account file put back is sealed with the destroyed key: detected.
    @Test func anOldCopyReplayedAfterALogoutAndANewLoginIsDetected() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A", token: "BEFORE-LOGOUT"))
        let old = try Data(contentsOf: home.accountFile("005A"))
        try store.delete(identity("005A"))
        try store.save(account("005A", token: "AFTER-NEW-LOGIN"))
        let newKey = hex(try home.keyRing().dataKey(of: identity("005A")).id)
        try old.write(to: home.accountFile("005A"))
        let contents = try store.load()
        #expect(contents.accounts.isEmpty)
        guard case .wrongKey(let found)? = contents.problems.first?.sealedFile?.problem else {
            Issue.record("expected wrongKey, got \(contents.problems)")
            return
        }
        #expect(found != newKey && contents.problems.first?.path == home.accountFile("005A").path)
    }

    /// NOT detected, by design: an older copy sealed with the same data key (no logout in
    /// between) opens — the sealed-file format holds no counter, and DESIGN says so ("replay of an
    /// older copy under the same key is not detectable"). This test pins that limit down.
    @Test func anOldCopyReplayedUnderTheSameKeyOpensAsDesignSays() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A", token: "FIRST"))
        let old = try Data(contentsOf: home.accountFile("005A"))
        try store.save(account("005A", token: "SECOND"))
        try old.write(to: home.accountFile("005A"))
        let contents = try store.load()
        #expect(contents.accounts.map(\.credentials.accessToken) == ["FIRST"], "the replayed copy opens: same key, no counter")
        #expect(contents.problems.isEmpty)
    }

    // MARK: Crypto-shredding

    @Test func deleteDestroysTheUsersKeyThenTheFiles() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.save(account("005B"))
        let keyFile = home.url.appendingPathComponent("keys/\(KeyRing.owner(of: identity("005A"))).key")
        #expect(FileManager.default.fileExists(atPath: keyFile.path))
        try store.delete(identity("005A"))
        #expect(!FileManager.default.fileExists(atPath: keyFile.path))
        #expect(!FileManager.default.fileExists(atPath: home.accountFile("005A").deletingLastPathComponent().path))
        #expect(try store.load().accounts.map(\.identity) == [identity("005B")])
    }

    /// A crash between the key's destruction and the files' removal (or the SDK destroying the
    /// key itself) leaves the account folder: its bytes open for nobody, and the next load
    /// removes it, without an error.
    @Test func aShreddedUsersLeftoverFolderIsUnreadableAndRemovedAtLoad() throws {
        let home = try Home()
        let store = try home.store()
        try store.save(account("005A"))
        try store.save(account("005B"))
        let leftover = try Data(contentsOf: home.accountFile("005A"))
        let ring = try home.keyRing()
        try ring.destroy(owner: KeyRing.owner(of: identity("005A")))
        let error = #expect(throws: KeyError.self) { try ring.dataKey(of: identity("005A")) }
        if case .missingDataKey = error?.problem {} else { Issue.record("expected missingDataKey, got \(String(describing: error))") }
        #expect(throws: SealedFileError.self, "a new key for the user does not open it either") {
            try SealedFile.open(Array(leftover), purpose: FileCredentialStore.accountPurpose, owner: KeyRing.owner(of: identity("005A")),
                                key: try SecretKey.random(), path: "leftover")
        }
        let contents = try store.load()
        #expect(contents.accounts.map(\.identity) == [identity("005B")])
        #expect(contents.problems.isEmpty, "leftover ciphertext is not an error")
        #expect(!FileManager.default.fileExists(atPath: home.accountFile("005A").deletingLastPathComponent().path))
    }

    /// A key ring from another folder (a misconfigured data home) has none of the users' keys:
    /// nothing is taken for a leftover — not even after that ring has sealed files of its own.
    @Test func aStoreOpenedWithAnotherKeyRingRemovesNothing() throws {
        let home = try Home(), elsewhere = try Home()
        try home.store().save(account("005A"))
        let before = try Data(contentsOf: home.accountFile("005A"))
        let wrong = FileCredentialStore(root: home.root, keyRing: try elsewhere.keyRing())
        var contents = try wrong.load()
        #expect(contents.accounts.isEmpty)
        #expect(contents.problems.map(\.path) == [home.accountFile("005A").path] && contents.problems.first?.movedTo == nil)
        if case .missingDataKey? = contents.problems.first?.key?.problem {} else { Issue.record("expected missingDataKey, got \(contents.problems)") }
        try wrong.save(account("005B"))                  // the wrong ring now holds a global key of its own
        contents = try wrong.load()
        #expect(contents.accounts.map(\.identity) == [identity("005B")])
        #expect(try Data(contentsOf: home.accountFile("005A")) == before, "left as it is")
        #expect(try home.store().load().accounts.map(\.identity) == [identity("005A")], "the right ring still opens it")
    }
}
