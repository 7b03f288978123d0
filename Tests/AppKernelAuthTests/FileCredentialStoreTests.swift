import Foundation
import Testing
import AppKernelAuth
import AppKernelCore
import ChildProcess
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct FileCredentialStoreTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")

    func account(_ user: String, org: String = "00DORG", token: String = "SECRET-TOKEN") -> UserAccount {
        UserAccount(credentials: Credentials(accessToken: token, refreshToken: "SECRET-REFRESH", instanceURL: URL(string: "https://na1.salesforce.com")!,
                                             identityURL: URL(string: "https://login.salesforce.com/id/\(org)/\(user)")!, userID: user, orgID: org),
                    loginHost: URL(string: "https://login.salesforce.com")!, clientID: "client")
    }

    func mode(_ url: URL) -> mode_t {
        var info = stat()
        #expect(stat(url.path, &info) == 0, "stat \(url.path)")
        return info.st_mode & 0o777
    }

    @Test func directoriesAre0700AndFiles0600WhateverTheUmask() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let previous = umask(0o022)
        defer { umask(previous) }
        let store = FileCredentialStore(root: root)
        try store.save(account("005A"))
        try store.save(account("005A", token: "SECOND"))
        try store.saveCurrentUser(UserAccountIdentity(userID: "005A", orgID: "00DORG"))
        #expect(mode(root) == 0o700)
        #expect(mode(root.appendingPathComponent("00DORG")) == 0o700)
        #expect(mode(root.appendingPathComponent("00DORG/005A")) == 0o700)
        #expect(mode(root.appendingPathComponent("00DORG/005A/account.json")) == 0o600)
        #expect(mode(root.appendingPathComponent("current-user.json")) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("00DORG/005A").path) == ["account.json"],
                "no temporary file is left behind")
    }

    @Test func accountsRoundTripAndDeleteRemovesEmptyOrgs() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(root: root)
        #expect(try store.load() == CredentialStoreContents())
        try store.save(account("005B"))
        try store.save(account("005A"))
        try store.save(account("005C", org: "00DOTHER"))
        try store.saveCurrentUser(UserAccountIdentity(userID: "005C", orgID: "00DOTHER"))
        let contents = try store.load()
        #expect(contents.accounts.map(\.identity.userID) == ["005A", "005B", "005C"])
        #expect(contents.accounts.first == account("005A"))
        #expect(contents.currentUser?.userID == "005C")
        try store.delete(UserAccountIdentity(userID: "005C", orgID: "00DOTHER"))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("00DOTHER").path))
        #expect(try store.load().currentUser == nil, "a current user without an account is nobody")
        try store.saveCurrentUser(nil)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("current-user.json").path))
    }

    @Test func aCorruptFileIsSetAsideAndReportedNeverDropped() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(root: root)
        try store.save(account("005A"))
        try store.save(account("005B"))
        let broken = root.appendingPathComponent("00DORG/005B/account.json")
        try Data("{\"identity\": {\"userID\": \"005B\"".utf8).write(to: broken)
        let misplaced = root.appendingPathComponent("00DORG/005C")
        try FileManager.default.createDirectory(at: misplaced, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: root.appendingPathComponent("00DORG/005A/account.json"),
                                         to: misplaced.appendingPathComponent("account.json"))
        let contents = try store.load()
        #expect(contents.accounts.map(\.identity.userID) == ["005A"])
        #expect(contents.problems.count == 2)
        #expect(contents.problems[0].path == broken.path)
        #expect(contents.problems[0].reason.hasPrefix("not valid JSON"))
        #expect(contents.problems[0].movedTo == broken.path + ".corrupt-1")
        #expect(contents.problems[1].reason == "it holds the account 00DORG/005A, not 00DORG/005C")
        #expect(FileManager.default.fileExists(atPath: broken.path + ".corrupt-1"), "the bytes are kept")
        #expect(try store.load().problems.isEmpty, "set aside once, not reported forever")
        for problem in contents.problems { #expect(!problem.description.contains("SECRET")) }
    }

    @Test func identitiesThatCannotNameADirectoryAreRefused() {
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(root: root)
        for (user, org) in [("..", "00D"), ("005", "a/b"), ("", "00D"), (".hidden", "00D")] {
            let error = #expect(throws: CredentialStoreError.self) { try store.save(account(user, org: org)) }
            #expect(error?.description.contains("cannot name a directory") == true)
        }
    }

    @Test func theInMemoryStoreBehavesTheSame() throws {
        let store = InMemoryCredentialStore()
        try store.save(account("005B"))
        try store.save(account("005A"))
        try store.save(account("005A", token: "NEW"))
        try store.saveCurrentUser(UserAccountIdentity(userID: "005A", orgID: "00DORG"))
        #expect(try store.load().accounts.map(\.credentials.accessToken) == ["NEW", "SECRET-TOKEN"])
        try store.delete(UserAccountIdentity(userID: "005A", orgID: "00DORG"))
        #expect(try store.load().accounts.count == 1)
    }

    /// A writer process killed at random moments leaves the old or the new file, never a torn
    /// one. Each round waits for the writer's first "wrote" line (the file exists whole), then
    /// kills it after a random 0–6 ms, so kills land inside encoding, writing, syncing and
    /// renaming alike; the store is read once the writer is gone. 40 rounds in CI, 1,000 with
    /// `APPKERNEL_KILL_TESTS=long`.
    ///
    /// The same test runs the writer's broken variant (`--broken`: the file rewritten in place)
    /// to show that it can fail: every kill that left a torn file is counted as caught. The long
    /// mode requires at least one; CI only reports the figures.
    @Test(arguments: [false, true])
    func aWriterKilledMidWriteLeavesAWholeFile(broken: Bool) async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try #require(FileManager.default.isExecutableFile(atPath: ChildProcess.executable("CredentialStoreWriter").path),
                     "build the CredentialStoreWriter helper first")
        var rounds = KillRounds(ci: broken ? 20 : 40)
        var caught = 0
        for round in 1...rounds.count {
            let writer = try ChildProcess(executable: "CredentialStoreWriter", arguments: broken ? [root.path, "--broken"] : [root.path])
            let wrote = await writer.waitUntil(seconds: 30) { lines, status in !lines.isEmpty || status != nil }
            try #require(wrote && writer.status == nil, "round \(round): the writer stopped: \(writer.errors)")
            await KillRounds.pause(microseconds: rounds.next(in: 0...6_000))
            writer.send(SIGKILL)
            let status = await writer.waitForExit(seconds: 30)
            try #require(status == 128 + SIGKILL, "round \(round): the writer exited \(String(describing: status)): \(writer.errors)")
            let damage = try Self.damage(in: root)
            if broken {
                if damage != nil { caught += 1 }
            } else {
                #expect(damage == nil, "round \(round) (seed \(rounds.seed)): \(damage ?? "")")
            }
        }
        if broken {
            rounds.report("CredentialStoreWriter --broken", caught: caught)
            if rounds.isLong { #expect(caught > 0, "the broken writer was never caught in \(rounds.count) kills") }
        }
    }

    /// What is wrong with the store a killed writer left, if anything: a file set aside as
    /// unreadable, a missing account, or a cut identity.
    static func damage(in root: URL) throws -> String? {
        let contents = try FileCredentialStore(root: root).load()
        if !contents.problems.isEmpty { return "\(contents.problems)" }
        guard let stored = contents.accounts.first else { return "the account vanished" }
        guard stored.userIdentity?.urls.count == 4_000 else { return "the identity is cut" }
        guard let version = Int(stored.credentials.accessToken.dropFirst(4)), version >= 1 else { return "no version" }
        return nil
    }
}
