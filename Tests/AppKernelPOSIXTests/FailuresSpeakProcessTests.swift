import Foundation
import ChildProcess
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29, "failures speak": under `ProcessHost`, an SDK launch that failed with no handler is
/// logged at error level and ends the process with exit status 70 (EX_SOFTWARE) — it used to print
/// "launched (active)" and sit there. Single-instance mode refuses a second instance with 75.
@Suite(.serialized)
struct FailuresSpeakProcessTests {
    /// A config folder with no `bootconfig.json`: the SDK's config phase fails.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("failures-speak-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    @Test func aFailedLaunchNobodyHandlesIsLoggedAndEndsTheProcessWith70() async throws {
        let config = try Folder()
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_SDK_CONFIG": config.url.path])
        #expect(await child.waitForExit(seconds: 30) == 70, "stderr: \(child.errors)")
        #expect(child.errors.contains("appkernel: ERROR unhandled error in sdk.launch: the launch phase 'config' failed: "), "\(child.errors)")
        #expect(child.errors.contains("fix the cause and start the app again"), "says what to do: \(child.errors)")
        #expect(child.errors.contains("the process ends with exit status 70"))
        #expect(child.errors.contains("appkernel: ERROR the launch failed (sdk.launch)"))
        #expect(!child.errors.contains("launched ("), "never claims it launched: \(child.errors)")
        #expect(child.lines.suffix(2) == ["app.willTerminate", "host.exit(70)"], "ended gracefully: \(child.lines)")
    }

    @Test func anAppThatOptsToStayUpLogsTheErrorAndRuns() async throws {
        let config = try Folder()
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_SDK_CONFIG": config.url.path, "DEMO_STAY_UP": "1"])
        #expect(await child.waitUntil(seconds: 30) { _, _ in child.errors.contains("launched with 1 unhandled error(s) (active)") }, "\(child.errors)")
        #expect(child.errors.contains("appkernel: ERROR unhandled error in sdk.launch: the launch phase 'config' failed: "))
        #expect(child.errors.contains("the app stays up (ProcessHost.Configuration.exitsOnUnhandledError is false)"))
        #expect(child.status == nil, "still running")
        child.send(SIGTERM)
        #expect(await child.waitForExit(seconds: 30) == 0)
    }

    /// Single-instance mode across two real processes: the second is refused, names the first
    /// and its data home, and exits 75 (EX_TEMPFAIL); the first runs on.
    @Test func aSecondProcessOnTheSameDataHomeIsRefusedWith75() async throws {
        let config = try Folder(), home = try Folder()
        try Data(#"{"remoteAccessConsumerKey": "3MVG9-x", "oauthRedirectURI": "demo://done", "shouldAuthenticate": false}"#.utf8)
            .write(to: config.url.appendingPathComponent("bootconfig.json"))
        let environment = ["DEMO_SDK_CONFIG": config.url.path, "DEMO_SINGLE_INSTANCE": home.url.path]
        let first = try ChildProcess(executable: "ProcessHostDemo", environment: environment)
        #expect(await first.waitUntil(seconds: 30) { _, _ in first.errors.contains("launched (active)") }, "\(first.errors)")
        let second = try ChildProcess(executable: "ProcessHostDemo", environment: environment)
        #expect(await second.waitForExit(seconds: 30) == 75, "stderr: \(second.errors)")
        #expect(second.errors.contains("ERROR unhandled error in sdk.launch: the launch phase 'config' failed: already running as pid \(first.pid) with data home \(home.url.path)"),
                "\(second.errors)")
        #expect(second.errors.contains("quit the other instance first"))
        #expect(first.status == nil, "the first instance runs on")
        first.send(SIGTERM)
        #expect(await first.waitForExit(seconds: 30) == 0)
    }
}
