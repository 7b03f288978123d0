// The AppKernelPOSIX catalog's "Running under systemd" article
// (Sources/AppKernelPOSIX/AppKernelPOSIX.docc/RunningUnderSystemd.md): its `serve()` compiled as
// written (it runs a real process host and exits, so it is not called here: ProcessHostTests run
// one in a child process and send it the signals the article lists), and the defaults it states;
// its `openKeyRing(dataHome:environment:)` as written, run with a credential and with a key file.
import AppKernel
import AppKernelCore
import AppKernelPOSIX
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The master key: systemd's credential `accountsapp.key` when the unit passes one, else the
/// key file `$XDG_CONFIG_HOME/AccountsApp/master.key` (made `0600` on the first run).
func openKeyRing(dataHome: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> KeyRing {
    let provider: KeyProvider
    if let credentials = environment["CREDENTIALS_DIRECTORY"],
       FileManager.default.fileExists(atPath: credentials + "/accountsapp.key") {
        provider = .systemdCredential(named: "accountsapp.key", environment: environment)
    } else {
        provider = try .keyFile(application: "AccountsApp", environment: environment)
    }
    return try KeyRing(dataHome: dataHome, provider: provider)
}

// The app's own delegate and settings reload, as the article shows them.
@MainActor
final class AppDelegate: ApplicationDelegate {}

/// Reads the app's settings again (on SIGHUP).
@MainActor
func reloadSettings() {}

@MainActor
struct RunningUnderSystemdArticle {
    struct Silent: LogHandler { func log(_ level: LogLevel, _ message: String) {} }

    @MainActor
    func serve() async -> Never {
        do {
            let host = try ProcessHost(delegate: AppDelegate())   // reads --open-url, --background, …
            host.onConfigurationChange = { reloadSettings() }     // SIGHUP: between RELOADING=1 and READY=1
            exit(await host.run())                                // 0 once willTerminate has run
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)                                               // a bad flag, as ProcessHost.run(delegate:) answers
        }
    }

    /// The article's signal table is the default mapping.
    @Test func theSignalTableIsTheDefaultMapping() {
        #expect(ProcessHost.defaultSignalActions == [
            SIGTERM: .terminate, SIGINT: .terminate, SIGTSTP: .backgroundAndStop, SIGCONT: .foreground,
            SIGHUP: .reloadConfiguration, SIGUSR1: .memoryWarning,
        ])
        #expect(ProcessHost.Configuration(environment: [:]).terminationDeadline == .seconds(5))
    }

    /// What the snippet's `catch` handles: a bad flag makes the initializer throw, and
    /// `ProcessHost.run(delegate:)` answers 2 for it.
    @Test func aBadFlagIsRefusedWithStatus2() async throws {
        let configuration = ProcessHost.Configuration(signalActions: [:], memoryPressure: nil, arguments: ["--no-such-flag"],
                                                      environment: [:], log: Silent())
        #expect(throws: LaunchArguments.Error.self) { try ProcessHost(delegate: AppDelegate(), configuration: configuration) }
        #expect(await ProcessHost.run(delegate: AppDelegate(), configuration: configuration) == 2)
    }

    /// Every Swift block of the article is in this file as written (indentation aside): the
    /// article shows only code that compiles.
    @Test func everySwiftBlockOfTheArticleIsCompiledHere() throws {
        let here = URL(fileURLWithPath: #filePath)
        let article = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/AppKernelPOSIX/AppKernelPOSIX.docc/RunningUnderSystemd.md")
        let text = try String(contentsOf: article, encoding: .utf8), source = try String(contentsOf: here, encoding: .utf8)
        func lines(_ text: String) -> [String] { text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } }
        let sourceLines = lines(source)
        let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 3)
        for block in blocks {
            // Its path line and imports say where it goes in the user's package (.ci/snippets pastes it so).
            let wanted = lines(block).filter { !$0.hasPrefix("// Sources/") && !$0.hasPrefix("import ") }
                .drop { $0.isEmpty }.map { $0 }
            let found = sourceLines.indices.contains { start in Array(sourceLines[start...].prefix(wanted.count)) == wanted }
            #expect(found, "not compiled here as written:\n\(block)")
        }
    }

    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("systemd-key-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700]) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> URL { url.appendingPathComponent(name) }
    }

    /// The article's `openKeyRing`: under a unit that passes `accountsapp.key` (systemd puts it
    /// in `$CREDENTIALS_DIRECTORY`, mode 0400), the credential is the master key, and nothing is
    /// made in the configuration home.
    @Test func theSnippetUsesTheCredentialWhenTheUnitPassesOne() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("credentials"), withIntermediateDirectories: false)
        let credential = scratch.path("credentials/accountsapp.key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: credential)
        chmod(credential.path, 0o400)
        try FileManager.default.createDirectory(at: scratch.path("data"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let environment = ["CREDENTIALS_DIRECTORY": scratch.path("credentials").path, "XDG_CONFIG_HOME": scratch.path("config").path]
        let ring = try openKeyRing(dataHome: scratch.path("data"), environment: environment)
        #expect(ring.provider.description == "the systemd credential accountsapp.key (\(credential.path))")
        #expect(ring.provider.keyFileURL == nil && !FileManager.default.fileExists(atPath: scratch.path("config").path))
        // Without the credential, the data home's keys (wrapped by it) do not open with a new key file.
        _ = try ring.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
        #expect(throws: KeyError.self) { try openKeyRing(dataHome: scratch.path("data"), environment: ["XDG_CONFIG_HOME": scratch.path("config").path]) }
    }

    /// Elsewhere (a shell, a user unit on systemd 252), the key file under the configuration home.
    @Test func theSnippetFallsBackToTheKeyFile() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("data"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let ring = try openKeyRing(dataHome: scratch.path("data"), environment: ["XDG_CONFIG_HOME": scratch.path("config").path])
        let keyFile = scratch.path("config/AccountsApp/master.key")
        #expect(ring.provider.keyFileURL?.path == keyFile.path)
        var status = stat()
        #expect(stat(keyFile.path, &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_size == 32)
    }
}
