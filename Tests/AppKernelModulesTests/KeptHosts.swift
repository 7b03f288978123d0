import AppKernel
import AppKernelModules
import AppKernelTesting

/// The hosts (and so the applications) of the contexts a test makes by hand, kept until the
/// test ends: a ``Context`` points at its application weakly — the application owns it through
/// its `ContextBootLoader` — so a context made with `Context(application:)` needs someone else
/// to keep its application alive, as an app's own code would.
@MainActor
final class KeptHosts {
    private var hosts: [SimulatedHost] = []

    /// A new host on `clock`, kept.
    func host(clock: some Clock<Duration> = TestClock()) -> SimulatedHost {
        let host = SimulatedHost(clock: clock)
        hosts.append(host)
        return host
    }

    /// A context on a newly launched application of a new host on `clock`; both are kept.
    func context(clock: some Clock<Duration> = TestClock()) throws -> Context {
        Context(application: try host(clock: clock).launch(delegate: DefaultApplicationDelegate()))
    }
}
