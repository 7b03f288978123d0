import AppKernel
import AppKernelModules
import AppKernelTesting
import Testing

/// Services' starts are ``Activity``s a launch timeline draws (issue 35, "the launch as a
/// picture"): each start with its time on the application's clock, a failed one with why.
@MainActor
struct ServiceActivityTests {
    final class Sleeper: Service {
        let clock: TestClock, duration: Duration, fails: Bool
        init(_ clock: TestClock, _ duration: Duration, fails: Bool = false) { self.clock = clock; self.duration = duration; self.fails = fails }
        struct Refused: Error, CustomStringConvertible { var description: String { "no keychain on this host" } }
        func start() async throws {
            clock.simulateWork(for: duration)
            if fails { throw Refused() }
        }
    }

    @Test func eachServiceStartIsAnActivityAndAFailedOneSaysWhy() async throws {
        let hosts = KeptHosts(), clock = TestClock()
        let context = try hosts.context(clock: clock)
        let app = try #require(context.application)
        var heard: [Activity] = []
        let token = app.addActivityObserver { heard.append($0) }
        defer { token.cancel() }
        context.services.register(named: "Geo") { Sleeper(clock, .milliseconds(3)) }
        context.services.register(named: "Keychain", dependencies: ["Geo"]) { Sleeper(clock, .milliseconds(2), fails: true) }
        await #expect(throws: ServiceError.self) { try await context.services.startServices() }
        #expect(heard.map(\.name) == ["Geo", "Keychain"])
        #expect(heard.allSatisfy { $0.category == "service" })
        #expect(heard.map { $0.end - $0.start } == [.milliseconds(3), .milliseconds(2)])
        #expect(heard[0].failure == nil)
        #expect(heard[1].failure == "no keychain on this host")
    }

    @Test func nobodyObservingMeansNoActivity() async throws {
        let hosts = KeptHosts(), clock = TestClock()
        let context = try hosts.context(clock: clock)
        let app = try #require(context.application)
        #expect(!app.observesActivities)
        context.services.register(named: "Geo") { Sleeper(clock, .milliseconds(1)) }
        try await context.services.startServices()
        let token = app.addActivityObserver { _ in }
        #expect(app.observesActivities)
        token.cancel()
        #expect(!app.observesActivities)
    }
}
