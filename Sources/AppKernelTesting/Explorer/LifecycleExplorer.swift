import AppKernelCore

/// Walks the orderings of system, SDK and world events an app can meet — every schedule to a
/// depth, then seeded random walks deeper — checks invariants after every step, and for the
/// first violation gives the shortest schedule it could find and a test that reproduces it.
///
/// ```swift
/// let explorer = LifecycleExplorer(world: { PhotoApp.makeWorld() },
///                                  steps: .system, invariants: .standard)
/// let report = try await explorer.check(depth: 4, budget: .schedules(20_000))
/// if let found = report.firstViolation { print(found.printedTest) }
/// ```
///
/// Every schedule runs the app's real code on a fresh world — made by the `world` closure inside
/// a fresh `SharedScope`, so `SDKManager.shared` and every other process-wide object is the
/// schedule's own — and ends with the world torn down. States are pruned by the world's
/// ``ExplorerWorld/fingerprint()``: a schedule that reaches a state an equal or shorter one
/// reached is not extended.
@MainActor
public final class LifecycleExplorer {
    /// Makes a fresh world.
    public typealias WorldFactory = @MainActor () async throws -> ExplorerWorld

    /// Makes the world each schedule runs in.
    public let world: WorldFactory
    /// The steps schedules are made of.
    public let steps: StepSet
    /// What is checked.
    public let invariants: InvariantSet
    /// Called at most once a second during a long ``check(depth:budget:seed:walkDepth:)`` with
    /// where it is.
    public var onProgress: (@MainActor (ExplorationReport) -> Void)?

    /// Creates an explorer.
    /// - Parameters:
    ///   - world: Makes a fresh app for each schedule.
    ///   - steps: The alphabet; ``StepSet/system`` by default.
    ///   - invariants: What to check; the world's standard set by default.
    public init(world: @escaping WorldFactory, steps: StepSet = .system, invariants: InvariantSet = .standard) {
        self.world = world
        self.steps = steps
        self.invariants = invariants
        var byName: [String: StepDefinition] = [:]
        for definition in steps.definitions where byName[definition.name] == nil { byName[definition.name] = definition }
        self.definitions = byName
        let alphabet = steps.alphabet.filter { byName[$0.name] != nil }
        self.alphabet = alphabet
        self.isEnabled = alphabet.map { byName[$0.name]!.isEnabled }
    }

    /// Each step name's definition, as `steps.definition(named:)` answers it (the first of a
    /// name), looked up once: runs look their steps up here.
    private let definitions: [String: StepDefinition]
    /// Every step of the alphabet, in order, and beside it (same index) its definition's
    /// `isEnabled`: what a run asks which steps are enabled, without copying definitions.
    private let alphabet: [ExplorerStep]
    private let isEnabled: [@MainActor @Sendable (ExplorerWorld, String?) -> Bool]

    /// Explores: every schedule of up to `depth` enabled steps (breadth first, so the first
    /// violation has the fewest steps), then seeded random walks of up to `walkDepth` steps,
    /// until the budget is spent. Stops at the first violation and shrinks it.
    /// - Parameters:
    ///   - depth: How deep the exhaustive search goes.
    ///   - budget: When to stop: a number of schedules run, or processor time.
    ///   - seed: The random walks' seed: the same seed walks the same schedules.
    ///   - walkDepth: How long a random walk is; twice `depth` by default. 0 walks none.
    /// - Returns: What was explored, and the first violation if any.
    /// - Throws: The world closure's error; ``UnknownStepError`` never (the explorer only takes
    ///   steps of its own set).
    public func check(depth: Int, budget: ExplorationBudget = .seconds(60), seed: UInt64 = 1,
                      walkDepth: Int? = nil) async throws -> ExplorationReport {
        var search = Search(explorer: self, budget: budget)
        if let found = try await search.exhaustive(depth: depth) {
            return search.report(found: try await shrink(found))
        }
        if let found = try await search.randomWalks(depth: walkDepth ?? depth * 2, seed: seed) {
            return search.report(found: try await shrink(found))
        }
        return search.report(found: nil)
    }

    /// Runs `schedule` once on a fresh world (this explorer's, or `world`) and says which
    /// invariants it violates. Every step runs, enabled or not; a step that throws is reported.
    /// - Throws: The world closure's error; ``UnknownStepError`` for a step the set does not define.
    public func replay(_ schedule: Schedule, world: WorldFactory? = nil) async throws -> ReplayResult {
        let run = try await self.run(schedule, world: world ?? self.world, mode: .replay)
        return ReplayResult(schedule: schedule, violations: run.violations, refusedSteps: run.refusedSteps)
    }

    /// Runs the schedule written in `text` (`"launch; background; +30s"`); see the `Schedule` form of `replay(_:world:)`.
    public func replay(_ text: String, world: WorldFactory? = nil) async throws -> ReplayResult {
        try await replay(Schedule(parsing: text), world: world)
    }

    // MARK: Running one schedule

    /// How a run treats its steps.
    enum Mode {
        /// Exploring: every step is enabled; stop at the first violation; report the final
        /// state's fingerprint and enabled steps.
        case explore
        /// Replaying: run every step; collect every invariant's first violation.
        case replay
        /// Shrinking: as replaying, but a step not enabled where it comes is refused (not run).
        case shrink
    }

    /// What one run found.
    struct Run {
        var schedule: Schedule = []
        var violations: [ReplayResult.Finding] = []
        var refusedSteps: [ReplayResult.RefusedStep] = []
        var fingerprint = ""
        var enabled: [ExplorerStep] = []
    }

    /// Runs `schedule` on a fresh world in a fresh scope: the steps, the invariants after each,
    /// then — with a `walk` — up to `walk.steps` more steps chosen at random among the enabled
    /// ones, then the world's finish and the end invariants, then its tear-down.
    func run(_ schedule: Schedule, world factory: WorldFactory, mode: Mode, walk: RandomWalk? = nil) async throws -> Run {
        let scope = SharedScope(name: "LifecycleExplorer: \(schedule)")
        defer { scope.finish() }
        return try await scope.withValue {
            // Not tied to a surrounding `appKernel` test: each schedule's world ends here.
            let world = try await AppKernelTest.$running.withValue(nil) { try await factory() }
            world.steps = steps
            let invariants = self.invariants.resolved(in: world)
            var run = Run()
            var seen = Set<String>()
            @MainActor func check(_ timing: ExplorerInvariant.Timing?, after index: Int?) {
                for invariant in invariants where timing == nil || invariant.timing == timing {
                    guard !seen.contains(invariant.name), let message = invariant.check(world) else { continue }
                    seen.insert(invariant.name)
                    run.violations.append(ReplayResult.Finding(invariant: invariant, message: message, afterStep: index))
                }
            }
            @MainActor func take(_ step: ExplorerStep) async throws {
                guard let definition = definitions[step.name] else {
                    await world.tearDown()
                    throw UnknownStepError(step: step.description, known: steps.definitions.map(\.name))
                }
                let index = run.schedule.steps.count
                run.schedule.steps.append(step)
                if mode != .replay, !definition.isEnabled(world, step.argument) {
                    // Exploring, a step the last run of this prefix had enabled: the app is not
                    // deterministic (its work depends on something other than the steps).
                    run.refusedSteps.append(ReplayResult.RefusedStep(index: index, step: step, error: "not enabled here"))
                    return
                }
                do {
                    try await definition.perform(world, step.argument)
                } catch {
                    run.refusedSteps.append(ReplayResult.RefusedStep(index: index, step: step, error: "\(error)"))
                }
                await world.settle()
                check(.afterEachStep, after: index)
            }
            @MainActor func enabled() -> [ExplorerStep] {
                var enabled: [ExplorerStep] = []
                for index in alphabet.indices where isEnabled[index](world, alphabet[index].argument) { enabled.append(alphabet[index]) }
                return enabled
            }
            for step in schedule.steps {
                try await take(step)
                if mode != .replay, !run.violations.isEmpty || !run.refusedSteps.isEmpty { break }
            }
            if let walk {
                for _ in 0..<walk.steps where run.violations.isEmpty {
                    let choices = enabled()
                    guard !choices.isEmpty else { break }
                    try await take(choices[Int(walk.generator.next() % UInt64(choices.count))])
                }
            }
            let refused = mode != .replay && !run.refusedSteps.isEmpty
            if mode == .explore, run.violations.isEmpty, !refused {
                run.fingerprint = world.fingerprint().joined(separator: "\n")
                run.enabled = enabled()
            }
            if mode == .replay || (run.violations.isEmpty && !refused) {
                await world.finish()
                check(nil, after: nil)
            }
            await world.tearDown()
            return run
        }
    }

    /// A random walk's length and generator.
    final class RandomWalk {
        let steps: Int
        var generator: SplitMix64
        init(steps: Int, generator: SplitMix64) {
            self.steps = steps
            self.generator = generator
        }
    }
}

/// When a ``LifecycleExplorer/check(depth:budget:seed:walkDepth:)`` stops: after a number of
/// schedules (the same search on every machine), or after an amount of processor time of the
/// thread it runs on — the main actor's, which other main-actor work shares — rather than
/// wall-clock time, so that a machine short of cores explores about as far as an idle one.
public struct ExplorationBudget: Sendable, Hashable {
    /// At most this many schedules.
    public var schedules: Int?
    /// At most this much processor time.
    public var time: Duration?

    /// Stop after `count` schedules.
    public static func schedules(_ count: Int) -> ExplorationBudget { ExplorationBudget(schedules: count, time: nil) }
    /// Stop after `seconds` of processor time.
    public static func seconds(_ seconds: Int64) -> ExplorationBudget { ExplorationBudget(schedules: nil, time: .seconds(seconds)) }
    /// Stop after `duration` of processor time.
    public static func time(_ duration: Duration) -> ExplorationBudget { ExplorationBudget(schedules: nil, time: duration) }
}

/// What a `LifecycleExplorer.replay(_:world:)` found.
public struct ReplayResult: Sendable {
    /// An invariant a run violated.
    public struct Finding: Sendable {
        /// The invariant.
        public var invariant: ExplorerInvariant
        /// What it found wrong.
        public var message: String
        /// The index of the step after which it was found; `nil` at the end.
        public var afterStep: Int?
    }

    /// A step that threw.
    public struct RefusedStep: Sendable, Hashable {
        /// Its index in the schedule.
        public var index: Int
        /// The step.
        public var step: ExplorerStep
        /// Its error, as text.
        public var error: String
    }

    /// The schedule replayed.
    public var schedule: Schedule
    /// Each violated invariant's first violation, in the order found.
    public var violations: [Finding]
    /// The steps that threw (an illegal event, a step whose precondition did not hold).
    public var refusedSteps: [RefusedStep]

    /// Whether `invariant` was violated.
    public func violates(_ invariant: ExplorerInvariant) -> Bool { violations.contains { $0.invariant == invariant } }

    /// Whether every invariant held and every step ran.
    public var holds: Bool { violations.isEmpty && refusedSteps.isEmpty }
}
