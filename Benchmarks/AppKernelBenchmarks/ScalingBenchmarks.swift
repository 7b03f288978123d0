import AppKernel
import AppKernelModules
import AppKernelTesting
import Foundation

/// How a path's cost grows with N: the same work at 1k / 10k / 100k, the sizes interleaved round
/// by round, and the growth per 10× taken round by round (time at 10N / time at N in the same
/// round), then its median. Linear work grows 10× per 10×; the target allows 11×.
@MainActor
enum Scaling {
    /// One figure of a path (a time, unless `isTime` is false) at each size.
    struct Series {
        var label: String
        var isTime = true
        /// One per size; empty when the size was skipped.
        var stats: [Stats]

        /// Growth from size i−1 to size i: the median of the per-round ratios.
        func growth(_ index: Int) -> Double {
            guard index > 0, !stats[index].samples.isEmpty, !stats[index - 1].samples.isEmpty else { return .nan }
            return stats[index].ratio(to: stats[index - 1]).median
        }
    }

    struct Path {
        /// What the target line calls it.
        var key: String
        var name: String
        var sizes: [Int]
        var series: [Series]
        /// How many rounds, in words.
        var rounds: String
        var note: String?

        /// `path figure 1k→10k 12.3×` for each time growth over 11×, or unmeasured.
        var misses: [String] {
            var misses: [String] = []
            for series in series where series.isTime {
                for index in sizes.indices.dropFirst() {
                    let growth = series.growth(index)
                    let step = "\(Format.count(sizes[index - 1]))→\(Format.count(sizes[index]))"
                    if growth.isNaN {
                        misses.append("\(key): \(series.label) \(step) not measured")
                    } else if growth > 11 {
                        misses.append("\(key): \(series.label) \(step) \(Format.factor(growth))")
                    }
                }
            }
            return misses
        }

        var table: String {
            var header = ["N"]
            for series in series {
                header.append(series.isTime ? "\(series.label) (min / median)" : series.label)
                if series.isTime { header.append("growth") }
            }
            var rows: [Row] = []
            for (index, size) in sizes.enumerated() {
                var values: [String] = []
                for series in series {
                    let stats = series.stats[index]
                    if stats.samples.isEmpty {
                        values.append("skipped")
                    } else if series.isTime {
                        values.append(Format.time(stats))
                    } else {
                        values.append(String(format: "%.0f KB", stats.median))
                    }
                    if series.isTime { values.append(index == 0 ? "" : Format.factor(series.growth(index))) }
                }
                rows.append(Row(name: Format.count(size), values: values))
            }
            var title = "\(name) — \(rounds)"
            if let note { title += "; \(note)" }
            return AppKernelBenchmarks.table(title: title, header: header, rows: rows)
        }
    }

    /// Runs `body` at each size, the sizes interleaved round by round. `body(n)` does its own
    /// setup, times its work and returns one figure per series. Sizes under `repeatBelow` are run
    /// several times per round and averaged (a 1k run is too short to time alone).
    ///
    /// The number of rounds adapts: after the first round, as many as fit in `budget` seconds, at
    /// most `maxRounds`. A size one run of which is projected (100× a run of the size before it —
    /// the quadratic case) to take longer than `cap` seconds is skipped, and reported as skipped.
    static func run(_ key: String, _ name: String, sizes: [Int], labels: [String], nonTime: Set<Int> = [], note: String? = nil,
                    maxRounds: Int, budget: Double, cap: Double, repeatBelow: Int = 10_000,
                    _ body: @escaping @MainActor (Int) async throws -> [Double]) async throws -> Path {
        var samples = Array(repeating: Array(repeating: [Double](), count: sizes.count), count: labels.count)
        var active = sizes.indices.map { _ in true }
        var perRun: [Double] = sizes.map { _ in 0 }
        var projected: [Int: Double] = [:]
        func repetitions(_ index: Int) -> Int { max(1, repeatBelow / sizes[index]) }
        func runSize(_ index: Int) async throws {
            var sums = Array(repeating: 0.0, count: labels.count)
            for _ in 0..<repetitions(index) {
                let figures = try await body(sizes[index])
                for figure in figures.indices { sums[figure] += figures[figure] }
                await Measure.settle()
            }
            for figure in labels.indices { samples[figure][index].append(sums[figure] / Double(repetitions(index))) }
        }
        // The first round, smallest first, so a size can be skipped on its predecessor's figures.
        for index in sizes.indices {
            if index > 0 {
                let projection = active[index - 1] ? perRun[index - 1] * 100 : .infinity
                if projection > cap {
                    active[index] = false
                    if projection.isFinite { projected[sizes[index]] = projection }
                    continue
                }
            }
            perRun[index] = try await Measure.time { try await runSize(index) } / Double(repetitions(index))
        }
        let perRound = sizes.indices.filter { active[$0] }.map { perRun[$0] * Double(repetitions($0)) }.reduce(0, +)
        let rounds = min(maxRounds, max(1, Int(budget / max(perRound, 1e-9))))
        let measured = sizes.indices.filter { active[$0] }
        for round in 1..<max(rounds, 1) {
            for offset in measured.indices {
                try await runSize(measured[(round + offset) % measured.count])
            }
        }
        let series = labels.enumerated().map { figure, label in
            Series(label: label, isTime: !nonTime.contains(figure), stats: samples[figure].map(Stats.init))
        }
        var notes = note.map { [$0] } ?? []
        for size in sizes where !measured.contains(where: { sizes[$0] == size }) {
            notes.append("\(Format.count(size)) skipped: " + (projected[size].map { "projected (100× the size before) " + Format.time($0) + " per run, over the " + Format.time(cap) + " cap" }
                                                              ?? "a smaller size was skipped"))
        }
        return Path(key: key, name: name, sizes: sizes, series: series, rounds: "\(rounds) interleaved round\(rounds == 1 ? "" : "s")", note: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }

    static func measure(sizes: [Int], maxRounds: Int, budget: Double, cap: Double) async throws -> [Path] {
        var paths: [Path] = []

        paths.append(try await run("listeners", "listeners on one event, registered then cancelled one by one", sizes: sizes,
                                   labels: ["register", "cancel"], maxRounds: maxRounds, budget: budget, cap: cap) { n in
            let app = Application(delegate: BenchAppDelegate(), clock: TestClock())
            var tokens: [ListenerToken] = []
            let register = Measure.time { tokens = (0..<n).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in } } }
            let cancel = Measure.time { for token in tokens { token.cancel() } }
            return [register, cancel]
        })

        for increasing in [false, true] {
            let name = increasing ? "hooks on one point, distinct increasing priorities (each goes first), registered then cancelled"
                                  : "hooks on one point, default priority, registered then cancelled one by one"
            paths.append(try await run(increasing ? "hooks, increasing priorities" : "hooks, default priority", name, sizes: sizes, labels: ["register", "cancel"],
                                       maxRounds: maxRounds, budget: budget, cap: cap) { n in
                let app = Application(delegate: BenchAppDelegate(), clock: TestClock())
                var tokens: [ListenerToken] = []
                tokens.reserveCapacity(n)
                let register = Measure.time {
                    for index in 0..<n {
                        tokens.append(app.hooks.before(.didEnterBackground, priority: increasing ? index : 0) { _ in })
                    }
                }
                let cancel = Measure.time { for token in tokens { token.cancel() } }
                return [register, cancel]
            })
        }

        paths.append(try await run("re-entrant burst", "a burst of N re-entrant memory warnings (sent from inside a listener, queued, drained)",
                                   sizes: sizes, labels: ["burst"], maxRounds: maxRounds, budget: budget, cap: cap) { n in
            let host = SimulatedHost(traceOptions: [])
            let app = try host.launch(delegate: BenchAppDelegate())
            var armed = true
            var heard = 0
            let token = app.addListener(for: .didReceiveMemoryWarning) { [unowned host] _ in
                heard += 1
                guard armed else { return }
                armed = false
                for _ in 0..<n { _ = try? host.sendMemoryWarning() }
            }
            let seconds = try Measure.time { try host.sendMemoryWarning() }
            precondition(heard == n + 1, "the burst was not all delivered")
            withExtendedLifetime(token) {}
            return [seconds]
        })

        paths.append(try await run("failing chain", "a failing chain of N services at production defaults (service 0 throws, i depends on i−1)",
                                   sizes: sizes, labels: ["until startServices() throws", "resident memory growth"], nonTime: [1],
                                   note: "memory: VmRSS after the failure − before registration (free heap returned to the system first), median",
                                   maxRounds: maxRounds, budget: budget, cap: cap) { n in
            let failure = try await ServiceBenchmarks.failingChain(count: n)
            return [failure.seconds, failure.residentKB]
        })

        paths.append(try await run("TestClock timers", "TestClock: N pending timers scheduled, then fired by one advance", sizes: sizes,
                                   labels: ["schedule + fire", "fire"], maxRounds: maxRounds, budget: budget, cap: cap) { n in
            let clock = TestClock()
            var fired = 0
            var handles: [ScheduledTimer] = []
            handles.reserveCapacity(n)
            let start = ContinuousClock.now
            for index in 0..<n { handles.append(clock.scheduleTimer(after: .milliseconds(index)) { fired += 1 }) }
            let scheduled = ContinuousClock.now
            await clock.advance(by: .milliseconds(n))
            let end = ContinuousClock.now
            precondition(fired == n, "timers did not all fire")
            withExtendedLifetime(handles) {}
            return [Measure.seconds(end - start), Measure.seconds(end - scheduled)]
        })
        return paths
    }

    /// The service starts of section 4 (production defaults), as a scaling path per graph shape.
    static func servicePaths(_ figures: [ServiceBenchmarks.Figures], sizes: [Int], rounds: String) -> [Path] {
        GraphShape.allCases.map { shape in
            let stats = sizes.map { size in
                figures.first { $0.count == size && $0.shape == shape && $0.setup == .production }?.start ?? Stats([])
            }
            return Path(key: "service start, \(shape.label)", name: "service start at production defaults, \(shape.label)", sizes: sizes,
                        series: [Series(label: "startServices()", stats: stats)], rounds: rounds, note: nil)
        }
    }
}
