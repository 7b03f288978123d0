import Foundation
import TestSupport

/// How many times a kill test kills its writer, and when: the CI count, or 1,000 with
/// `APPKERNEL_KILL_TESTS=long` (`.ci/kill-tests`); the moments come from a seeded generator
/// (`APPKERNEL_KILL_SEED`, printed with the results) so that a failing run replays.
public struct KillRounds: Sendable {
    /// The rounds to run.
    public let count: Int
    /// Whether this is the long mode.
    public let isLong: Bool
    /// The seed of the moments.
    public let seed: UInt64
    private var state: UInt64

    /// `ci` rounds normally; 1,000 in the long mode; a quarter of `ci` (at least 10) under
    /// `.ci/sanitizers` (`APPKERNEL_SANITIZER` set), where each round's sanitized child costs 5–10×:
    /// the sanitizer looks at the writer's memory and threads, which a few dozen kills exercise as
    /// well as 200, and the plain suite runs every round.
    public init(ci: Int) {
        let environment = ProcessInfo.processInfo.environment
        isLong = environment["APPKERNEL_KILL_TESTS"] == "long"
        let sanitized = environment["APPKERNEL_SANITIZER"] != nil
        count = isLong ? 1_000 : sanitized ? max(10, ci / 4) : ci
        seed = environment["APPKERNEL_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        state = seed
    }

    /// The next number in `range` (SplitMix64).
    public mutating func next(in range: ClosedRange<Int>) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return range.lowerBound + Int(z % UInt64(range.count))
    }

    /// Lets `microseconds` pass: the random moment of a kill, after the child's own signal that
    /// it is writing. (The moment is wall-clock by nature; nothing waits for a condition here.)
    public static func pause(microseconds: Int) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(microseconds)) { done.resume() }
        }
    }

    /// Prints a broken variant's figures: how many of its kills left damage the checks found.
    public func report(_ name: String, caught: Int) {
        figure("kill test \(name): \(caught) of \(count) kills caught, \(count - caught) uncaught (seed \(seed)\(isLong ? ", long mode" : ""))")
    }
}
