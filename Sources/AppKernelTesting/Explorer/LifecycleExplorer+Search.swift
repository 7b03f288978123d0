import Foundation

/// What a ``LifecycleExplorer/check(depth:budget:seed:walkDepth:)`` explored and found.
public struct ExplorationReport: Sendable, CustomStringConvertible {
    /// The first violation, shrunk, with its printed test; `nil` when every invariant held.
    public var firstViolation: Violation?
    /// How many schedules ran (each on a fresh world), shrinking not counted.
    public var schedules: Int
    /// How many distinct states (fingerprints) were reached.
    public var distinctStates: Int
    /// The depth to which every schedule was explored (`nil` before the first level ended).
    public var exhaustedDepth: Int?
    /// How many random walks ran.
    public var walks: Int
    /// Schedules in which a step threw although enabled, or was not enabled where an earlier run
    /// of the same steps had it enabled — a sign the app's work depends on something other than
    /// the steps (the first is kept in ``firstRefusedStep``). Their states are not explored.
    public var refusedSteps: Int
    /// The first step that threw although enabled, with its schedule.
    public var firstRefusedStep: String?
    /// The wall-clock time it took.
    public var elapsed: Duration

    /// Schedules run per second of wall-clock time.
    public var schedulesPerSecond: Double {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(schedules) / seconds : 0
    }

    /// A line of figures, and the violation if any.
    public var description: String {
        let figures = "\(schedules) schedules, \(distinctStates) states, exhaustive to depth \(exhaustedDepth.map { "\($0)" } ?? "-"), \(walks) walks, \(Int(schedulesPerSecond)) schedules/s"
        guard let firstViolation else { return figures + ": every invariant held" }
        return figures + "\n" + firstViolation.description
    }
}

/// An invariant a schedule broke: the shrunk schedule and a test that reproduces it.
public struct Violation: Sendable, CustomStringConvertible {
    /// The invariant.
    public var invariant: ExplorerInvariant
    /// What it found wrong.
    public var message: String
    /// The shortest schedule found that breaks it.
    public var schedule: Schedule
    /// The schedule as first found, before shrinking.
    public var original: Schedule
    /// A Swift Testing test that runs ``schedule`` by calling the host and the world directly,
    /// and fails while the bug is there.
    public var printedTest: String

    /// The invariant, the message, the schedule and the test.
    public var description: String {
        "\(invariant) violated: \(message)\nschedule: \(schedule)" + (original == schedule ? "" : " (shrunk from: \(original))") + "\n\(printedTest)"
    }
}

extension LifecycleExplorer {
    /// One exploration's search state and counters.
    @MainActor
    struct Search {
        let explorer: LifecycleExplorer
        let budget: ExplorationBudget
        let started = ContinuousClock.now
        let startedCPU = Search.threadCPUTime()
        var schedules = 0
        var walks = 0
        var visited: [String: Int] = [:]
        var exhaustedDepth: Int?
        var refusedSteps = 0
        var firstRefusedStep: String?
        var lastProgress = ContinuousClock.now

        init(explorer: LifecycleExplorer, budget: ExplorationBudget) {
            self.explorer = explorer
            self.budget = budget
        }

        var isSpent: Bool {
            if let limit = budget.schedules, schedules >= limit { return true }
            if let limit = budget.time, Search.threadCPUTime() - startedCPU >= limit { return true }
            return false
        }

        /// Breadth first to `depth`: each level's schedules extend the new states of the level
        /// before by every enabled step.
        mutating func exhaustive(depth: Int) async throws -> (Schedule, ReplayResult.Finding)? {
            var frontier: [(Schedule, [ExplorerStep])] = []
            let root = try await explorer.run([], world: explorer.world, mode: .explore)
            schedules += 1
            if let finding = root.violations.first { return ([], finding) }
            visited[root.fingerprint] = 0
            frontier.append(([], root.enabled))
            exhaustedDepth = 0
            for level in 1...max(depth, 1) where depth > 0 {
                var next: [(Schedule, [ExplorerStep])] = []
                for (prefix, enabled) in frontier {
                    for step in enabled {
                        if isSpent { return nil }
                        let schedule = Schedule(prefix.steps + [step])
                        let run = try await explorer.run(schedule, world: explorer.world, mode: .explore)
                        count(run, schedule)
                        if let finding = run.violations.first { return (schedule, finding) }
                        if run.refusedSteps.isEmpty, visited[run.fingerprint] == nil {
                            visited[run.fingerprint] = level
                            next.append((schedule, run.enabled))
                        }
                    }
                }
                exhaustedDepth = level
                frontier = next
                if frontier.isEmpty { break }
            }
            return nil
        }

        /// Random walks from a seeded generator until the budget is spent: each step chosen
        /// among the enabled ones of the state before it, the whole walk in one world.
        mutating func randomWalks(depth: Int, seed: UInt64) async throws -> (Schedule, ReplayResult.Finding)? {
            guard depth > 0 else { return nil }
            let walk = RandomWalk(steps: depth, generator: SplitMix64(seed: seed))
            while !isSpent {
                let run = try await explorer.run([], world: explorer.world, mode: .explore, walk: walk)
                count(run, run.schedule)
                walks += 1
                if let finding = run.violations.first { return (run.schedule, finding) }
                if run.refusedSteps.isEmpty, visited[run.fingerprint] == nil { visited[run.fingerprint] = run.schedule.steps.count }
            }
            return nil
        }

        private mutating func count(_ run: Run, _ schedule: Schedule) {
            schedules += 1
            if let refused = run.refusedSteps.first {
                refusedSteps += 1
                if firstRefusedStep == nil { firstRefusedStep = "\(schedule): step \(refused.index + 1) (\(refused.step)) threw \(refused.error)" }
            }
            if let onProgress = explorer.onProgress, ContinuousClock.now - lastProgress >= .seconds(1) {
                lastProgress = ContinuousClock.now
                onProgress(report(found: nil))
            }
        }

        /// The processor time the calling thread (the main actor's) used: a time budget counts
        /// it, so a loaded machine explores as far as an idle one.
        static func threadCPUTime() -> Duration {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }

        func report(found: Violation?) -> ExplorationReport {
            ExplorationReport(firstViolation: found, schedules: schedules, distinctStates: visited.count, exhaustedDepth: exhaustedDepth,
                              walks: walks, refusedSteps: refusedSteps, firstRefusedStep: firstRefusedStep,
                              elapsed: ContinuousClock.now - started)
        }
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same walks on every machine.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
