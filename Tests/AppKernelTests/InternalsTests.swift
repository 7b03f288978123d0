// Checks of bookkeeping that has no public window: nothing is kept longer than needed.
import Foundation
import Testing
import AppKernelCore
@testable import AppKernel
import AppKernelTesting

@MainActor
struct InternalsTests {
    @Test func aStreamWhoseConsumerStoppedIsForgottenAtTheNextEvent() async throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var stream: AsyncStream<LifecycleEvent>? = app.lifecycleEvents()
        #expect(app.streams.count == 1)
        let consumer = Task { [stream] in
            guard let stream else { return }
            for await _ in stream { break }
        }
        stream = nil  // only the consumer holds it now
        try host.sendMemoryWarning()
        await consumer.value
        try host.sendMemoryWarning()
        #expect(app.streams.isEmpty)
    }

    @Test func droppedTokensArePrunedFromTheRegistry() throws {
        let host = SimulatedHost(traceOptions: [])
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        do {
            let tokens = (0..<3).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in } }
            #expect(app.listeners.list(.didReceiveMemoryWarning)?.count == 3)
            withExtendedLifetime(tokens) {}
        }
        try host.sendMemoryWarning()
        #expect(app.listeners.list(.didReceiveMemoryWarning)?.count == 0)
        let kept = app.addListener { _ in }
        kept.cancel()
        #expect(app.everyEventListeners.count == 0)
    }

    /// A token is Sendable; dropped on another thread, it cancels its listener on the main actor.
    @Test func aTokenDroppedOnAnotherThreadCancelsOnTheMainActor() async throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var count = 0
        /// Hands the only reference to another thread. `@unchecked`: touched by one thread at a time.
        final class Box: @unchecked Sendable { var token: ListenerToken? }
        let box = Box()
        box.token = app.addListener(for: .didReceiveMemoryWarning) { _ in count += 1 }
        try host.sendMemoryWarning()
        await Task.detached { box.token = nil }.value
        // The last reference went on another thread; the deinit runs on the main actor after.
        var turns = 0
        while app.listeners.list(.didReceiveMemoryWarning)?.count != 0, turns < 1_000 {
            await Task.yield()
            try host.sendMemoryWarning()
            turns += 1
        }
        #expect(app.listeners.list(.didReceiveMemoryWarning)?.count == 0)
        let heard = count
        try host.sendMemoryWarning()
        #expect(count == heard)
    }

    @Test func terminationForgetsTimersTasksAndPendingCompletions() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let delegate = RecordingApplicationDelegate(log: CallLog())
        delegate.fetchAnswer = nil
        let app = try host.launch(delegate: delegate)
        try host.moveToBackground()
        _ = app.beginBackgroundTask(name: "upload")
        let completion = Completion<BackgroundFetchResult>(event: "push", fallback: .failed)
        try host.send(.remoteNotification(samplePayload, completion: completion))
        try host.terminate()
        #expect(completion.result == .failed)
        #expect(!completion.answeredByApp)
        #expect(app.backgroundTasks.isEmpty)
        #expect(app.pendingCompletions.isEmpty)
        try clock.checkNothingPending()
    }
}
