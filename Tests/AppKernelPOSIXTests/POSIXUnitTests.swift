import Foundation
import Testing
import AppKernel
import AppKernelPOSIX
import AppKernelSDK
import AppKernelTesting
import ChildProcess
import AppKernelCore
#if canImport(Glibc)
import Glibc
#endif

struct LaunchArgumentsTests {
    @Test func flagsAndEnvironmentBecomeLaunchOptions() throws {
        let parsed = try LaunchArguments(arguments: ["--open-url", "app://x", "--source-app", "mail", "--shortcut", "new", "--user-activity", "view",
                                                     "--location", "--", "--app-flag"],
                                         environment: ["APPKERNEL_OPEN_URL": "app://env"])
        #expect(parsed.options.url == URL(string: "app://x"), "a flag wins over the environment")
        #expect(parsed.options.sourceApplication == "mail")
        #expect(parsed.options.shortcutItem?.type == "new")
        #expect(parsed.options.userActivity?.activityType == "view")
        #expect(parsed.options.location)
        #expect(!parsed.inBackground)
        #expect(parsed.remaining == ["--app-flag"])
        #expect(try LaunchArguments(arguments: ["--fetch"]).inBackground)
        #expect(try LaunchArguments(arguments: [], environment: ["APPKERNEL_BACKGROUND": "1"]).inBackground)
        #expect(try LaunchArguments(arguments: ["--custom"], strict: false).remaining == ["--custom"])
    }

    @Test(arguments: [["--bogus"], ["--open-url"], ["--open-url", "no scheme"], ["--source-app", "--location"]])
    func badArgumentsAreRefused(_ arguments: [String]) {
        let error = #expect(throws: LaunchArguments.Error.self) { _ = try LaunchArguments(arguments: arguments) }
        #expect(error?.description.contains("Flags: --background") == true)
    }
}

struct MemoryPressureTests {
    @Test func psiAndCgroupEventsParse() {
        #expect(MemoryPressureMonitor.psiAverage10("some avg10=12.50 avg60=1.00 avg300=0.00 total=99\nfull avg10=3.00 avg60=0 avg300=0 total=1") == 12.5)
        #expect(MemoryPressureMonitor.psiAverage10("garbage") == nil)
        #expect(MemoryPressureMonitor.events("low 0\nhigh 3\nmax 1\noom 0\noom_kill 0\n") == ["low": 0, "high": 3, "max": 1, "oom": 0, "oom_kill": 0])
    }

    @Test func warningsFollowThresholdsNewEventsAndTheRateLimit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pressure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let psi = directory.appendingPathComponent("psi"), events = directory.appendingPathComponent("events")
        var monitor = MemoryPressureMonitor(source: MemoryPressureSource(psiPath: psi.path, cgroupEventsPath: events.path,
                                                                         cgroupPressurePath: directory.appendingPathComponent("cgroup-psi").path,
                                                                         psiThreshold: 10, minimumInterval: .seconds(30)))
        #expect(monitor.availableInputs.isEmpty)
        let quiet = monitor.check(at: .zero)
        #expect(!quiet, "no files: no warning, no crash")
        try Data("some avg10=5.00 avg60=0 avg300=0 total=0".utf8).write(to: psi)
        try Data("high 0\nmax 0\n".utf8).write(to: events)
        let calm = monitor.check(at: .seconds(1))
        #expect(!calm)
        try Data("high 2\nmax 0\n".utf8).write(to: events)
        let high = monitor.check(at: .seconds(2))
        #expect(high, "new 'high' events")
        try Data("some avg10=50.00 avg60=0 avg300=0 total=0".utf8).write(to: psi)
        let limited = monitor.check(at: .seconds(10))
        #expect(!limited, "rate-limited")
        let later = monitor.check(at: .seconds(40))
        #expect(later, "PSI over the threshold")
        try Data("some avg10=1.00 avg60=0 avg300=0 total=0".utf8).write(to: psi)
        try Data("some avg10=70.00 avg60=0 avg300=0 total=0".utf8).write(to: directory.appendingPathComponent("cgroup-psi"))
        let cgroup = monitor.check(at: .seconds(80))
        #expect(cgroup, "the cgroup's own memory.pressure counts too")
    }
}

struct SystemdNotifierTests {
    @Test func theEnvironmentDecidesTheSocketAndTheWatchdog() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x.sock", "WATCHDOG_USEC": "3000000"])
        #expect(notifier?.watchdogInterval == .seconds(3))
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x.sock", "WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"])?.watchdogInterval == nil,
                "the watchdog belongs to another process")
        #expect(notifier?.notify("READY=1") == false, "no such socket: nothing sent, no crash")
    }

    @Test func messagesReachADatagramSocket() throws {
        let socket = try NotifySocket()
        defer { socket.close() }
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path]))
        #expect(notifier.notify("READY=1"))
        #expect(notifier.notify("STATUS=launch phase auth"))
        let deadline = Date().addingTimeInterval(5)
        while socket.messages.count < 2 && Date() < deadline { sched_yield() }
        #expect(socket.messages == ["READY=1", "STATUS=launch phase auth"])
    }
}

@MainActor
struct LaunchTimelineTests {
    @Test func stepsExportAsChromeTraceEventsAndATable() throws {
        let clock = TestClock()
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let timeline = LaunchTimeline()
        timeline.record(app)
        let slowHook = app.hooks.before(.didFinishLaunching) { _ in clock.simulateWork(for: .milliseconds(2)) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        clock.simulateWork(for: .milliseconds(3))
        timeline.finish(at: app.uptime)
        slowHook.cancel()
        timeline.add("sdk.auth", category: "sdk", start: .milliseconds(1), end: .milliseconds(2))
        #expect(timeline.steps.first?.name == "app.willFinishLaunching")
        #expect(timeline.steps.first { $0.name == "hooks.didFinishLaunching" }?.duration == .milliseconds(2),
                "the hooks' time is their own step, not the step before")
        #expect(timeline.steps.contains { $0.name == "sdk.auth" && $0.duration == .milliseconds(1) })
        let json = try #require(try JSONSerialization.jsonObject(with: timeline.chromeTraceJSON(processID: 42)) as? [String: Any])
        let events = try #require(json["traceEvents"] as? [[String: Any]])
        #expect(events.count == timeline.steps.count)
        #expect(events.first { ($0["name"] as? String) == "sdk.auth" }?["ts"] as? Int == 1000)
        #expect(events.first { ($0["name"] as? String) == "sdk.auth" }?["dur"] as? Int == 1000)
        #expect(events.allSatisfy { $0["pid"] as? Int == 42 })
        #expect(timeline.table().contains("sdk.auth"))
        #expect(LogLevel.warning.description == "WARNING")
        #expect(LogLevel.error > LogLevel.info)
    }

    /// Perfetto draws complete events on one thread only if they nest: steps that overlap without
    /// nesting (an SDK phase that outlasts the pipeline step it began in) go on tracks of their own.
    @Test func overlappingStepsGoOnTracksWhereEachNests() throws {
        let timeline = LaunchTimeline()
        // pipeline: three steps back to back; sdk: phases overlapping their boundaries; one inside.
        for (name, start, end) in [("pipe.a", 0, 4), ("pipe.b", 4, 9), ("pipe.c", 9, 12),
                                   ("sdk.config", 1, 6), ("sdk.auth", 6, 11), ("sdk.inner", 2, 3), ("sdk.late", 10, 15)] {
            timeline.add(name, category: name.hasPrefix("pipe") ? "pipeline" : "sdk", start: .milliseconds(start), end: .milliseconds(end))
        }
        let events = try Self.events(timeline)
        #expect(chromeTraceNestingViolations(events) == [])
        let tracks = Dictionary(uniqueKeysWithValues: events.map { ($0["name"] as! String, $0["tid"] as! Int) })
        #expect(tracks["pipe.a"] == 1 && tracks["pipe.b"] == 1 && tracks["pipe.c"] == 1, "steps that follow each other share a track")
        #expect(tracks["sdk.inner"] == 1, "a step inside another shares its track")
        #expect(tracks["sdk.config"] == 2 && tracks["sdk.auth"] == 2 && tracks["sdk.late"] == 3, "\(tracks)")
        // The checker itself: the same events on one track break the rule, and it says where.
        let oneTrack = events.map { $0.merging(["tid": 1]) { $1 } }
        #expect(chromeTraceNestingViolations(oneTrack).contains { $0.contains("sdk.config [1000, 6000] overlaps pipe.a") })
    }

    /// Any set of steps, however they overlap, exports to tracks that nest.
    @Test(arguments: 1...20)
    func randomStepsAlwaysNest(seed: Int) throws {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let timeline = LaunchTimeline()
        for index in 0..<60 {
            let start = next(1_000)
            timeline.add("step\(index)", category: "sdk", start: .microseconds(start), end: .microseconds(start + next(300)))
        }
        #expect(chromeTraceNestingViolations(try Self.events(timeline)) == [])
    }

    static func events(_ timeline: LaunchTimeline) throws -> [[String: Any]] {
        let json = try #require(try JSONSerialization.jsonObject(with: timeline.chromeTraceJSON(processID: 7)) as? [String: Any])
        return try #require(json["traceEvents"] as? [[String: Any]])
    }
}

/// The README's systemd snippet, compiled as written (it runs a real process host, so it is not
/// called here: the ProcessHostTests run one in a child process).
private struct ReadmeRunningUnderSystemd {
    final class AppDelegate: ApplicationDelegate {}

    /// The app under systemd, the SDK manager's launch phases included: call it from `main`.
    @MainActor func runUnderSystemd() async throws -> Never {
        let host = try ProcessHost(delegate: AppDelegate())
        SDKManager.shared.attach(to: host.application)  // READY=1 waits for its launch phases
        exit(await host.run())                         // returns after willTerminate
    }
}

/// `waitUntilReady()`: in-process hosts that map no signal, so nothing touches the test runner's
/// signal dispositions.
@MainActor
struct ProcessHostReadinessTests {
    final class AppDelegate: ApplicationDelegate {}

    /// What the host logs, kept for the test (a green run prints nothing of it).
    final class KeptLog: LogHandler, Sendable {
        private let kept = Locked<[String]>([])
        var lines: [String] { kept.withLock { $0 } }
        func log(_ level: LogLevel, _ message: String) { kept.withLock { $0.append("\(level): \(message)") } }
    }

    func makeHost(log: KeptLog = KeptLog()) throws -> ProcessHost {
        try ProcessHost(delegate: AppDelegate(),
                        configuration: ProcessHost.Configuration(signalActions: [:], memoryPressure: nil, arguments: [], environment: [:],
                                                                 log: log))
    }

    @Test func readyComesAfterEveryLaunchGateAndBeforeTermination() async throws {
        let host = try makeHost()
        var log: [String] = []
        var openGate: CheckedContinuation<Void, Never>?
        let gate = host.application.addLaunchGate(named: "slow") {
            log.append("gate waiting")
            await withCheckedContinuation { openGate = $0 }
            log.append("gate opened")
        }
        let waiter = Task { @MainActor in
            let ready = await host.waitUntilReady()
            log.append("ready: \(ready), app \(host.application.state)")
            return ready
        }
        let run = Task { @MainActor in await host.run() }
        while openGate == nil { await Task.yield() }
        #expect(log == ["gate waiting"], "not ready while a gate is closed")
        openGate?.resume()
        #expect(await waiter.value)
        #expect(await host.waitUntilReady(), "a later wait answers at once")
        host.terminate()
        #expect(await run.value == 0)
        #expect(log == ["gate waiting", "gate opened", "ready: true, app active"])
        withExtendedLifetime(gate) {}
    }

    @Test func aRefusedLaunchIsNeverReady() async throws {
        let log = KeptLog()
        let host = try makeHost(log: log)
        try host.application.handle(.launch(LaunchOptions(), inBackground: false))   // a second launch is refused
        let waiter = Task { @MainActor in await host.waitUntilReady() }
        #expect(await host.run() == 2)
        #expect(await waiter.value == false)
        #expect(await host.waitUntilReady() == false)
        #expect(log.lines.contains { $0.hasPrefix("ERROR: the launch was refused: cannot deliver 'launch'") }, "\(log.lines)")
    }
}

/// The README's journald log handler, as written, and what it writes.
struct ReadmeLogHandlerTests {
    @Test func theJournalHandlerPrefixesEachLineWithItsPriority() {
        /// journald reads a `<priority>` prefix on each line of standard error (sd-daemon(3)).
        struct JournalLogHandler: LogHandler {
            var write: @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
            func log(_ level: LogLevel, _ message: String) {
                let priority = level >= .error ? 3 : level >= .warning ? 4 : level >= .notice ? 5 : 6
                write("<\(priority)>\(message)\n")
            }
        }
        var configuration = ProcessHost.Configuration(log: JournalLogHandler())
        configuration.terminationDeadline = .seconds(2)
        #expect(configuration.log is JournalLogHandler)
        let lines = Locked<[String]>([])
        let handler = JournalLogHandler { line in lines.withLock { $0.append(line) } }
        for level in [LogLevel.debug, .info, .notice, .warning, .error] { handler.log(level, "\(level)") }
        #expect(lines.withLock { $0 } == ["<6>DEBUG\n", "<6>INFO\n", "<5>NOTICE\n", "<4>WARNING\n", "<3>ERROR\n"])
    }
}
