import Foundation

/// The samples of one measured thing, one per round, and what is printed of them.
struct Stats {
    var samples: [Double]

    init(_ samples: [Double]) { self.samples = samples }

    var min: Double { samples.min() ?? .nan }
    /// The middle sample (the mean of the two middle ones for an even count).
    var median: Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Every sample transformed.
    func map(_ transform: (Double) -> Double) -> Stats { Stats(samples.map(transform)) }

    /// Round by round: `transform(self[r], other[r])` — the samples of two things measured in
    /// the same interleaved round.
    func zip(_ other: Stats, _ transform: (Double, Double) -> Double) -> Stats {
        Stats(Swift.zip(samples, other.samples).map(transform))
    }

    /// Round by round: `self[r] / other[r]`. Its median is the "median of per-round ratios" every
    /// target is judged by, so a noisy round hits both sides of a comparison alike.
    func ratio(to other: Stats) -> Stats { zip(other, /) }
}

/// Runs things round by round, interleaved: round 1 of each, then round 2 of each, and so on —
/// never all rounds of one and then all of the next, so a noisy neighbour or a frequency change
/// hits every side of a comparison alike. Each round starts with a different body (the order
/// rotates), so none is always first after a switch.
///
/// Each body measures itself (``Measure/time(_:)``) and returns what it measured, so its setup
/// and teardown stay outside the timing.
@MainActor
enum Measure {
    /// `result[body][round]`.
    static func interleaved<T>(rounds: Int, warmUp: Bool = false, _ bodies: [@MainActor () throws -> T]) throws -> [[T]] {
        if warmUp { for body in bodies { _ = try body() } }
        var results = Array(repeating: [T](), count: bodies.count)
        for round in 0..<rounds {
            for offset in 0..<bodies.count {
                let index = (round + offset) % bodies.count
                results[index].append(try bodies[index]())
            }
        }
        return results
    }

    /// `result[body][round]`, for bodies that await.
    static func interleaved<T>(rounds: Int, warmUp: Bool = false, _ bodies: [@MainActor () async throws -> T]) async throws -> [[T]] {
        if warmUp { for body in bodies { _ = try await body(); await settle() } }
        var results = Array(repeating: [T](), count: bodies.count)
        for round in 0..<rounds {
            for offset in 0..<bodies.count {
                let index = (round + offset) % bodies.count
                results[index].append(try await bodies[index]())
                await settle()
            }
        }
        return results
    }

    /// Interleaved rounds of bodies that each return one figure.
    static func stats(rounds: Int, warmUp: Bool = false, _ bodies: [@MainActor () throws -> Double]) throws -> [Stats] {
        try interleaved(rounds: rounds, warmUp: warmUp, bodies).map(Stats.init)
    }

    /// Lets the main actor finish what a measured body left queued (cancelled timer tasks waking
    /// up, tasks finishing after the call they served returned), outside every timing, so it is
    /// not billed to the next body.
    static func settle() async {
        try? await Task.sleep(for: .milliseconds(1))
    }

    /// The wall time of `body`, in seconds.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(ContinuousClock.now - start)
    }

    /// The wall time of `body`, in seconds.
    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return seconds(ContinuousClock.now - start)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// How figures are printed.
enum Format {
    /// A time in seconds, in the unit that suits it: `63 ns`, `4.21 µs`, `12.3 ms`, `1.25 s`.
    static func time(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "–" }
        let magnitude = abs(seconds)
        if magnitude < 1e-6 { return String(format: "%.0f ns", seconds * 1e9) }
        if magnitude < 1e-3 { return String(format: "%.2f µs", seconds * 1e6) }
        if magnitude < 1 { return String(format: magnitude < 0.1 ? "%.2f ms" : "%.1f ms", seconds * 1e3) }
        return String(format: "%.2f s", seconds)
    }

    /// `min / median` of times in seconds.
    static func time(_ stats: Stats) -> String { "\(time(stats.min)) / \(time(stats.median))" }

    /// `min / median` of plain numbers.
    static func number(_ stats: Stats, _ format: String = "%.1f") -> String {
        "\(String(format: format, stats.min)) / \(String(format: format, stats.median))"
    }

    static func factor(_ value: Double) -> String { value.isFinite ? String(format: "%.2f×", value) : "–" }

    static func count(_ value: Int) -> String {
        value >= 1_000 && value % 1_000 == 0 ? "\(value / 1_000)k" : "\(value)"
    }
}
