import Foundation
import AppKernel
import AppKernelModules
import AppKernelTesting

/// A service that does nothing, or sleeps on the real clock (I/O-bound).
@MainActor final class BenchService: Service {
    let sleep: Duration?
    init(sleep: Duration? = nil) { self.sleep = sleep }
    func start() async throws {
        if let sleep { try await Task.sleep(for: sleep) }
    }
}

/// A service whose start throws.
@MainActor final class FailingService: Service {
    struct Failure: Error {}
    func start() async throws { throw Failure() }
}

/// The shape of a benchmark's dependency graph.
enum GraphShape: CaseIterable {
    /// No service depends on another.
    case independent
    /// Service i depends on 1–3 earlier services, drawn with a fixed SplitMix seed.
    case random
    /// Service i depends on service i−1.
    case chain

    var label: String {
        switch self {
        case .independent: "no dependencies"
        case .random: "random 1–3 earlier"
        case .chain: "chain (i → i−1)"
        }
    }

    var short: String {
        switch self {
        case .independent: "none"
        case .random: "random"
        case .chain: "chain"
        }
    }
}

/// A dependency graph of named services, built before any timing starts, so registration times
/// the registry rather than string formatting.
struct ServiceGraphSpec {
    let names: [String]
    let dependencies: [[String]]
    var count: Int { names.count }
    var edges: Int { dependencies.reduce(0) { $0 + $1.count } }

    init(count: Int, shape: GraphShape) {
        let names = (0..<count).map { "s\($0)" }
        var generator = SplitMix(seed: 42)
        self.names = names
        self.dependencies = (0..<count).map { index in
            guard index > 0 else { return [] }
            switch shape {
            case .independent:
                return []
            case .chain:
                return [names[index - 1]]
            case .random:
                let wanted = 1 + Int(generator.next() % 3)
                var picked: Set<Int> = []
                for _ in 0..<wanted { picked.insert(Int(generator.next() % UInt64(index))) }
                return picked.sorted().map { names[$0] }
            }
        }
    }
}

/// Which configuration a registry runs with.
enum ServiceSetup: CaseIterable {
    /// What an app ships with: `ContinuousClock`, the default 20 s start deadline per service.
    case production
    /// What a test runs with: `TestClock`, no start or shutdown deadline.
    case test

    var label: String {
        switch self {
        case .production: "production defaults (ContinuousClock, 20 s start and 5 s shutdown deadlines)"
        case .test: "test setup (TestClock, no deadlines)"
        }
    }

    /// The shutdown deadline per service: the default in production, none in the test setup.
    var shutdownDeadline: Duration? {
        switch self {
        case .production: .seconds(5)
        case .test: nil
        }
    }

    /// An application and a context for it. The context holds its application weakly, so the
    /// caller keeps the application for as long as it uses the context.
    @MainActor
    func makeContext() -> (app: Application, context: Context) {
        switch self {
        case .production:
            let app = Application(delegate: DefaultApplicationDelegate(), clock: ContinuousClock())
            return (app, Context(application: app))   // defaultStartDeadline left at its default (20 s)
        case .test:
            let app = Application(delegate: DefaultApplicationDelegate(), clock: TestClock())
            let context = Context(application: app)
            context.services.defaultStartDeadline = nil
            return (app, context)
        }
    }
}

@MainActor
enum ServiceBenchmarks {
    /// The dependencies of service `index` in the launch benchmark: up to three earlier ones, spread out.
    static func dependencies(of index: Int) -> [String] {
        guard index > 0 else { return [] }
        return Array(Set([index - 1, index / 2, index / 3].filter { $0 < index })).sorted().map { "s\($0)" }
    }

    /// One round's figures, in seconds.
    struct Round {
        var register: Double
        var start: Double
        /// The main-actor work still queued when `startServices()` returned (cancelled deadline
        /// timers waking up, finished start tasks): the time a main-actor task enqueued right then
        /// takes to run. A lower bound — work that reaches the main actor later is not in it.
        var queued: Double
        var shutdown: Double
    }

    /// The figures of one (count, shape, setup), one sample per round.
    struct Figures {
        var count: Int
        var shape: GraphShape
        var setup: ServiceSetup
        var edges: Int
        var register: Stats
        var start: Stats
        var queued: Stats
        var shutdown: Stats
        /// Round by round: shutdown / start.
        var shutdownOverStart: Stats { shutdown.ratio(to: start) }
    }

    /// Registers, starts and shuts down `graph`'s no-op services, timing each.
    static func round(_ graph: ServiceGraphSpec, _ setup: ServiceSetup) async throws -> Round {
        let (app, context) = setup.makeContext()
        let services = context.services
        let register = Measure.time {
            for index in 0..<graph.count {
                services.register(named: graph.names[index], dependencies: graph.dependencies[index]) { BenchService() }
            }
        }
        let start = try await Measure.time { try await services.startServices() }
        precondition(services.startOrder.count == graph.count, "not all services started")
        let queued = await Measure.time { await Task { @MainActor in }.value }
        await Measure.settle()
        let shutdown = await Measure.time { await services.shutdown(deadline: setup.shutdownDeadline) }
        precondition(services.startOrder.isEmpty, "shutdown left services behind")
        withExtendedLifetime(app) {}
        return Round(register: register, start: start, queued: queued, shutdown: shutdown)
    }

    /// Every (count, shape, setup), interleaved: in each round, each of them once (the order
    /// rotating) — a count only for its first `rounds(count)` rounds, so the large counts can run
    /// fewer rounds while every ratio still pairs samples of the same round.
    static func measure(counts: [Int], rounds: (Int) -> Int) async throws -> [Figures] {
        var keys: [(count: Int, shape: GraphShape, setup: ServiceSetup, graph: ServiceGraphSpec)] = []
        for count in counts {
            for shape in GraphShape.allCases {
                let graph = ServiceGraphSpec(count: count, shape: shape)
                for setup in ServiceSetup.allCases { keys.append((count, shape, setup, graph)) }
            }
        }
        var results = keys.map { _ in [Round]() }
        for round in 0..<(counts.map(rounds).max() ?? 0) {
            let active = keys.indices.filter { round < rounds(keys[$0].count) }
            for offset in active.indices {
                let index = active[(round + offset) % active.count]
                results[index].append(try await self.round(keys[index].graph, keys[index].setup))
                await Measure.settle()
            }
        }
        return zip(keys, results).map { key, rounds in
            Figures(count: key.count, shape: key.shape, setup: key.setup, edges: key.graph.edges,
                    register: Stats(rounds.map(\.register)), start: Stats(rounds.map(\.start)),
                    queued: Stats(rounds.map(\.queued)), shutdown: Stats(rounds.map(\.shutdown)))
        }
    }

    /// A chain of `count` services at production defaults whose first one's start throws (service
    /// i depends on i−1): the time `startServices()` takes to throw, and the resident memory the
    /// registry holds afterwards (registration included), in KB.
    static func failingChain(count: Int) async throws -> (seconds: Double, residentKB: Double) {
        let names = (0..<count).map { "s\($0)" }
        Machine.releaseFreeMemory()
        let before = Machine.residentKB
        let (app, context) = ServiceSetup.production.makeContext()
        let services = context.services
        for index in 0..<count {
            if index == 0 {
                services.register(named: names[0]) { FailingService() }
            } else {
                services.register(named: names[index], dependencies: [names[index - 1]]) { BenchService() }
            }
        }
        var failure: ServiceError?
        let seconds = await Measure.time {
            do throws(ServiceError) { try await services.startServices() } catch { failure = error }
        }
        precondition(failure != nil, "the failing chain started")
        let grown = Machine.residentKB - before
        withExtendedLifetime((app, context)) {}
        return (seconds, grown)
    }

    /// Boots `count` services that each sleep 5–20 ms on the real clock and depend on up to two
    /// earlier ones; returns the wall time over the graph's critical path.
    static func criticalPathRatio(count: Int) async throws -> (ratio: Double, criticalPath: Double, sum: Double) {
        var generator = SplitMix(seed: 42)
        let app = Application(delegate: DefaultApplicationDelegate(), clock: ContinuousClock())
        let context = Context(application: app)
        var finish: [Double] = []
        var sum = 0.0
        for index in 0..<count {
            let milliseconds = 5 + Int(generator.next() % 16)
            var dependencies: Set<Int> = []
            if index > 0 {
                for _ in 0..<2 where generator.next() % 3 != 0 { dependencies.insert(Int(generator.next() % UInt64(index))) }
            }
            let ready = dependencies.map { finish[$0] }.max() ?? 0
            finish.append(ready + Double(milliseconds) / 1000)
            sum += Double(milliseconds) / 1000
            context.services.register(named: "s\(index)", dependencies: dependencies.sorted().map { "s\($0)" }) {
                BenchService(sleep: .milliseconds(milliseconds))
            }
        }
        let criticalPath = finish.max() ?? 0
        let wall = try await Measure.time { try await context.services.startServices() }
        withExtendedLifetime(app) {}
        return (wall / criticalPath, criticalPath, sum)
    }
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
