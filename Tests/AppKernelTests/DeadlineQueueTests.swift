import Testing
@testable import AppKernel
import AppKernelTesting

@MainActor
struct DeadlineQueueTests {
    let clock = TestClock()

    @Test func deadlinesFireInDueOrderBehindOneTimer() async throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let deadlines = DeadlineQueue(application: app)
        var fired: [String] = []
        deadlines.add(after: .seconds(3)) { fired.append("c") }
        let removed = deadlines.add(after: .seconds(1)) { fired.append("removed") }
        deadlines.add(after: .seconds(2)) { fired.append("b1") }
        deadlines.add(after: .seconds(2)) { fired.append("b2") }
        deadlines.add(after: .milliseconds(500)) {
            fired.append("a")
            // An action may add deadlines; one already due runs in the same pass.
            deadlines.add(after: .zero) { fired.append("a+") }
        }
        deadlines.remove(removed)
        deadlines.remove(removed)  // a second time does nothing
        #expect(deadlines.count == 4)
        #expect(clock.pendingCount == 1, "one timer for all of them")
        await clock.advance(by: .seconds(1))
        #expect(fired == ["a", "a+"])
        await clock.advance(by: .seconds(1))
        #expect(fired == ["a", "a+", "b1", "b2"], "ties in the order they were added")
        await clock.advance(by: .seconds(5))
        #expect(fired == ["a", "a+", "b1", "b2", "c"])
        #expect(deadlines.count == 0)
        #expect(clock.pendingCount == 0)
    }

    @Test func removingEveryDeadlineCancelsTheTimerAndAnEarlierOneRearmsIt() async throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let deadlines = DeadlineQueue(application: app)
        var fired = 0
        let ids = (0..<1_000).map { index in deadlines.add(after: .seconds(20 + index)) { fired += 1 } }
        for id in ids.dropLast() { deadlines.remove(id) }
        #expect(deadlines.count == 1)
        deadlines.add(after: .seconds(1)) { fired += 100 }
        await clock.advance(by: .seconds(1))
        #expect(fired == 100, "the earlier deadline re-armed the timer")
        deadlines.remove(ids.last!)
        #expect(clock.pendingCount == 0, "nothing left: no timer")
        await clock.advance(by: .seconds(2_000))
        #expect(fired == 100)
    }
}
