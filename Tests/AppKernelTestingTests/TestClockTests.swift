import Testing
import AppKernel
import AppKernelTesting

@MainActor
struct TestClockTests {
    @Test func timeMovesOnlyWhenAdvanced() async {
        let clock = TestClock()
        #expect(clock.now == TestClock.Instant(offset: .zero))
        await clock.advance(by: .seconds(3))
        #expect(clock.now.offset == .seconds(3))
        await clock.advance(to: TestClock.Instant(offset: .seconds(1)))
        #expect(clock.now.offset == .seconds(3), "the clock never goes back")
        #expect(clock.minimumResolution == .zero)
        #expect(clock.now.description == "t+3.0 seconds")
    }

    @Test func timersRunInDeadlineOrderThenSchedulingOrder() async {
        let clock = TestClock()
        var fired: [String] = []
        let timers = [
            clock.scheduleTimer(after: .seconds(2)) { fired.append("b@2") },
            clock.scheduleTimer(after: .seconds(1)) { fired.append("a@1") },
            clock.scheduleTimer(after: .seconds(2)) { fired.append("c@2") },
            clock.scheduleTimer(after: .seconds(5)) { fired.append("d@5") },
        ]
        await clock.advance(by: .seconds(2))
        #expect(fired == ["a@1", "b@2", "c@2"])
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline?.offset == .seconds(5))
        timers[3].cancel()
        timers[3].cancel()
        await clock.advance(by: .seconds(10))
        #expect(fired == ["a@1", "b@2", "c@2"])
        #expect(clock.pendingCount == 0)
    }

    @Test func aTimerSeesTheTimeItWasDueAt() async {
        let clock = TestClock()
        var seen: [Duration] = []
        let timer = clock.scheduleTimer(after: .seconds(4)) { seen.append(clock.now.offset) }
        await clock.advance(by: .seconds(10))
        #expect(seen == [.seconds(4)])
        _ = timer
    }

    @Test func aTimerScheduledByATimerWithinTheWindowRunsInTheSameAdvance() async {
        let clock = TestClock()
        var fired: [Duration] = []
        var inner: ScheduledTimer?
        let outer = clock.scheduleTimer(after: .seconds(1)) {
            fired.append(clock.now.offset)
            inner = clock.scheduleTimer(after: .seconds(1)) { fired.append(clock.now.offset) }
        }
        await clock.advance(by: .seconds(3))
        #expect(fired == [.seconds(1), .seconds(2)])
        _ = (outer, inner)
    }

    @Test func sleepersWakeWhenTheirDeadlinePasses() async throws {
        let clock = TestClock()
        var woke: [String] = []
        let first = Task { @MainActor in
            try await clock.sleep(for: .seconds(2))
            woke.append("first")
        }
        let second = Task { @MainActor in
            try await clock.sleep(for: .seconds(1))
            woke.append("second")
        }
        while clock.pendingCount < 2 { await Task.yield() }
        await clock.advance(by: .seconds(1))
        #expect(woke == ["second"])
        await clock.advance(by: .seconds(1))
        #expect(woke == ["second", "first"])
        try await first.value
        try await second.value
    }

    @Test func aSleepForAPastDeadlineReturnsAtOnce() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(1)))
        #expect(clock.pendingCount == 0)
    }

    @Test func cancellingASleeperThrowsAndForgetsIt() async {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        while clock.pendingCount == 0 { await Task.yield() }
        sleeper.cancel()
        let result = await sleeper.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.pendingCount == 0)
    }

    @Test func aSleepInACancelledTaskThrowsWithoutWaiting() async {
        let clock = TestClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        let result = await sleeper.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.pendingCount == 0)
    }

    @Test func runAdvancesUntilNothingIsPending() async throws {
        let clock = TestClock()
        var fired = 0
        let timers = (1...3).map { clock.scheduleTimer(after: .seconds($0 * 10)) { fired += 1 } }
        try await clock.run()
        #expect(fired == 3)
        #expect(clock.now.offset == .seconds(30))
        try clock.checkNothingPending()
        _ = timers
    }

    @Test func runStopsWorkThatReschedulesItselfForever() async {
        let clock = TestClock()
        final class Repeater {
            var timer: ScheduledTimer?
            @MainActor func arm(_ clock: TestClock) {
                timer = clock.scheduleTimer(after: .seconds(1)) { [weak self] in self?.arm(clock) }
            }
        }
        let repeater = Repeater()
        repeater.arm(clock)
        let error = await #expect(throws: TestClockError.self) { try await clock.run(maxSteps: 50) }
        #expect(error == .runaway(steps: 50, pending: 1))
        #expect(error?.description.contains("reschedules itself forever") == true)
        repeater.timer?.cancel()
    }

    @Test func pendingWorkIsReportedWithWhatAndWhen() {
        let clock = TestClock()
        let timer = clock.scheduleTimer(after: .seconds(5)) {}
        let error = #expect(throws: TestClockError.self) { try clock.checkNothingPending() }
        #expect(error == .pendingWork(["a timer due at t+5.0 seconds"]))
        #expect(error?.description.contains("Advance the clock") == true)
        timer.cancel()
        #expect(throws: Never.self) { try clock.checkNothingPending() }
    }

    @Test func theKernelRunsItsTimersOnTheTestClockSynchronously() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        try host.moveToBackground()
        #expect(clock.pendingCount == 1, "the grace-period timer")
        await clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
        #expect(app.uptime == .seconds(5))
    }

    @Test func theKernelAlsoWorksOnAnOrdinaryClock() async throws {
        let host = SimulatedHost(clock: ContinuousClock(),
                                 configuration: ApplicationConfiguration(suspensionGracePeriod: .zero))
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        try host.moveToBackground()
        while app.state != .suspended { await Task.yield() }
        #expect(app.state == .suspended)
    }

    /// A test's end: every sleeper is resumed with `CancellationError` and every timer dropped,
    /// time unmoved — no task stays suspended on a clock nobody advances.
    @Test func cancelPendingEndsEveryWaitWithoutMovingTime() async throws {
        let clock = TestClock()
        var fired = false
        let timer = clock.scheduleTimer(after: .seconds(5)) { fired = true }
        let sleeper = Task { () -> String in
            do { try await clock.sleep(for: .seconds(30)); return "woke" } catch { return "\(type(of: error))" }
        }
        try await clock.waitForSleepers(1)
        let ended = clock.cancelPending()
        #expect(ended.sleepers == 1 && ended.timers == 1)
        #expect(await sleeper.value == "CancellationError")
        await clock.advance(by: .seconds(60))
        #expect(!fired && clock.now.offset == .seconds(60))
        try clock.checkNothingPending()
        _ = timer
    }
}
