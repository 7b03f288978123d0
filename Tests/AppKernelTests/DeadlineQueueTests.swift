import Testing
@testable import AppKernel
import AppKernelTesting

@MainActor
struct DeadlineQueueTests {
    let clock = TestClock()

    @Test func deadlinesPassInDueOrderBehindOneTimer() async throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        var passed: [Int] = []
        var deadlines: DeadlineQueue?
        deadlines = DeadlineQueue(application: app) { tag in
            passed.append(tag)
            // A deadline that passes may add another; one already due is handed over in the same pass.
            if tag == 1 { deadlines?.add(after: .zero, tag: 11) }
        }
        let queue = try #require(deadlines)
        queue.add(after: .seconds(3), tag: 4)
        let removed = queue.add(after: .seconds(1), tag: 99)
        queue.add(after: .seconds(2), tag: 2)
        queue.add(after: .seconds(2), tag: 3)
        queue.add(after: .milliseconds(500), tag: 1)
        queue.remove(removed)
        queue.remove(removed)  // a second time does nothing
        #expect(queue.count == 4)
        #expect(clock.pendingCount == 1, "one timer for all of them")
        await clock.advance(by: .seconds(1))
        #expect(passed == [1, 11])
        await clock.advance(by: .seconds(1))
        #expect(passed == [1, 11, 2, 3], "ties in the order they were added")
        await clock.advance(by: .seconds(5))
        #expect(passed == [1, 11, 2, 3, 4])
        #expect(queue.count == 0)
        #expect(clock.pendingCount == 0)
        deadlines = nil   // the queue's closure holds `deadlines`: let the cycle go
    }

    @Test func removalsKeepTheQueueSmallAndAnEarlierDeadlineRearmsTheTimer() async throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        var passed: [Int] = []
        let queue = DeadlineQueue(application: app) { passed.append($0) }
        let ids = (0..<1_000).map { queue.add(after: .seconds(20 + $0), tag: $0) }
        for id in ids.dropLast() { queue.remove(id) }
        #expect(queue.count == 1)
        queue.add(after: .seconds(1), tag: -1)
        await clock.advance(by: .seconds(1))
        #expect(passed == [-1], "the earlier deadline re-armed the timer")
        queue.remove(ids.last!)
        queue.releaseTimerIfIdle()
        #expect(clock.pendingCount == 0, "nothing left: no timer")
        await clock.advance(by: .seconds(2_000))
        #expect(passed == [-1])
        // Reused after going idle.
        queue.add(after: .seconds(1), tag: 5)
        await clock.advance(by: .seconds(1))
        #expect(passed == [-1, 5])
    }
}
