import Testing
import AppKernel
import AppKernelTesting

/// Issue 29, "failures speak": a failure nothing in the app handled reaches the host.
/// Exhaustive (issue 31): each test runs on its `AppKernelTest`'s host and takes what it heard.
@Suite(.appKernel) @MainActor
struct UnhandledErrorTests {
    struct BrokerDown: Error, CustomStringConvertible {
        var description: String { "the broker at localhost:5672 refused the connection" }
    }

    @Test func aReportedUnhandledErrorIsRecordedByTheSimulatedHostAndAsADiagnostic() throws {
        let host = AppKernelTest.current.host
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
        #expect(host.takeUnhandledErrors().map(\.subject) == ["broker"], "heard: the exhaustive check has nothing to report")
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)"])
    }

    @Test func theHostKeepsWhatEveryLaunchReportedAcrossRelaunches() throws {
        let host = AppKernelTest.current.host
        try host.launch(delegate: DefaultApplicationDelegate()).reportUnhandledError(BrokerDown(), subject: "first", exitStatus: 78)
        try host.terminate()
        try host.launch(delegate: DefaultApplicationDelegate()).reportUnhandledError(BrokerDown(), subject: "second")
        #expect(host.unhandledErrors.map(\.subject) == ["first", "second"])
        #expect(host.unhandledErrors.map(\.exitStatus) == [78, 70])
        #expect(host.takeUnhandledErrors().map(\.subject) == ["first", "second"])
        host.trace.clear()
    }
}
