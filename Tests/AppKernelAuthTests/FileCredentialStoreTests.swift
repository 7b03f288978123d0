import Foundation
import Testing
import AppKernelAuth
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

    /// A writer process killed at arbitrary moments leaves the old or the new file, never a torn
    /// one. Each round waits for the first complete write, then kills the writer after a random
    /// 0–6 ms (crash timing is wall-clock by nature), so kills land inside encoding, writing,
    /// syncing and renaming alike.
    @Test func aWriterKilledMidWriteLeavesAWholeFile() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("CredentialStoreWriter")
        let writerPath = FileManager.default.fileExists(atPath: writer.path) ? writer
            : Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("CredentialStoreWriter")
        try #require(FileManager.default.isExecutableFile(atPath: writerPath.path), "build the CredentialStoreWriter helper first")
        var lastVersion = 0
        for round in 1...40 {
            let process = Process()
            process.executableURL = writerPath
            process.arguments = [root.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let firstWrite = await Self.readUntil(output, writes: 1)
            #expect(firstWrite >= 1)
            let pid = process.processIdentifier
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...6_000))) {
                    kill(pid, SIGKILL)
                    done.resume()
                }
            }
            try? output.fileHandleForReading.close()
            let contents = try FileCredentialStore(root: root).load()
            #expect(contents.problems.isEmpty, "round \(round): \(contents.problems)")
            let stored = try #require(contents.accounts.first, "round \(round): the account vanished")
            #expect(stored.userIdentity?.urls.count == 4_000, "round \(round): the file is whole")
            let version = try #require(Int(stored.credentials.accessToken.dropFirst(4)))
            #expect(version >= 1)
            lastVersion = version
        }
        #expect(lastVersion >= 1)
    }

    /// Reads the writer's "wrote N" lines until N ≥ `writes`; returns the last N read.
    static func readUntil(_ pipe: Pipe, writes: Int) async -> Int {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var last = 0
                var line = Data()
                while last < writes, let chunk = try? pipe.fileHandleForReading.read(upToCount: 1), let byte = chunk.first {
                    if byte == UInt8(ascii: "\n") {
                        last = Int(String(decoding: line, as: UTF8.self).dropFirst("wrote ".count)) ?? last
                        line.removeAll()
                    } else {
                        line.append(byte)
                    }
                }
                continuation.resume(returning: last)
            }
        }
    }
}
