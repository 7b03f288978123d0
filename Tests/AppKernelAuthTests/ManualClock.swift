import Foundation
import AppKernelCore

/// A clock the test moves by hand: `sleep` waits until `advance` passes its deadline, so
/// deadlines and polling intervals are tested without waiting in real time. It records every
/// sleep's length, and lets a test wait (without sleeping) until someone sleeps on it.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol, Hashable {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>?
        var cancelled = false
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var sleeps: [Duration] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    /// Every sleep's length, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resume, watchers): (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
                    if state.sleepers[id]?.cancelled == true { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    state.sleeps.append(state.now.duration(to: deadline))
                    let live = state.sleepers.values.filter { $0.continuation != nil }.count
                    let ready = state.watchers.filter { $0.count <= live }.map(\.continuation)
                    state.watchers.removeAll { $0.count <= live }
                    return (nil, ready)
                }
                if let resume { continuation.resume(with: resume) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                guard let sleeper = state.sleepers[id], let continuation = sleeper.continuation else {
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: nil, cancelled: true)
                    return nil
                }
                state.sleepers[id] = nil
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time on by `duration`, waking every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let ready = state.sleepers.filter { $0.value.continuation != nil && $0.value.deadline <= now }
            for id in ready.keys { state.sleepers[id] = nil }
            return ready.values.compactMap(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on the clock.
    func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready: Bool = state.withLock { state in
                if state.sleepers.values.filter({ $0.continuation != nil }).count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
