import Testing
import AppKernel
@testable import AppKernelModules
import AppKernelTesting

/// A service whose start and shutdown take time on the test clock (or, with `hangs`, whose
/// shutdown never returns by itself).
@MainActor final class TimedService: Service {
    let name: String
    let log: CallLog
    let clock: TestClock
    let startTakes: Duration?
    let shutdownTakes: Duration?
    init(_ name: String, log: CallLog, clock: TestClock, startTakes: Duration? = nil, shutdownTakes: Duration? = nil) {
        self.name = name
        self.log = log
        self.clock = clock
        self.startTakes = startTakes
        self.shutdownTakes = shutdownTakes
    }
    func start() async throws {
        if let startTakes { try await clock.sleep(for: startTakes) }
    }
    func shutdown() async {
        log.lines.append("\(name).shutdown at \(clock.now.offset)")
        if let shutdownTakes { try? await clock.sleep(for: shutdownTakes) }
    }
    func willDestroy() { log.lines.append("\(name).destroy at \(clock.now.offset)") }
}

@MainActor
struct ServiceSchedulingTests {
    let hosts = KeptHosts()
    let log = CallLog()
    let clock = TestClock()

    func context() throws -> Context {
        try hosts.context(clock: clock)
    }

    #if DEBUG
    @Test func servicesThatDoNotSuspendStartBackToBackInAFewTasksUnderOneDeadlineTimer() async throws {
        let context = try context()
        #expect(context.services.defaultStartDeadline == .seconds(20), "the production default")
        for index in 0..<10_000 {
            context.services.register(named: "s\(index)", dependencies: index % 3 == 0 || index == 0 ? [] : ["s\(index - 1)"]) {
                TimedService("s\(index)", log: self.log, clock: self.clock)
            }
        }
        try await context.services.startServices()
        #expect(context.services.startOrder.count == 10_000)
        #expect(context.services.starts.tasksCreated <= 3, "a worker and its standby, not a task per service")
        #expect(context.services.deadlines.count == 0, "every start's deadline removed")
        #expect(clock.pendingCount == 0, "and the one deadline timer cancelled")
    }
    #endif

    @Test func servicesThatSuspendStartSideBySide() async throws {
        let context = try context()
        for index in 0..<50 {
            context.services.register(named: "s\(index)") { TimedService("s\(index)", log: self.log, clock: self.clock, startTakes: .seconds(1)) }
        }
        context.services.register(named: "last", dependencies: (0..<50).map { "s\($0)" }) {
            TimedService("last", log: self.log, clock: self.clock, startTakes: .seconds(1))
        }
        let boot = Task { try await context.services.startServices() }
        try await clock.waitForSleepers(50)
        await clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(1)
        #expect(context.services.startOrder.count == 50, "fifty one-second starts took one second together")
        await clock.advance(by: .seconds(1))
        try await boot.value
        #expect(context.services.startOrder.last == "last")
        #expect(clock.now.offset == .seconds(2), "the critical path")
    }

    @Test func aStartPastItsDeadlineFailsAndTheOthersGoOn() async throws {
        let context = try context()
        context.services.register(named: "slow", failurePolicy: .continueWithout, deadline: .seconds(5)) {
            TimedService("slow", log: self.log, clock: self.clock, startTakes: .seconds(60))
        }
        context.services.register(named: "after", dependencies: []) { TimedService("after", log: self.log, clock: self.clock, startTakes: .seconds(7)) }
        let boot = Task { try await context.services.startServices() }
        try await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(5))
        #expect(context.services.failure(of: "slow")?.code == .timedOut)
        await clock.advance(by: .seconds(2))
        try await boot.value
        #expect(context.services.startOrder == ["after"])
        #expect(context.services.deadlines.count == 0)
    }

    @Test func shutdownGoesDependentsFirstNewestFirstAndAtMostTheLimitAtOnce() async throws {
        let context = try context()
        context.services.maxConcurrentShutdowns = 2
        // a, b, c independent; d depends on a. Each shutdown takes one second.
        for name in ["a", "b", "c"] {
            context.services.register(named: name) { TimedService(name, log: self.log, clock: self.clock, shutdownTakes: .seconds(1)) }
        }
        context.services.register(named: "d", dependencies: ["a"]) { TimedService("d", log: self.log, clock: self.clock, shutdownTakes: .seconds(1)) }
        try await context.services.startServices()
        #expect(context.services.startOrder == ["a", "b", "c", "d"])
        let shutdown = Task { await context.services.shutdown() }
        try await clock.waitForSleepers(2)
        #expect(log.lines == ["d.shutdown at 0.0 seconds", "c.shutdown at 0.0 seconds"], "the newest two; a waits for d")
        await clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(1))
        await shutdown.value
        // d's worker goes on with b (the newest waiting); c's then takes a, which d released.
        #expect(log.lines == ["d.shutdown at 0.0 seconds", "c.shutdown at 0.0 seconds",
                              "d.destroy at 1.0 seconds", "b.shutdown at 1.0 seconds",
                              "c.destroy at 1.0 seconds", "a.shutdown at 1.0 seconds",
                              "b.destroy at 2.0 seconds", "a.destroy at 2.0 seconds"])
        #expect(context.services.startOrder.isEmpty)
        #expect(context.services.state(of: "a") == .destroyed)
    }

    @Test func aShutdownPastItsDeadlineIsGivenUpAndTheRestGoOn() async throws {
        let context = try context()
        context.services.register(named: "db") { TimedService("db", log: self.log, clock: self.clock) }
        context.services.register(named: "stuck", dependencies: ["db"]) {
            TimedService("stuck", log: self.log, clock: self.clock, shutdownTakes: .seconds(3_600))
        }
        try await context.services.startServices()
        let shutdown = Task { await context.services.shutdown(deadline: .seconds(2)) }
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(2))
        await shutdown.value
        #expect(log.lines == ["stuck.shutdown at 0.0 seconds", "stuck.destroy at 2.0 seconds",
                              "db.shutdown at 2.0 seconds", "db.destroy at 2.0 seconds"])
        #expect(context.services.deadlines.count == 0)
    }

    @Test func aLookupDuringABootOfManyServicesWaitsForTheSameStarts() async throws {
        let context = try context()
        // The boot and the lookup wait in the lists of the services they need.
        for index in 0..<100 {
            context.services.register(named: "s\(index)", dependencies: index == 0 ? [] : ["s\(index / 2)"]) {
                TimedService("s\(index)", log: self.log, clock: self.clock, startTakes: .seconds(1))
            }
        }
        let boot = Task { try await context.services.startServices() }
        try await clock.waitForSleepers(1)
        let lookup = Task { @MainActor in ObjectIdentifier(try await context.services.service(named: "s7")) }
        // Level by level (s7 needs s3, s1 and s0): each level's starts take one second together.
        for sleepers in [1, 1, 2, 4, 8, 16, 32, 36] {
            try await clock.waitForSleepers(sleepers)
            await clock.advance(by: .seconds(1))
        }
        let found = try await lookup.value
        #expect(found == context.services.findService(named: "s7").map(ObjectIdentifier.init), "the boot's instance, started once")
        try await boot.value
        #expect(context.services.startOrder.count == 100)
        #expect(context.services.waitingRunCount == 0)
    }

    @Test func unregisteringAServiceABootOfManyWaitsForFailsTheBoot() async throws {
        let context = try context()
        for index in 0..<100 {
            context.services.register(named: "s\(index)") { TimedService("s\(index)", log: self.log, clock: self.clock, startTakes: .seconds(1)) }
        }
        let boot = Task { try await context.services.startServices() }
        try await clock.waitForSleepers(100)
        context.services.unregisterService(named: "s42")
        await clock.advance(by: .seconds(1))
        let error = await #expect(throws: ServiceError.self) { try await boot.value }
        #expect(error?.code == .unknown)
        #expect(log.lines == ["s42.destroy at 0.0 seconds"], "cancelled while it started, destroyed once")
        #expect(context.services.startOrder.count == 99)
        #expect(context.services.deadlines.count == 0)
    }
}
