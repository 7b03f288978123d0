@testable import AccountsApp
import AppKernel
import AppKernelCore
import AppKernelTesting
import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real AccountsApp, journaled (`APPKERNEL_JOURNAL`), sent signals at seeded random moments
/// and killed at a seeded random point; its journal replayed in-process on a `SimulatedHost`
/// with the app's own world gives the identical trace up to the kill.
struct AccountsAppJournalTests {
    @Test(arguments: 1...20)
    func aJournalOfARunKilledAtARandomPointReplaysToTheIdenticalTrace(seed: Int) async throws {
        var random = SeededRandom(seed: UInt64(seed))
        let home = try TemporaryDataHome()
        let journalURL = home.url.appendingPathComponent("run.journal")
        // --interactive with standard input left open: the app runs until it is signalled or killed.
        let child = try ChildProcess(executable: "AccountsApp", environment: home.environment.merging(["APPKERNEL_JOURNAL": journalURL.path]) { $1 },
                                     arguments: ["--interactive"])
        #expect(await child.waitUntil(seconds: 60) { lines, status in status != nil || lines.contains { $0.contains("launched:") } },
                "the app never said it launched; stderr: \(child.errors)")
        #expect(child.status == nil, "stderr: \(child.errors)")

        // Signals at random moments once the app is ready (a signal before the host's handlers
        // are installed would end it: SIGUSR1's and SIGHUP's default), SIGCONT only to a stopped
        // app; each waited for in the journal but, at random, the last, after which the kill may
        // land while the app is still delivering it.
        var stopped = false
        var journaled = 1   // the launch
        let signals = random.next(in: 0...6)
        for index in 0..<signals {
            // A random moment: up to 50 ms after the last event reached the journal (the root
            // controller's sync may still be running).
            await KillRounds.pause(microseconds: random.next(in: 0...50_000))
            if stopped {
                // Stopped first: a SIGCONT before the host's own SIGSTOP would leave it stopped.
                #expect(await child.waitUntil(seconds: 30) { _, _ in Self.processState(child.pid) == "T" })
            }
            let signal = stopped ? SIGCONT : [SIGTSTP, SIGHUP, SIGUSR1][random.next(in: 0...2)]
            stopped = signal == SIGTSTP
            child.send(signal)
            journaled += 1
            if index < signals - 1 || random.next(in: 0...1) == 0 {
                #expect(await Self.waitForSteps(journaled, in: journalURL), "signal \(signal) never reached the journal")
            }
        }
        if random.next(in: 0...1) == 0 { await KillRounds.pause(microseconds: random.next(in: 0...20_000)) }
        child.send(SIGKILL)
        #expect(await child.waitForExit(seconds: 30) == 128 + SIGKILL)

        let journal = try String(contentsOf: journalURL, encoding: .utf8)
        #expect(journal.hasPrefix("# appkernel journal 1\n# executable: AccountsApp\n# arguments:\n"))
        let replayHome = try TemporaryDataHome()
        let scope = SharedScope(name: "journal replay, seed \(seed)")
        defer { scope.finish() }
        let replay = try await scope.withValue {
            try await Self.replay(journal, environment: replayHome.environment)
        }
        #expect(replay.isIdentical, "seed \(seed): \(replay)\n\(journal)")
        #expect(replay.matchedObservations >= 20, "the launch's trace at least: \(replay)")
        withExtendedLifetime(home) {}
        withExtendedLifetime(replayHome) {}
    }

    /// The journal replayed on a `SimulatedHost` with AccountsApp's world on a fresh data home.
    @MainActor
    static func replay(_ journal: String, environment: [String: String]) async throws -> JournalReplay {
        Console.isMuted = true
        let dataHome = try DataHome.forApp("AccountsApp", environment: environment).url
        let provider = try KeyProvider.keyFile(application: "AccountsApp", environment: environment)
        let accounts = try AccountsWorld.make(dataHome: dataHome, keyProvider: provider, options: Options([]))
        // The journal's steps run through the explorer's step runner on a world of AccountsApp's
        // app; the world is torn down at the end (the app terminated, its clock's waiters ended).
        let replay = try await SimulatedHost.replay(journal: journal) {
            let world = ExplorerWorld(expression: "AccountsApp") { _ in accounts.delegate }
            world.host.beforeEachLaunch { accounts.attach(to: $0) }
            return world
        }
        return replay
    }

    /// The process's state letter from `/proc` (`T` when stopped).
    static func processState(_ pid: Int32) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("State:") }?.split(separator: "\t").last.map { String($0.prefix(1)) }
    }

    /// Waits (30 s at most) until the journal holds `count` steps.
    static func waitForSteps(_ count: Int, in journal: URL) async -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: journal, encoding: .utf8)) ?? ""
            let steps = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("=") && !$0.hasPrefix("+") }.count
            if steps >= count { return true }
            await KillRounds.pause(microseconds: 5_000)
        }
        return false
    }
}

/// SplitMix64 from a seed: the test's random moments, the same for a seed on every run.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return range.lowerBound + Int(z % UInt64(range.count))
    }
}
