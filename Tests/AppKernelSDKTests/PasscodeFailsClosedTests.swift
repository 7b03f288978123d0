import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK

/// Issue 29: the passcode lockout survives relaunch, kill and file damage. Each test attacks the
/// lock the way the issue's findings did (relaunch to reset the count; damage the file to turn
/// the lock off) and expects it to fail closed.
@MainActor
struct PasscodeFailsClosedTests {
    // The issue's acceptance tests, as written (the fixture's names match).
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

    @Test func aRecordWhoseCountWasResetByHandFailsItsAuthenticationCode() async throws {
        let home = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, passcode: "2468")
        #expect(try await app.unlock(with: "0000") == .wrong)
        try app.kill()
        // The attacker's edit: failedAttempts 1 → 0, one byte of the record, the code left as it was.
        var envelope = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: app.passcodeFileURL)) as? [String: Any])
        let encoded = try #require(envelope["record"] as? String)
        let record = try #require(Data(base64Encoded: encoded))
        let edited = String(decoding: record, as: UTF8.self).replacingOccurrences(of: #""failedAttempts":1"#, with: #""failedAttempts":0"#)
        #expect(Data(edited.utf8) != record && Data(edited.utf8).count == record.count, "exactly one byte changed")
        envelope["record"] = Data(edited.utf8).base64EncodedString()
        try JSONSerialization.data(withJSONObject: envelope).write(to: app.passcodeFileURL)
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
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"))
        #expect(try store.loadVerified() == nil)
        try Data("1\n".utf8).write(to: store.markerURL)
        #expect(throws: PasscodeDamage.self) { try store.loadVerified() }
    }

    /// A kill between storing the count and judging the answer (or between the last failure and
    /// the wipe) leaves the count on disk: the next launch starts from it.
    @Test func theCountIsStoredBeforeTheAnswerIsJudged() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"))
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
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"))
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
        #expect(try kind { try Data(good.prefix(good.count / 2)).write(to: store.url) } == .malformed, "truncated by a full disk")
        #expect(try kind { try Data(repeating: 0x41, count: 32).write(to: store.keyURL) } == .notAuthentic, "another key")
        #expect(try kind { try FileManager.default.removeItem(at: store.url) } == .missing)
        #expect(try kind {
            try FileManager.default.removeItem(at: store.url)
            try FileManager.default.createDirectory(at: store.url, withIntermediateDirectories: false)
        } == .notARegularFile)
        #expect(passcode.isSet, "damage is still a lock")
        #expect(!passcode.verify("2468"), "and it does not open")
    }

    @Test func theKeyAndTheRecordAreOwnerOnly() throws {
        let home = try TemporaryDirectory()
        let store = FilePasscodeStore(url: home.url.appendingPathComponent("passcode.json"))
        try PasscodeManager(store: store, iterations: 500).setPasscode("2468")
        for file in [store.url, store.keyURL] {
            let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600, "\(file.lastPathComponent)")
        }
        #expect(try Data(contentsOf: store.keyURL).count == 32)
    }
}
