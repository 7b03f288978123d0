// Complexity, counted rather than timed: debug builds count the elements the listener lists, the
// hook lists and the event queue move when they compact, and the sorts of hook lists. Each test
// is synchronous on the main actor, so no other test's work lands between its two readings.
import Foundation
import Testing
import AppKernelCore
@testable import AppKernel
import AppKernelTesting

#if DEBUG
@MainActor
struct ComplexityTests {
    static let count = 20_000

    @Test(arguments: [false, true])
    func cancellingListenersOneByOneMovesLinearlyMany(newestFirst: Bool) throws {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let moved = ListenerList.elementsMoved
        var tokens = (0..<Self.count).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in } }
        if newestFirst { tokens.reverse() }
        for token in tokens { token.cancel() }
        #expect(app.listeners.list(.didReceiveMemoryWarning)?.count == 0)
        #expect(ListenerList.elementsMoved - moved <= 2 * Self.count, "O(n) moves for n cancels, not O(n²)")
    }

    @Test(arguments: [0, 1, -1])
    func hooksRegisterAndCancelInLinearWork(priorityStep: Int) throws {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let (moved, sorts) = (HookStageCounters.elementsMoved, HookStageCounters.sorts)
        // priorityStep 1: every hook outranks the one before — the worst case for sorted insertion.
        var ran: [Int] = []
        let tokens = (0..<Self.count).map { index in
            app.hooks.before(.didReceiveMemoryWarning, priority: index * priorityStep) { _ in ran.append(index) }
        }
        try host.sendMemoryWarning()
        #expect(ran.count == Self.count)
        let expected = Array(0..<Self.count)
        #expect(ran == (priorityStep > 0 ? expected.reversed() : expected), "priority first, then registration order")
        #expect(HookStageCounters.sorts - sorts <= 1, "one sort, by the first dispatch, however many registrations")
        for token in tokens { token.cancel() }
        #expect(!app.hooks.hasHooks(at: ApplicationEvent.didReceiveMemoryWarning))
        #expect(HookStageCounters.elementsMoved - moved <= 2 * Self.count, "O(n) moves for n cancels, not O(n²)")
    }

    @Test func cancellingHooksBetweenDispatchesStaysLinear() throws {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let moved = HookStageCounters.elementsMoved
        let tokens = (0..<2_000).map { _ in app.hooks.after(.didReceiveMemoryWarning) { _ in } }
        // A dispatch after every cancel compacts what one cancel marked: each costs the live count,
        // which the dispatch's pass over the hooks pays anyway.
        for token in tokens.prefix(100) {
            token.cancel()
            try host.sendMemoryWarning()
        }
        #expect(app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: .after).count == 1_900)
        #expect(HookStageCounters.elementsMoved - moved <= 100 * 2_000)
    }

    @Test func aBurstOfReentrantEventsDrainsInLinearWork() throws {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let burst = 100_000
        var heard = 0
        var queued = 0
        let token = app.addListener(for: .didReceiveMemoryWarning) { app in
            heard += 1
            guard heard == 1 else { return }
            for _ in 0..<burst {
                if case .queued = try? app.handle(.memoryWarning) { queued += 1 }
            }
        }
        let moved = EventQueueCounters.elementsMoved
        try host.sendMemoryWarning()
        #expect(queued == burst, "every event raised during the delivery waits its turn")
        #expect(heard == burst + 1)
        #expect(EventQueueCounters.elementsMoved - moved <= 2 * burst, "O(k) moves for a burst of k, not O(k²)")
        withExtendedLifetime(token) {}
    }
}
#endif
