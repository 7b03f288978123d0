import Testing
import AppKernel
import AppKernelTesting

/// Issue 29, "failures speak": a failure nothing in the app handled reaches the host.
@MainActor
struct UnhandledErrorTests {
    struct BrokerDown: Error, CustomStringConvertible {
        var description: String { "the broker at localhost:5672 refused the connection" }
    }

    @Test func aReportedUnhandledErrorIsRecordedByTheSimulatedHostAndAsADiagnostic() throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        app.reportUnhandledError(BrokerDown(), subject: "broker", advice: "start the broker or set BROKER_URL")
        #expect(host.unhandledErrors.map(\.subject) == ["broker"])
        #expect(host.unhandledErrors.first?.error is BrokerDown)
        #expect(host.unhandledErrors.first?.exitStatus == UnhandledError.defaultExitStatus)
        #expect(UnhandledError.defaultExitStatus == 70, "EX_SOFTWARE, as documented")
        #expect(host.unhandledErrors.first?.description
                == "broker: the broker at localhost:5672 refused the connection — start the broker or set BROKER_URL")
        #expect(app.unhandledErrors.count == 1)
        #expect(app.diagnostics.filter { $0.kind == .unhandledError }.map(\.subject) == ["broker"])
    }

    @Test func theHostKeepsWhatEveryLaunchReportedAcrossRelaunches() throws {
        let host = SimulatedHost()
        try host.launch(delegate: DefaultApplicationDelegate()).reportUnhandledError(BrokerDown(), subject: "first", exitStatus: 78)
        try host.terminate()
        try host.launch(delegate: DefaultApplicationDelegate()).reportUnhandledError(BrokerDown(), subject: "second")
        #expect(host.unhandledErrors.map(\.subject) == ["first", "second"])
        #expect(host.unhandledErrors.map(\.exitStatus) == [78, 70])
    }
}
