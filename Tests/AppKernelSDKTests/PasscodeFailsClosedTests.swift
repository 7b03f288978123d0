import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK

/// Issue 29: the passcode lockout survives relaunch, kill and file damage. Each test attacks the
/// lock the way the findings did (relaunch to reset the count; damage the file to turn
/// the lock off) and expects it to fail closed.
@MainActor
struct PasscodeFailsClosedTests {
    // The acceptance tests, as written (the fixture's names match).
    @MainActor @Test func contractLockoutSurvivesRelaunchAndKill() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        for guess in ["0000", "0001", "0002"] { #expect(try await app.unlock(with: guess) == .wrong) }
        try app.kill()
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(app.passcode.failedAttempts == 3)
        #expect(app.passcode.remainingAttempts == app.passcode.maximumAttempts - 3)
        #expect(app.prompts.prompts.last.map { [$0.attempt, $0.remaining] } == [4, 7], "the relaunch's prompt counts on")
    }

    @MainActor @Test func contractDamagedPasscodeFileFailsClosed() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        try await app.terminate()
        try Data("garbage".utf8).write(to: app.passcodeFileURL)
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(app.currentUser == nil)
        #expect(app.lastUserChange?.reason == .passcodeTampered)
        #expect(app.storeFiles.isEmpty)
    }

    /// Relaunches on a data home whose passcode was damaged by `damage`, and expects the app to
    /// have failed closed: nobody's data opened, every user wiped, the reason told, login asked.
    func expectFailsClosed(after damage: (AccountsFixture) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        #expect(!app.storeFiles.isEmpty, "the user has data to protect", sourceLocation: sourceLocation)
        try await app.terminate()
        try damage(app)
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(app.prompts.prompts.isEmpty, "a record that cannot be trusted is not asked for", sourceLocation: sourceLocation)
        #expect(app.currentUser == nil, sourceLocation: sourceLocation)
        #expect(app.manager.accountManager?.allAccounts.isEmpty == true, "every user logged out", sourceLocation: sourceLocation)
        #expect(app.lastUserChange?.reason == .passcodeTampered, sourceLocation: sourceLocation)
        #expect(app.storeFiles.isEmpty, "every user's store wiped", sourceLocation: sourceLocation)
        #expect(app.loginRequested, "back to login", sourceLocation: sourceLocation)
        #expect(!app.passcode.isSet, "the damaged record is gone: the next login starts clean", sourceLocation: sourceLocation)
    }

    @Test func anEmptyPasscodeFileFailsClosed() async throws {
        try await expectFailsClosed { try Data().write(to: $0.passcodeFileURL) }
    }

    @Test func aMissingPasscodeFileWhileItsMarkerSaysOneWasSetFailsClosed() async throws {
        try await expectFailsClosed { app in
            #expect(FileManager.default.fileExists(atPath: app.passcodeMarkerURL.path))
            try FileManager.default.removeItem(at: app.passcodeFileURL)
        }
    }

    @Test func aSymlinkedPasscodeFileFailsClosedEvenToAValidRecord() async throws {
        try await expectFailsClosed { app in
            let elsewhere = app.dataHome.appendingPathComponent("elsewhere.json")
            try FileManager.default.moveItem(at: app.passcodeFileURL, to: elsewhere)
            try FileManager.default.createSymbolicLink(at: app.passcodeFileURL, withDestinationURL: elsewhere)
        }
    }

    // Issue 30 changed the format: the record is sealed (AES-256-GCM under the data home's global
    // key), so the count cannot be edited in place any more — the attacker's edit is a bit of the
    // ciphertext, and it fails the tag as the HMAC'd edit failed its code.
    @Test func aRecordWhoseCountWasResetByHandFailsItsAuthenticationCode() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        #expect(try await app.unlock(with: "0000") == .wrong)
        try app.kill()
        #expect(try SealedPasscodeFile.fields(of: app.passcodeFileURL, home: home.url)["failedAttempts"] as? Int == 1)
        try SealedPasscodeFile.flipACiphertextBit(of: app.passcodeFileURL)
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(app.currentUser == nil)
        #expect(app.lastUserChange?.reason == .passcodeTampered)
        #expect(app.storeFiles.isEmpty)
    }

    @Test func wrongAnswersAcrossThreeLaunchesRunOutAndWipeEveryone() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        #expect(app.passcode.maximumAttempts == 10)
        for guess in ["0000", "0001", "0002"] { #expect(try await app.unlock(with: guess) == .wrong) }
        try app.kill()                                  // killed at the prompt
        app = try await AccountsFixture.launch(dataHome: home.url)
        for guess in ["0003", "0004", "0005", "0006"] { #expect(try await app.unlock(with: guess) == .wrong) }
        try await app.terminate()                       // quit at the prompt
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(app.passcode.remainingAttempts == 3)
        for guess in ["0007", "0008"] { #expect(try await app.unlock(with: guess) == .wrong) }
        #expect(try await app.unlock(with: "0009") == .lockedOut)
        #expect(app.currentUser == nil)
        #expect(app.manager.accountManager?.allAccounts.isEmpty == true)
        #expect(app.lastUserChange?.reason == .passcodeFailures)
        #expect(app.storeFiles.isEmpty)
        #expect(app.loginRequested)
        #expect(!app.passcode.isSet)
    }

    @Test func theRightPasscodeAfterARelaunchUnlocksAndClearsTheCount() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        #expect(try await app.unlock(with: "0000") == .wrong)
        try app.kill()
        app = try await AccountsFixture.launch(dataHome: home.url)
        #expect(try await app.unlock(with: "2468") == .unlocked)
        #expect(app.passcode.failedAttempts == 0)
        #expect(app.currentUser != nil)
        try await app.terminate()
    }

    @Test func aMissingRecordAndMarkerWithNoUsersIsNoPasscode() async throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        #expect(try store.loadVerified() == nil)
        try Data("1\n".utf8).write(to: store.markerURL)
        #expect(throws: PasscodeDamage.self) { try store.loadVerified() }
    }

    /// A kill between storing the count and judging the answer (or between the last failure and
    /// the wipe) leaves the count on disk: the next launch starts from it.
    @Test func theCountIsStoredBeforeTheAnswerIsJudged() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        let passcode = PasscodeManager(store: store, iterations: 500)
        try passcode.setPasscode("2468")
        #expect(!passcode.verify("0000"))
        #expect(try store.loadVerified()?.failedAttempts == 1)
        #expect(PasscodeManager(store: store, iterations: 500).failedAttempts == 1, "a new instance reads it back")
        #expect(passcode.verify("2468"))
        #expect(try store.loadVerified()?.failedAttempts == 0)
    }

    @Test func eachKindOfDamageIsNamed() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        let passcode = PasscodeManager(store: store, iterations: 500)
        try passcode.setPasscode("2468")
        let good = try Data(contentsOf: store.url)
        func kind(after damage: () throws -> Void) throws -> PasscodeDamage.Kind? {
            try good.write(to: store.url)
            try damage()
            do { _ = try store.loadVerified() } catch { return error.kind }
            return nil
        }
        #expect(try kind { try Data().write(to: store.url) } == .empty)
        #expect(try kind { try Data("garbage".utf8).write(to: store.url) } == .malformed)
        // Sealed (issue 30): a cut inside the header is malformed; a cut after it loses the tag,
        // which then fails like any other edit (the AEAD cannot tell the two apart).
        #expect(try kind { try Data(good.prefix(10)).write(to: store.url) } == .malformed, "truncated in its header")
        #expect(try kind { try Data(good.prefix(good.count / 2)).write(to: store.url) } == .notAuthentic, "truncated by a full disk")
        #expect(try kind { try SealedPasscodeFile.flipACiphertextBit(of: store.url) } == .notAuthentic, "edited")
        #expect(try kind { try FileManager.default.removeItem(at: store.url) } == .missing)
        #expect(try kind {
            try FileManager.default.removeItem(at: store.url)
            try FileManager.default.createDirectory(at: store.url, withIntermediateDirectories: false)
        } == .notARegularFile)
        #expect(passcode.isSet, "damage is still a lock")
        #expect(!passcode.verify("2468"), "and it does not open")
    }

    @Test func theRecordIsOwnerOnlyAndSealedWithNoKeyBesideIt() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        try PasscodeManager(store: store, iterations: 500).setPasscode("2468")
        let permissions = try FileManager.default.attributesOfItem(atPath: store.url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(try Data(contentsOf: store.url).starts(with: Data("AKSF".utf8)), "a sealed file")
        #expect(!FileManager.default.fileExists(atPath: store.legacyKeyURL.path), "no HMAC key beside the record any more")
    }

    // MARK: Sealed (issue 30)

    /// The record of another data home (its own global key): the key id does not match.
    @Test func aRecordFromAnotherDataHomesKeyFailsClosed() throws {
        let home = try TemporaryDirectory(), other = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        try PasscodeManager(store: store, iterations: 500).setPasscode("2468")
        let foreign = FilePasscodeStore(url: other.url.appendingPathComponent("passcode.json"),
                                        keyRing: try KeyRing(dataHome: other.url, provider: .inMemory(try SecretKey.random())))
        try PasscodeManager(store: foreign, iterations: 500).setPasscode("0000")
        try FileManager.default.removeItem(at: store.url)
        try FileManager.default.copyItem(at: foreign.url, to: store.url)
        let damage = #expect(throws: PasscodeDamage.self) { try store.loadVerified() }
        #expect(damage?.kind == .notAuthentic)
        #expect(damage?.detail.contains("was sealed with key") == true, "\(String(describing: damage))")
    }

    /// A sealed file of the same data home and owner, but holding another kind of secret.
    @Test func aRecordCopiedFromAnotherPurposeFailsClosed() throws {
        let home = try TemporaryDirectory()
        let ring = try TestKeys.ring(for: home.url)
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: ring)
        try PasscodeManager(store: store, iterations: 500).setPasscode("2468")
        let record = try #require(try store.loadVerified())
        let json = try JSONEncoder().encode(record)
        try SealedFile.write(Array(json), to: store.url, purpose: "key-value", owner: KeyRing.globalOwner,
                             key: ring.dataKey(for: KeyRing.globalOwner))
        let damage = #expect(throws: PasscodeDamage.self) { try store.loadVerified() }
        #expect(damage?.kind == .notAuthentic)
        #expect(damage?.detail.contains("holds a sealed key-value") == true, "\(String(describing: damage))")
    }

    /// Said in the type's documentation: an older copy sealed under the same key opens (no counter).
    @Test func anOlderCopyUnderTheSameKeyIsNotDetected() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        let passcode = PasscodeManager(store: store, iterations: 500)
        try passcode.setPasscode("2468")
        let before = try Data(contentsOf: store.url)
        #expect(!passcode.verify("0000"))
        try before.write(to: store.url)
        #expect(try store.loadVerified()?.failedAttempts == 0, "the replayed copy opens: replay is out of the format's reach")
    }

    /// The previous version's record (plain JSON + HMAC keyed by passcode.key) is read once:
    /// checked, sealed in place, its key file removed.
    @Test func aPreviousVersionsRecordIsCheckedThenSealedOnce() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"), keyRing: try TestKeys.ring(for: home.url))
        let memory = InMemoryPasscodeStore()
        try PasscodeManager(store: memory, iterations: 500).setPasscode("2468")
        let record = try #require(memory.load())
        try writeLegacy(record, store: store, key: Array(repeating: 7, count: 32))
        #expect(try store.loadVerified() == record)
        #expect(try Data(contentsOf: store.url).starts(with: Data("AKSF".utf8)), "sealed on that read")
        #expect(!FileManager.default.fileExists(atPath: store.legacyKeyURL.path), "the old key is gone")
        #expect(try store.loadVerified() == record)

        try writeLegacy(record, store: store, key: Array(repeating: 7, count: 32))
        try Data(repeating: 8, count: 32).write(to: store.legacyKeyURL)   // the code no longer matches
        #expect(throws: PasscodeDamage.self) { try store.loadVerified() }
        #expect(!(try Data(contentsOf: store.url).starts(with: Data("AKSF".utf8))), "a record that fails its code is not sealed")
    }

    /// Writes `record` as the previous version did: `{"version":1,"record":base64,"mac":hex}`.
    private func writeLegacy(_ record: PasscodeRecord, store: FilePasscodeStore, key: [UInt8]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(record)
        let mac = HMACSHA256.authenticationCode(for: Array("AppKernel passcode record v1\0".utf8) + Array(bytes), key: key)
        let envelope: [String: Any] = ["version": 1, "record": bytes.base64EncodedString(), "mac": mac.map { String(format: "%02x", $0) }.joined()]
        try JSONSerialization.data(withJSONObject: envelope).write(to: store.url)
        try Data(key).write(to: store.legacyKeyURL)
        try Data("1\n".utf8).write(to: store.markerURL)
    }
}
