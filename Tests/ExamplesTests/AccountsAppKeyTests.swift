import AppKernelCore
import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 30: AccountsApp seals its data with a master key kept apart from the data home — the
/// key file `$XDG_CONFIG_HOME/AccountsApp/master.key` (0600, made on the first run), or the
/// systemd credential `accountsapp.key` when its unit passes one (systemd.exec(5),
/// "Credentials"). A missing or wrong key with data present stops the app with the fix, exit 1,
/// and nothing overwritten.
@Suite(.serialized)
struct AccountsAppKeyTests {
    func mode(_ path: String) -> mode_t {
        var status = stat()
        _ = lstat(path, &status)
        return status.st_mode & 0o7777
    }

    /// Every regular file under `root`, by relative path, with its bytes.
    func files(under root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: root.path)?.allObjects ?? [] {
            let file = root.appendingPathComponent(path)
            if (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files[path] = try Data(contentsOf: file) }
        }
        return files
    }

    /// The embedded org's state as the app sealed it, opened with the run's key file.
    func openedOrgState(_ home: TemporaryDataHome) throws -> [String: Any] {
        let dataHome = home.url.appendingPathComponent("AccountsApp")
        let keys = try KeyRing(dataHome: dataHome, provider: .keyFile(in: home.keyFile.deletingLastPathComponent()))
        let bytes = try #require(try SealedFile.read(dataHome.appendingPathComponent("embedded-org/org.sealed"), purpose: "org-state",
                                                     owner: KeyRing.globalOwner, key: keys.dataKey(for: KeyRing.globalOwner)))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func aRunMakesTheKeyFile0600UnderTheConfigHomeAndSaysWhichKeyItUsed() async throws {
        let home = try TemporaryDataHome()
        let child = try await runExample("AccountsApp", environment: home.environment)
        #expect(child.lines.contains { $0.hasSuffix("master key: the key file \(home.keyFile.path)") }, "\(child.lines.prefix(3))")
        #expect(mode(home.keyFile.path) == 0o600)
        #expect(mode(home.keyFile.deletingLastPathComponent().path) == 0o700)
        #expect(try Data(contentsOf: home.keyFile).count == 32)
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.configURL.path) == ["AccountsApp"], "nothing else in the config home")
    }

    /// Every byte of every file the run leaves in the data home: the embedded org's refresh
    /// tokens (read from its sealed state) and the tour's renamed account are not there in clear.
    @Test func theDataHomeHoldsNoTokenNorCanaryInClearAfterARun() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        let tokens = try #require(try openedOrgState(home)["refreshTokens"] as? [String: String])
        #expect(!tokens.isEmpty)
        let secrets = Array(tokens.keys) + ["Acme Corporation (renamed offline)", "refreshTokens"]
        for (path, data) in try files(under: home.url.appendingPathComponent("AccountsApp")) {
            let leaks = secrets.filter { data.range(of: Data($0.utf8)) != nil }
            #expect(leaks.isEmpty, "in clear in \(path): \(leaks)")
        }
    }

    @Test func helpSaysWhereTheDataAndTheKeyLiveAndHowToUseSystemdCredentials() async throws {
        let child = try await runExample("AccountsApp", arguments: ["--help"], status: 0, seconds: 30)
        let text = child.lines.joined(separator: " ").replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        for expected in ["$XDG_DATA_HOME/AccountsApp", "$XDG_CONFIG_HOME/AccountsApp/master.key", "0600", "systemd-creds encrypt",
                         "LoadCredentialEncrypted=accountsapp.key:/etc/credstore.encrypted/accountsapp.key",
                         "$CREDENTIALS_DIRECTORY/accountsapp.key", "a master key missing or wrong"] {
            #expect(text.contains(expected), "\(expected) in --help")
        }
    }

    /// The key file gone while the data is there: before, there was no key to lose; now a new
    /// key would orphan the data, so the app stops, names the key file and the fix, exit 1.
    @Test func aMissingKeyFileWithDataPresentExits1WithTheFixAndTouchesNothing() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        try FileManager.default.removeItem(at: home.keyFile)
        let before = try files(under: home.url)
        let child = try await runExample("AccountsApp", environment: home.environment, status: 1)
        #expect(child.errors.contains("the key file \(home.keyFile.path): the master key \(home.keyFile.path) is missing"), "\(child.errors)")
        #expect(child.errors.contains("Fix: restore the key file \(home.keyFile.path)"), "\(child.errors)")
        #expect(!FileManager.default.fileExists(atPath: home.keyFile.path), "no new key was made")
        #expect(try files(under: home.url) == before, "the data is untouched")
        #expect(!child.lines.contains { $0.contains("launch phase") }, "nothing of the app ran")
    }

    @Test func aWrongKeyFileExits1AndTouchesNothing() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: home.keyFile)
        let before = try files(under: home.url)
        let child = try await runExample("AccountsApp", environment: home.environment, status: 1)
        #expect(child.errors.contains("were wrapped with another master key"), "\(child.errors)")
        #expect(try files(under: home.url) == before, "the data is untouched")
    }

    /// Under a unit with `LoadCredentialEncrypted=accountsapp.key:…`, systemd decrypts the key
    /// into `$CREDENTIALS_DIRECTORY` (read-only, 0400): the app uses it and makes no key file.
    @Test func aSystemdCredentialIsUsedWhenTheUnitPassesOne() async throws {
        let home = try TemporaryDataHome(), credentials = try TemporaryDataHome()
        let credential = credentials.url.appendingPathComponent("accountsapp.key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: credential)
        chmod(credential.path, 0o400)
        let environment = home.environment.merging(["CREDENTIALS_DIRECTORY": credentials.url.path]) { $1 }
        let first = try await runExample("AccountsApp", environment: environment)
        #expect(first.lines.contains { $0.hasSuffix("master key: the systemd credential accountsapp.key (\(credential.path))") }, "\(first.lines.prefix(3))")
        #expect(!FileManager.default.fileExists(atPath: home.keyFile.path), "no key file made")
        let second = try await runExample("AccountsApp", environment: environment)
        #expect(second.lines.contains { $0.contains("launched: [alreadyAuthenticated") }, "the relaunch opens the data with the same credential")
        // Without the credential, the data home's keys do not open with a new key file.
        _ = try await runExample("AccountsApp", environment: home.environment, status: 1)
        #expect(!FileManager.default.fileExists(atPath: home.keyFile.path))
    }

    /// A data home of the previous version (no key folder; the embedded org's state in a plain
    /// `org.json`): the app makes its key, reads the plain file once, seals it and shreds it.
    @Test func aPreviousVersionsPlainOrgStateIsSealedAtTheFirstRun() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        var state = try openedOrgState(home)
        let canary = "Canary-\(UUID().uuidString.prefix(8))"
        // A copy of an account of ada's org (its audit dates with it) under a new id and name.
        var records = try #require(state["records"] as? [[String: Any]])
        var record = try #require(records.first { $0["type"] as? String == "Account" && $0["orgID"] as? String == "00DACME000000001" })
        let text = try #require(record["fields"] as? String)
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        fields["Id"] = "001CANARY000001AAA"
        fields["Name"] = canary
        fields["Industry"] = "Testing"
        record["id"] = "001CANARY000001AAA"
        record["fields"] = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        records.append(record)
        state["records"] = records
        // The previous version's data home: only the org's plain state, no keys, no key file.
        let dataHome = home.url.appendingPathComponent("AccountsApp")
        for item in try FileManager.default.contentsOfDirectory(atPath: dataHome.path) where item != "embedded-org" {
            try FileManager.default.removeItem(at: dataHome.appendingPathComponent(item))
        }
        try FileManager.default.removeItem(at: home.keyFile)
        try FileManager.default.removeItem(at: dataHome.appendingPathComponent("embedded-org/org.sealed"))
        let plain = dataHome.appendingPathComponent("embedded-org/org.json")
        try JSONSerialization.data(withJSONObject: state, options: [.prettyPrinted, .sortedKeys]).write(to: plain)
        chmod(plain.path, 0o600)
        let child = try await runExample("AccountsApp", environment: home.environment)
        #expect(child.lines.contains { $0.hasSuffix("│   \(canary) — Testing") }, "the plain state's records were read")
        #expect(!FileManager.default.fileExists(atPath: plain.path), "the plain file is gone")
        #expect(mode(home.keyFile.path) == 0o600, "a key was made for the home")
        for (path, data) in try files(under: dataHome) where path.hasPrefix("embedded-org/") {
            #expect(data.range(of: Data(canary.utf8)) == nil, "in clear in \(path)")
        }
    }
}
