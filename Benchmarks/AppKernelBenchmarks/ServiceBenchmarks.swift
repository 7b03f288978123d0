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

@MainActor
enum ServiceBenchmarks {
    /// The dependencies of service `index`: up to three earlier ones, spread out.
    static func dependencies(of index: Int) -> [String] {
        guard index > 0 else { return [] }
        return Array(Set([index - 1, index / 2, index / 3].filter { $0 < index })).sorted().map { "s\($0)" }
    }

    /// The median wall time of starting `count` no-op services with ~3 dependencies each.
    static func startCost(count: Int, rounds: Int) async throws -> (seconds: Double, edges: Int) {
        var samples: [Double] = []
        var edges = 0
        for _ in 0..<rounds {
            let app = Application(delegate: DefaultApplicationDelegate(), clock: TestClock())
            let context = Context(application: app)
            context.services.defaultStartDeadline = nil
            edges = 0
            for index in 0..<count {
                let dependencies = dependencies(of: index)
                edges += dependencies.count
                context.services.register(named: "s\(index)", dependencies: dependencies) { BenchService() }
            }
            let start = ContinuousClock.now
            try await context.services.startServices()
            samples.append(AppKernelBenchmarks.seconds(ContinuousClock.now - start))
            precondition(context.services.startOrder.count == count, "not all services started")
        }
        return (samples.sorted()[rounds / 2], edges)
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
        let start = ContinuousClock.now
        try await context.services.startServices()
        let wall = AppKernelBenchmarks.seconds(ContinuousClock.now - start)
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
