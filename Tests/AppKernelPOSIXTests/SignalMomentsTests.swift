import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP delivered at every moment of a launch and of a shutdown, once and
/// twice in quick succession, to the ProcessHost demo. The demo announces each phase
/// ("phase bootLoader.setupWindow began") and holds the main actor right after the chosen line
/// until the test writes to its standard input (`DEMO_HOLD`), so each signal lands inside that
/// moment — no sleeps. Whatever the moment, the process exits within its termination deadline
/// with the documented status (0 for a graceful termination; 1, saying so, when a second SIGINT
/// forces it), and no signal is lost: a termination signal always terminates, a SIGHUP always
/// reloads.
@Suite(.serialized)
struct SignalMomentsTests {
    static let launchMoments = ["phase bootLoader.setupWindow began", "phase bootLoader.startRunOnceServices began",
                                "phase bootLoader.startNonLazyServices began", "phase bootLoader.startAutoStartServiceGroups began",
                                "phase bootLoader.showWindow began", "phase bootLoader.startLauncher began",
                                "app.didFinishLaunching(-)", "scene.willConnect", "scene.didBecomeActive"]
    static let shutdownMoments = ["scene.willResignActive", "scene.didEnterBackground", "scene.didDisconnect", "app.willTerminate"]
    /// The demo's termination deadline in these runs.
    static let deadlineMilliseconds = 3_000
    /// How long a run may take to exit after its last signal: the deadline, and room for a
    /// loaded machine (the bound only keeps a broken run from hanging the suite).
    static let exitBound = Double(deadlineMilliseconds) / 1000 + 10

    struct Delivery: CustomTestStringConvertible, Sendable {
        let signal: Int32
        let twice: Bool
        var testDescription: String { "\(Self.name(signal))\(twice ? " twice" : "")" }
        static func name(_ signal: Int32) -> String { [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"][signal] ?? "\(signal)" }
    }

    static let deliveries = [SIGTERM, SIGINT, SIGHUP].flatMap { signal in [false, true].map { Delivery(signal: signal, twice: $0) } }

    func start(holdingAt moment: String) throws -> ChildProcess {
        try ChildProcess(executable: "ProcessHostDemo",
                         environment: ["DEMO_PHASES": "1", "DEMO_HOLD": moment, "APPKERNEL_TERMINATION_DEADLINE_MS": "\(Self.deadlineMilliseconds)"])
    }

    func deliver(_ delivery: Delivery, to child: ChildProcess) {
        child.send(delivery.signal)
        if delivery.twice { child.send(delivery.signal) }
    }

    @Test(arguments: launchMoments, deliveries)
    func aSignalDuringTheLaunch(moment: String, delivery: Delivery) async throws {
        let child = try start(holdingAt: moment)
        try #require(await child.waitForLine(moment, seconds: 30), "the demo never reached '\(moment)': \(child.lines) \(child.errors)")
        deliver(delivery, to: child)
        child.write("go\n")
        if delivery.signal == SIGHUP {
            #expect(await child.waitForLine("host.reload", seconds: 30), "the SIGHUP was lost: \(child.lines)")
            #expect(await child.waitForLine("scene.didBecomeActive", seconds: 30), "the launch did not finish: \(child.lines)")
            child.send(SIGTERM)
        }
        let status = await child.waitForExit(seconds: Self.exitBound)
        try check(status, child, delivery: delivery, terminatedBy: delivery.signal == SIGHUP ? SIGTERM : delivery.signal)
    }

    @Test(arguments: shutdownMoments, deliveries)
    func aSignalDuringTheShutdown(moment: String, delivery: Delivery) async throws {
        let child = try start(holdingAt: moment)
        try #require(await child.waitForLine("scene.didBecomeActive", seconds: 30), "\(child.lines) \(child.errors)")
        child.send(SIGTERM)
        try #require(await child.waitForLine(moment, seconds: 30), "the demo never reached '\(moment)': \(child.lines) \(child.errors)")
        deliver(delivery, to: child)
        child.write("go\n")
        let status = await child.waitForExit(seconds: Self.exitBound)
        // One SIGTERM began the termination: a second SIGINT is the first SIGINT here, unless twice.
        try check(status, child, delivery: delivery, terminatedBy: SIGTERM, secondInterrupt: delivery.signal == SIGINT && delivery.twice)
    }

    /// The documented outcome: exit 0 after `willTerminate`; or, for a second SIGINT during a
    /// termination, exit 1 naming the forced exit.
    func check(_ status: Int32?, _ child: ChildProcess, delivery: Delivery, terminatedBy: Int32, secondInterrupt: Bool = false) throws {
        let status = try #require(status, "\(delivery.testDescription): no exit within \(Self.exitBound) s; lines: \(child.lines)")
        let forced = child.errors.contains("forced exit after a second SIGINT")
        if status == 1 && forced {
            // A second SIGINT that arrived once the termination had begun.
            #expect(delivery.signal == SIGINT && delivery.twice, "\(delivery.testDescription): forced exit: \(child.errors)")
            return
        }
        #expect(!secondInterrupt || status == 0, "\(delivery.testDescription)")
        #expect(status == 0, "\(delivery.testDescription): exit \(status); lines \(child.lines); errors \(child.errors)")
        #expect(child.lines.contains("app.willTerminate"), "\(delivery.testDescription): no willTerminate: \(child.lines)")
        #expect(child.lines.last == "host.exit(0)", "\(delivery.testDescription): \(child.lines)")
        #expect(!child.errors.contains("forced exit"), "\(delivery.testDescription): \(child.errors)")
    }
}
