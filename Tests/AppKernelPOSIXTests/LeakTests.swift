import AppKernel
import AppKernelPOSIX
import AppKernelTesting
import Testing

/// A process host, its launch timeline and its application are freed when nobody holds them.
/// LeakSanitizer reports the weak-reference side tables `LaunchTimeline.record` makes when the
/// process exits with the host alive (the runtime stores a side table's address shifted in the
/// object's header, where LeakSanitizer cannot see it); these tests show that nothing leaks
/// once the host is let go.
@MainActor
struct POSIXLeakTests {
    @Test func aHostThatIsLetGoFreesItsApplicationAndTimeline() throws {
        weak var weakApp: Application?
        weak var weakTimeline: LaunchTimeline?
        do {
            let configuration = ProcessHost.Configuration(memoryPressure: nil, arguments: [], environment: [:],
                                                          log: StandardErrorLogHandler(minimumLevel: .error))
            let host = try ProcessHost(delegate: DefaultApplicationDelegate(), configuration: configuration)
            weakApp = host.application
            weakTimeline = host.timeline
        }
        #expect(weakApp == nil)
        #expect(weakTimeline == nil)
    }

    @Test func aTimelineRecordingAnApplicationKeepsNeitherAlive() throws {
        weak var weakApp: Application?
        weak var weakTimeline: LaunchTimeline?
        do {
            let host = SimulatedHost()
            let timeline = LaunchTimeline()
            weakTimeline = timeline
            host.beforeEachLaunch { timeline.record($0) }
            let app = try host.launch(delegate: DefaultApplicationDelegate())
            weakApp = app
        }
        #expect(weakApp == nil)
        #expect(weakTimeline == nil)
    }
}
