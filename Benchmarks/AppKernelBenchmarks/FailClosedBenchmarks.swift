import AppKernelSDK
import Foundation

/// What failing closed costs where a user waits: a wrong passcode answer with its failure count
/// written and fsync'd before the answer is judged (`FilePasscodeStore`), beside the same answer
/// judged against a record kept in memory. Both derive the same PBKDF2 key; the difference,
/// round by round, is what persisting the count adds.
@MainActor
enum FailClosedBenchmark {
    struct Figures {
        var inMemory: Stats
        var persisted: Stats
        /// Persisted minus in memory, per wrong answer, round by round.
        var added: Stats
    }

    static func measure(rounds: Int, answersPerRound: Int = 5) throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appkernel-bench-passcode-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let managers = [PasscodeManager(store: InMemoryPasscodeStore()),
                        PasscodeManager(store: FilePasscodeStore(url: directory.appendingPathComponent("passcode.json")))]
        let stats = try Measure.stats(rounds: rounds, warmUp: true, managers.map { manager in
            { @MainActor in
                try manager.setPasscode("2468")
                let seconds = Measure.time {
                    for _ in 0..<answersPerRound { precondition(!manager.verify("0000"), "a wrong answer was accepted") }
                }
                precondition(manager.failedAttempts == answersPerRound, "the failures were not counted")
                return seconds / Double(answersPerRound)
            }
        })
        return Figures(inMemory: stats[0], persisted: stats[1], added: stats[1].zip(stats[0], -))
    }
}
