import Foundation
import Testing
@testable import AppKernelAuth
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Attacks on the loopback redirect listener's resources, over real loopback sockets: a local
/// program that opens hundreds of connections and sits on them, one that drips a request a byte
/// at a time, and a process out of file descriptors (where `accept` fails and the listening
/// socket stays readable). Each asserts the bound — connections held, time, turns of the loop —
/// and that the real browser's callback still ends the login.
///
/// Real time passes in these tests (sockets and `poll` run on the kernel's clock), so each
/// bound is one-sided and generous: load can only make a loop turn less often or a deadline be
/// seen later, never the opposite. The rules themselves are tested without time in
/// `LoopbackConnectionsTests`.
///
/// One at a time: two floods side by side held over a thousand sockets in the test runner, and
/// Foundation's `Process.run()` (as of Swift 6.3) can crash reading `/proc/self/fd` when it lists
/// about 1,365 descriptors or more (it copies each `dirent` whole, past the end of glibc's 32 KiB
/// buffer) — a crash that took down a whole CI run.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct LoopbackFloodTests {
    @Test func fiveHundredIdleConnectionsHoldAtMostTheLimitAndTheBrowserStillLogsIn() async throws {
        let log = TurnLog()
        let listener = try LoopbackListener(port: 0, path: "/cb", onTurn: { log.record($0) })
        let wait = Task { try await listener.waitForCallback(state: "s", host: "127.0.0.1") }
        let flood = try await LoopbackFlood.open(count: 500, port: listener.port)

        let callback = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/cb?code=c&state=s")
        #expect(callback.status == 200 && callback.text.contains("You are logged in"))
        #expect(try await wait.value.absoluteString == "http://127.0.0.1:\(listener.port)/cb?code=c&state=s")
        #expect(log.mostOpen <= LoopbackListener.Limits.defaultConnections,
                "the listener held \(log.mostOpen) connections open; the limit is \(LoopbackListener.Limits.defaultConnections)")
        #expect(flood.closedCount == 500, "every connection is closed when the login ends")
    }

    @Test func idleConnectionsLetTheLoopSleep() async throws {
        let log = TurnLog()
        let listener = try LoopbackListener(port: 0, path: "/cb", onTurn: { log.record($0) })
        defer { listener.stop(.cancelled) }
        let wait = Task { try await listener.waitForCallback(state: "s", host: "127.0.0.1") }
        let flood = try await LoopbackFlood.open(count: 500, port: listener.port)
        // Real time on purpose: what the loop does while nothing happens. The last of the
        // queued connections are accepted in a few turns; after that, none until a deadline.
        let before = log.turns
        try await Task.sleep(for: .milliseconds(500))
        let turns = log.turns - before
        #expect(turns <= 20, "the loop turned \(turns) times in 0.5 s with idle connections: it spins")
        #expect(flood.closedCount >= 500 - LoopbackListener.Limits.defaultConnections - 20,
                "connections beyond the limit are closed (the oldest first)")
        listener.stop(.cancelled)
        _ = await wait.result
    }

    @Test func aDripConnectionIsClosedAtItsDeadlineWhateverItSends() async throws {
        let limits = LoopbackListener.Limits(connectionDeadline: .milliseconds(300))
        let listener = try LoopbackListener(port: 0, path: "/cb", limits: limits)
        let wait = Task { try await listener.waitForCallback(state: "s", host: "127.0.0.1") }
        // A byte every 50 ms: never 300 ms of silence, so only a deadline from the connection's
        // opening closes it.
        // The give-up time tells "closed at its deadline" from "never closed"; a starved machine
        // (ThreadSanitizer beside 800 tests) closes it seconds late.
        let open = try await LoopbackFlood.drip(port: listener.port, every: .milliseconds(50), giveUp: .seconds(60))
        let lasted = try #require(open, "a connection dripping a byte every 50 ms was still open after 60 s")
        #expect(lasted >= .milliseconds(250), "closed after \(lasted) (deadline 300 ms)")
        // The listener goes on serving.
        let callback = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/cb?code=c&state=s")
        #expect(callback.status == 200)
        _ = try await wait.value
    }

    @Test func anAcceptOutOfDescriptorsBacksOffAndTheBrowserIsServedAfterwards() async throws {
        let attempts = AcceptAttempts(failing: 3, with: EMFILE)
        let log = TurnLog()
        let listener = try LoopbackListener(port: 0, path: "/cb", accept: { attempts.accept($0) }, onTurn: { log.record($0) })
        let wait = Task { try await listener.waitForCallback(state: "s", host: "127.0.0.1") }
        // The browser's connection waits in the kernel's queue while accept fails.
        let callback = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/cb?code=c&state=s")
        #expect(callback.status == 200)
        _ = try await wait.value
        let times = attempts.failedAt
        try #require(times.count == 3)
        let backoff = LoopbackListener.Limits.defaultAcceptBackoff
        for (earlier, later) in zip(times, times.dropFirst()) {
            // A lower bound: load only lengthens the rest. A spinning loop retries in microseconds.
            #expect(later - earlier >= backoff - .milliseconds(5), "accept retried after \(later - earlier), not after a rest")
        }
        #expect(log.turns <= 30, "the loop turned \(log.turns) times for 3 failed accepts: it spins")
    }

    @Test func aHalfClosedAndAResetConnectionAreClosedWithoutSpinning() async throws {
        let log = TurnLog()
        let listener = try LoopbackListener(port: 0, path: "/cb", onTurn: { log.record($0) })
        let wait = Task { try await listener.waitForCallback(state: "s", host: "127.0.0.1") }
        let halfClosed = try LoopbackFlood.connect(port: listener.port)
        _ = send(halfClosed, "GET /c", 6, Int32(MSG_NOSIGNAL))
        _ = shutdown(halfClosed, Int32(SHUT_WR))
        let reset = try LoopbackFlood.connect(port: listener.port)
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(reset, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        _ = close(reset)   // RST
        #expect(await LoopbackFlood.closedByPeer(halfClosed, within: 20_000), "the half-closed connection is closed by the listener")
        _ = close(halfClosed)
        let callback = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/cb?code=c&state=s")
        #expect(callback.status == 200)
        _ = try await wait.value
        #expect(log.turns <= 30, "the loop turned \(log.turns) times for four connections: it spins")
    }
}

/// An `accept` that fails the first `failing` times with `code`, as a process out of file
/// descriptors does, and records when; then accepts for real.
final class AcceptAttempts: Sendable {
    private let state: Locked<(left: Int, failedAt: [ContinuousClock.Instant])>
    private let code: Int32

    init(failing: Int, with code: Int32) {
        state = Locked((failing, []))
        self.code = code
    }

    func accept(_ listener: Int32) -> POSIX.AcceptResult {
        let fail: Bool = state.withLock { state in
            guard state.left > 0 else { return false }
            state.left -= 1
            state.failedAt.append(.now)
            return true
        }
        return fail ? .failed(code) : POSIX.acceptConnection(listener)
    }

    var failedAt: [ContinuousClock.Instant] { state.withLock { $0.failedAt } }
}
