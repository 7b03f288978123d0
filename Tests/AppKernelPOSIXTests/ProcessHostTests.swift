import Foundation
import ChildProcess
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The process host in a real child process, driven by real signals.
@Suite(.serialized)
struct ProcessHostSignalTests {
    static let launched = ["scene.willConnect", "scene.willEnterForeground", "scene.didBecomeActive"]

    @Test func sigtermTerminatesInUIKitsOrderAndExitsZero() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", arguments: ["--open-url", "demo://item/7"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        #expect(child.lines == ["app.didFinishLaunching(demo://item/7)"] + Self.launched
                + ["scene.willResignActive", "scene.didEnterBackground", "scene.didDisconnect", "app.willTerminate", "host.exit(0)"])
    }

    @Test func theReadmesMainRunsTheAppUntilSIGTERM() async throws {
        let child = try ChildProcess(executable: "ReadmeServer")
        #expect(await child.waitForLine("server.didFinishLaunching"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        #expect(child.lines == ["server.didFinishLaunching", "server.willTerminate"])
    }

    @Test func aHungWillTerminateIsForcedOutAtTheDeadlineSayingWhatRan() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_HANG_ON_TERMINATE": "1", "APPKERNEL_TERMINATION_DEADLINE_MS": "300"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        let start = ContinuousClock.now
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 1)
        // The message below proves the deadline path ran; the bound only tells a forced exit
        // from a hang (the default deadline is 5 s, a hang is forever). It is read from when the
        // child was reaped, not from when this task resumed, which a loaded machine delays.
        #expect(try #require(child.exited) - start < .seconds(30))
        #expect(child.lines.last == "app.willTerminate")
        #expect(child.errors.contains("forced exit after the termination deadline of 0.3 seconds; still running: app.willTerminate"))
    }

    @Test func aSecondSIGINTForcesTheExitAtOnce() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_HANG_ON_TERMINATE": "1", "APPKERNEL_TERMINATION_DEADLINE_MS": "60000"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        child.send(SIGINT)
        #expect(await child.waitForLine("app.willTerminate"))
        child.send(SIGINT)
        #expect(await child.waitForExit(seconds: 10) == 1)
        #expect(child.errors.contains("forced exit after a second SIGINT; still running: app.willTerminate"))
    }

    @Test func usr1TstpContAndHupMapToTheLifecycle() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo")
        #expect(await child.waitForLine("scene.didBecomeActive"))
        child.send(SIGUSR1)
        #expect(await child.waitForLine("app.memoryWarning"))
        child.send(SIGTSTP)
        #expect(await child.waitForLine("scene.didEnterBackground"))
        #expect(await child.waitUntil { _, _ in Self.processState(child.pid) == "T" }, "stopped, as the shell expects")
        child.send(SIGCONT)
        #expect(await child.waitUntil { lines, _ in lines.filter { $0 == "scene.didBecomeActive" }.count == 2 })
        child.send(SIGHUP)
        #expect(await child.waitForLine("host.reload"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        #expect(child.lines == ["app.didFinishLaunching(-)"] + Self.launched
                + ["app.memoryWarning", "scene.willResignActive", "scene.didEnterBackground", "scene.willEnterForeground", "scene.didBecomeActive",
                   "host.reload", "scene.willResignActive", "scene.didEnterBackground", "scene.didDisconnect", "app.willTerminate", "host.exit(0)"])
    }

    @Test func coalescedSignalsAreHandled() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo")
        #expect(await child.waitForLine("scene.didBecomeActive"))
        for _ in 0..<20 { child.send(SIGUSR1) }
        #expect(await child.waitForLine("app.memoryWarning"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        let warnings = child.lines.filter { $0 == "app.memoryWarning" }.count
        #expect((1...20).contains(warnings), "signals that arrive together may count once")
    }

    @Test func launchOptionsComeFromArgumentsAndEnvironment() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["APPKERNEL_OPEN_URL": "demo://from/env"], arguments: ["--background"])
        #expect(await child.waitForLine("app.didFinishLaunching(demo://from/env)"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        #expect(!child.lines.contains("scene.didBecomeActive"), "a background launch connects no scene")
        let bad = try ChildProcess(executable: "ProcessHostDemo", arguments: ["--open-ur", "x"])
        #expect(await bad.waitForExit() == 2)
        #expect(bad.errors.contains("unknown flag '--open-ur'"))
    }

    @Test func theSignalMappingIsConfigurableAndUnmappedSignalsAreLeftToTheSystem() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_USR2_TERMINATES": "1"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        child.send(SIGUSR2)
        #expect(await child.waitForExit() == 0)
        #expect(child.lines.suffix(2) == ["app.willTerminate", "host.exit(0)"])
        let unmapped = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_USR2_TERMINATES": "1"])
        #expect(await unmapped.waitForLine("scene.didBecomeActive"))
        unmapped.send(SIGUSR1)
        #expect(await unmapped.waitForExit() == 128 + SIGUSR1, "the system's default action: the process dies of SIGUSR1")
        #expect(!unmapped.lines.contains("app.memoryWarning"))
    }

    static func processState(_ pid: Int32) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("State:") }?.split(separator: "\t").last.map { String($0.prefix(1)) }
    }
}

/// systemd's notify protocol, received on a real Unix datagram socket.
@Suite(.serialized)
struct SystemdProtocolTests {
    @Test func readyStatusReloadingAndStoppingArriveInOrder() async throws {
        let socket = try NotifySocket()
        defer { socket.close() }
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["NOTIFY_SOCKET": socket.path])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        #expect(await child.waitUntil { _, _ in socket.messages.contains("STATUS=running") })
        child.send(SIGHUP)
        #expect(await child.waitUntil { _, _ in socket.messages.filter { $0 == "READY=1" }.count == 2 })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        #expect(await child.waitUntil { _, _ in socket.messages.contains("STOPPING=1") })
        let phases = ["setupWindow", "startRunOnceServices", "startNonLazyServices", "startAutoStartServiceGroups", "showWindow", "startLauncher"]
        #expect(socket.messages == phases.map { "STATUS=bootLoader \($0)" } + ["READY=1", "STATUS=running", "RELOADING=1", "READY=1", "STOPPING=1"])
    }

    @Test func withAnSDKManagerReadyWaitsForItsLaunchAndSIGHUPReloadsItsBootConfig() async throws {
        let socket = try NotifySocket()
        defer { socket.close() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = { (key: String) in
            Data(#"{"remoteAccessConsumerKey": "\#(key)", "oauthRedirectURI": "demo://done", "shouldAuthenticate": false}"#.utf8)
        }
        try config("3MVG9-first").write(to: directory.appendingPathComponent("bootconfig.json"))
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["NOTIFY_SOCKET": socket.path, "DEMO_SDK_CONFIG": directory.path])
        #expect(await child.waitUntil { _, _ in socket.messages.contains("STATUS=running") })
        let messages = socket.messages
        let sdkPhases = ["config", "sdkInit", "passcode", "auth", "rootController"].map { "STATUS=sdk \($0)" }
        #expect(sdkPhases.allSatisfy(messages.contains))
        let ready = try #require(messages.firstIndex(of: "READY=1"))
        #expect(messages.firstIndex(of: "STATUS=sdk rootController").map { $0 < ready } == true, "READY=1 after the SDK manager's launch")
        try config("3MVG9-second").write(to: directory.appendingPathComponent("bootconfig.json"))
        child.send(SIGHUP)
        #expect(await child.waitForLine("host.reload(3MVG9-second)"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
    }

    @Test func watchdogPingsAtHalfTheIntervalAndStopWhileTheMainActorIsBlocked() async throws {
        let socket = try NotifySocket()
        defer { socket.close() }
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "200000", "DEMO_BLOCK_MAIN_MS": "1200"])
        #expect(await child.waitForLine("demo.unblocked", seconds: 15))
        #expect(await child.waitUntil { _, _ in socket.timedMessages.filter { $0.message == "WATCHDOG=1" }.count >= 4 })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        let pings = socket.timedMessages.filter { $0.message == "WATCHDOG=1" }.map(\.time)
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }
        #expect(gaps.contains { $0 >= 0.9 }, "no pings while the main actor was blocked: \(gaps)")
        #expect(gaps.filter { $0 < 0.5 }.count >= 2, "pings every ~0.1 s otherwise: \(gaps)")
    }
}

/// Memory pressure from a fixture file the test rewrites, and the trace export.
@Suite(.serialized)
struct ProcessHostInputsTests {
    @Test func memoryPressureAboveTheThresholdSendsAMemoryWarning() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("psi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n".utf8).write(to: file)
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_PSI_PATH": file.path])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        #expect(!(await child.waitForLine("app.memoryWarning", seconds: 0.4)), "calm: no warning")
        try Data("some avg10=55.00 avg60=20.00 avg300=5.00 total=123456\nfull avg10=30.00 avg60=10.00 avg300=2.00 total=6543\n".utf8).write(to: file)
        #expect(await child.waitForLine("app.memoryWarning"))
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
    }

    @Test func missingPressureFilesTurnTheFeatureOffWithALogLine() async throws {
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["DEMO_PSI_PATH": "/nonexistent/psi"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        #expect(await child.waitUntil { _, _ in child.errors.contains("memory-pressure monitoring is off") })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
    }

    /// What ProcessHostDemo writes to `APPKERNEL_TRACE` (a file named like `name` in the temporary
    /// directory, removed after) when it has launched and been sent SIGTERM.
    static func demoTrace(named name: String) async throws -> Data {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["APPKERNEL_TRACE": file.path])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        #expect(await child.waitUntil { _, _ in FileManager.default.fileExists(atPath: file.path) })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        return try Data(contentsOf: file)
    }

    @Test func theLaunchTimelineIsWrittenAsChromeTraceJSON() async throws {
        let trace = try await Self.demoTrace(named: "trace.json")
        let document = try #require(try JSONSerialization.jsonObject(with: trace) as? [String: Any])
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let names = events.compactMap { $0["name"] as? String }
        for expected in ["app.willFinishLaunching", "app.didFinishLaunching", "bootLoader.setupWindow", "bootLoader.startLauncher",
                         "scene-1.sceneWillConnect", "scene-1.sceneDidBecomeActive"] {
            #expect(names.contains(expected), "\(expected) in \(names)")
        }
        #expect(events.allSatisfy { ($0["ph"] as? String) == "X" && ($0["dur"] as? Int).map { $0 >= 0 } == true })
        let pipeline = events.filter { ($0["cat"] as? String) == "pipeline" }
        let starts = pipeline.compactMap { $0["ts"] as? Int }, durations = pipeline.compactMap { $0["dur"] as? Int }
        let span = (zip(starts, durations).map { $0 + $1 }.max() ?? 0) - (starts.min() ?? 0)
        #expect(durations.reduce(0, +) == span, "pipeline steps follow each other without gaps or overlaps")
        #expect(chromeTraceNestingViolations(events) == [], "slices on one track nest, as Perfetto requires")
    }
}
