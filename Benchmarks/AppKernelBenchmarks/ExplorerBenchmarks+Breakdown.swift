// Section 13's breakdown: where a run of the explorer's search spends its time.
import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelREST
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Foundation

// MARK: Where a run's time goes

/// The SDK launch phases' wall time, phase by phase, counted when a phase began and ended with no
/// step between (in one step's settle, or in the finish); a phase that waited across steps (a
/// held login or passcode prompt) is counted apart, its time not (it includes the steps between).
@MainActor
final class PhaseTimer {
    static var current: PhaseTimer?
    /// The step being run, counted by ``Breakdown``.
    var step = 0
    var seconds: [LaunchPhase: Double] = [:]
    var waited = 0, ran = 0

    func add(_ phase: LaunchPhase, _ elapsed: Double, sameStep: Bool) {
        ran += 1
        if sameStep { seconds[phase, default: 0] += elapsed } else { waited += 1 }
    }
}

/// The explorer's breadth-first search again, through a copy of `LifecycleExplorer.run` (explore
/// mode, public API only) whose parts are timed: the scope, the world's creation, the launch and
/// the other steps, the settling after each (its yields counted), the invariants, the fingerprint
/// and the enabled steps, the finish and the end invariants, the tear-down.
@MainActor
struct Breakdown {
    enum Part: String, CaseIterable {
        case scope = "scope: made, entered, finished"
        case world = "world creation (host, clock; SDK: manager, accounts, passcode, data home, key ring)"
        case launch = "launch step (the kernel's launch, the delegate's didFinishLaunching)"
        case steps = "other steps"
        case settle = "settling after each step (yields: the SDK's launch phases, the app's tasks)"
        case invariants = "invariants after each step"
        case fingerprint = "fingerprint and enabled steps"
        case finish = "finish (time past every deadline, its settle) and end invariants"
        case tearDown = "tear-down (terminate, end waits, remove the data home)"
    }

    var seconds: [Part: Double] = [:]
    var schedules = 0, states = 0, steps = 0, yields = 0, settles = 0
    var phases = PhaseTimer()
    var total = 0.0

    var schedulesPerSecond: Double { Double(schedules) / total }

    /// Runs the search to `depth` on `world`'s worlds, timing every run.
    static func measure(world factory: @escaping LifecycleExplorer.WorldFactory, steps: StepSet, depth: Int) async throws -> Breakdown {
        var breakdown = Breakdown()
        PhaseTimer.current = breakdown.phases
        defer { PhaseTimer.current = nil }
        // As LifecycleExplorer looks them up: each name's first definition, the alphabet with its definitions.
        var definitions: [String: StepDefinition] = [:]
        for definition in steps.definitions where definitions[definition.name] == nil { definitions[definition.name] = definition }
        let alphabet = steps.definitions.flatMap { definition in definition.arguments.map { ExplorerStep(definition.name, $0) } }
            .filter { definitions[$0.name] != nil }
        let isEnabled = alphabet.map { definitions[$0.name]!.isEnabled }
        var visited = Set<String>()
        let started = ContinuousClock.now
        let root = try await breakdown.run([], factory, definitions, alphabet, isEnabled)
        guard let root else { throw JournalBenchmark.BenchmarkFailure("explorer benchmark: the empty schedule did not run") }
        visited.insert(root.fingerprint)
        var frontier: [([ExplorerStep], [ExplorerStep])] = [([], root.enabled)]
        for _ in 0..<depth {
            var next: [([ExplorerStep], [ExplorerStep])] = []
            for (prefix, enabled) in frontier {
                for step in enabled {
                    let schedule = prefix + [step]
                    guard let run = try await breakdown.run(schedule, factory, definitions, alphabet, isEnabled) else { continue }
                    if visited.insert(run.fingerprint).inserted { next.append((schedule, run.enabled)) }
                }
            }
            frontier = next
            if frontier.isEmpty { break }
        }
        breakdown.total = Measure.seconds(ContinuousClock.now - started)
        breakdown.states = visited.count
        return breakdown
    }

    /// One run, timed part by part; its final fingerprint and enabled steps, `nil` when a step
    /// was refused.
    private mutating func run(_ schedule: [ExplorerStep], _ factory: LifecycleExplorer.WorldFactory, _ definitions: [String: StepDefinition],
                              _ alphabet: [ExplorerStep], _ isEnabled: [@MainActor @Sendable (ExplorerWorld, String?) -> Bool]) async throws -> (fingerprint: String, enabled: [ExplorerStep])? {
        schedules += 1
        var mark = ContinuousClock.now
        func lap(_ part: Part, _ seconds: inout [Part: Double]) {
            let now = ContinuousClock.now
            seconds[part, default: 0] += Measure.seconds(now - mark)
            mark = now
        }
        let scope = SharedScope(name: "LifecycleExplorer: \(Schedule(schedule))")
        let result: (fingerprint: String, enabled: [ExplorerStep])? = try await scope.withValue {
            lap(.scope, &seconds)
            let world = try await factory()
            lap(.world, &seconds)
            var seen = Set<String>()
            let invariants = world.standardInvariants.filter { seen.insert($0.name).inserted }
            var refused = false
            for step in schedule {
                phases.step += 1
                self.steps += 1
                let definition = definitions[step.name]!
                guard definition.isEnabled(world, step.argument) else { refused = true; break }
                do { try await definition.perform(world, step.argument) } catch { refused = true }
                lap(step.name == "launch" || step.name == "launchInBackground" ? .launch : .steps, &seconds)
                yields += await Self.settle(world)
                settles += 1
                lap(.settle, &seconds)
                for invariant in invariants where invariant.timing == .afterEachStep {
                    if let message = world.violation(of: invariant) {
                        throw JournalBenchmark.BenchmarkFailure("explorer benchmark: \(Schedule(schedule)) violates \(invariant): \(message)")
                    }
                }
                lap(.invariants, &seconds)
                if refused { break }
            }
            var result: (fingerprint: String, enabled: [ExplorerStep])?
            if !refused {
                result = (world.fingerprint().joined(separator: "\n"),
                          alphabet.indices.filter { isEnabled[$0](world, alphabet[$0].argument) }.map { alphabet[$0] })
                lap(.fingerprint, &seconds)
                await world.finish()
                for invariant in invariants {
                    if let message = world.violation(of: invariant) {
                        throw JournalBenchmark.BenchmarkFailure("explorer benchmark: \(Schedule(schedule)) violates \(invariant) at the end: \(message)")
                    }
                }
                lap(.finish, &seconds)
            }
            phases.step += 1
            await world.tearDown()
            lap(.tearDown, &seconds)
            return result
        }
        scope.finish()
        lap(.scope, &seconds)
        return result
    }

    /// `ExplorerWorld.settle()`, its yields counted: yields the main actor until nothing
    /// observable changed for 3 yields in a row and the app's work waits on a step, at most
    /// `settleYields` times, then tells the world the step settled (the invariants checked next
    /// note tracked work running while suspended, as `settle()` does).
    static func settle(_ world: ExplorerWorld) async -> Int {
        var last = world.activity, quiet = 0, yields = 0
        for _ in 0..<world.settleYields {
            await Task.yield()
            yields += 1
            let now = world.activity
            quiet = now == last ? quiet + 1 : 0
            last = now
            if quiet >= 3, world.isQuiescent { break }
        }
        world.stepDidSettle()
        return yields
    }

    /// The parts, their share of the time and their time per schedule; the yields; the SDK phases.
    func table(title: String) -> String {
        let measured = seconds.values.reduce(0, +)
        var rows = Part.allCases.filter { seconds[$0] != nil }.map { part in
            Row(name: "    " + part.rawValue, values: [String(format: "%.1f%%", 100 * seconds[part]! / measured),
                                                      Format.time(seconds[part]! / Double(schedules))])
        }
        rows.append(Row(name: "    (the search's own bookkeeping, outside the runs)",
                        values: [String(format: "%.1f%% of the wall time", 100 * (total - measured) / total), ""]))
        var text = AppKernelBenchmarks.table(title: title, header: ["    part", "share", "per schedule"], rows: rows)
        text += String(format: "\n    %d steps (%.2f per schedule); %d settles, %d yields (%.1f per settle, %.1f per schedule)",
                       steps, Double(steps) / Double(schedules), settles, yields, Double(yields) / Double(max(settles, 1)),
                       Double(yields) / Double(schedules))
        if phases.ran > 0 {
            let phaseTotal = phases.seconds.values.reduce(0, +)
            let each = LaunchPhase.allCases.compactMap { phase in
                phases.seconds[phase].map { "\(phase) " + String(format: "%.1f%%", 100 * $0 / measured) }
            }
            text += String(format: "\n    SDK launch phases (begun and ended with no step between; the finish's relaunch after a failed launch included): %.1f%% of the time — ", 100 * phaseTotal / measured)
                + each.joined(separator: ", ") + "; \(phases.ran) phases ran, \(phases.waited) waited across steps (a held login or passcode) and are not timed"
        }
        return text
    }
}
