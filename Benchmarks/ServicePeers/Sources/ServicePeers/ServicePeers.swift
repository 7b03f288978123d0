import AppKernel
import AppKernelModules
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

// AppKernel's ServiceRegistry beside swift-service-lifecycle's ServiceGroup, in the same process
// and the same rounds (interleaved, the order alternating), at 1k, 10k and 100k services:
//
// - AppKernel: services that do nothing, at production defaults — the application's clock is a
//   ContinuousClock, each start has the default 20 s deadline and each shutdown the default 5 s;
//   start = `startServices()`, shutdown = `shutdown()`.
// - ServiceGroup: services whose `run()` notes that it began and waits for graceful shutdown;
//   start = from `run()` of the group until every service's `run()` has begun, shutdown = from
//   `triggerGracefulShutdown()` until the group's `run()` returns.
//
// Usage: swift run -c release --package-path Benchmarks/ServicePeers ServicePeers [--quick]
// (--quick: 1k and 10k, 3 rounds, for CI; --profile N: AppKernel alone at N services, many rounds,
// for a profiler). The targets at the end are reported, not enforced.

/// A ServiceGroup service that notes its start and waits for graceful shutdown.
struct PeerService: ServiceLifecycle.Service {
    let arrivals: Arrivals
    func run() async throws {
        arrivals.arrive()
        try? await gracefulShutdown()
    }
}

/// Counts the services that have begun and wakes the one waiting once all have.
final class Arrivals: Sendable {
    private let count = Atomic(0)
    private let target: Int
    private let waiter = Mutex<(done: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

    init(target: Int) { self.target = target }

    func arrive() {
        guard count.add(1, ordering: .relaxed).newValue == target else { return }
        let continuation = waiter.withLock { state in
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = waiter.withLock { state in
                if !state.done { state.continuation = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}

/// An AppKernel service that does nothing.
@MainActor final class NoOpService: AppKernelModules.Service {
    func start() async throws {}
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

/// One round of one library at one count: start and shutdown, in seconds.
struct Round {
    var start: Double
    var shutdown: Double

    subscript(phase: Phase) -> Double { phase == .start ? start : shutdown }
}

enum Phase { case start, shutdown }

@MainActor
func appKernelRound(names: [String]) async throws -> Round {
    let app = Application(delegate: DefaultApplicationDelegate(), clock: ContinuousClock())
    let context = Context(application: app)
    let services = context.services
    for name in names { services.register(named: name) { NoOpService() } }
    let begin = ContinuousClock.now
    try await services.startServices()
    let start = seconds(since: begin)
    precondition(services.startOrder.count == names.count, "not every service started")
    await settle()
    let shutdownBegin = ContinuousClock.now
    await services.shutdown()
    let shutdown = seconds(since: shutdownBegin)
    precondition(services.startOrder.isEmpty, "shutdown left services behind")
    withExtendedLifetime(app) {}
    return Round(start: start, shutdown: shutdown)
}

func peerRound(count: Int) async throws -> Round {
    let arrivals = Arrivals(target: count)
    let services: [any ServiceLifecycle.Service] = (0..<count).map { _ in PeerService(arrivals: arrivals) }
    let group = ServiceGroup(services: services, logger: Logger(label: "peers") { _ in SwiftLogNoOpLogHandler() })
    let begin = ContinuousClock.now
    let running = Task.detached { try await group.run() }
    await arrivals.wait()
    let start = seconds(since: begin)
    await settle()
    let shutdownBegin = ContinuousClock.now
    await group.triggerGracefulShutdown()
    try await running.value
    let shutdown = seconds(since: shutdownBegin)
    return Round(start: start, shutdown: shutdown)
}

/// Lets what a round left queued run before the next measurement.
func settle() async {
    try? await Task.sleep(for: .milliseconds(CommandLine.arguments.contains("--profile") ? 1 : 20))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func time(_ seconds: Double) -> String {
    seconds < 1e-3 ? String(format: "%.0f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
}

func label(_ count: Int) -> String { count >= 1000 ? "\(count / 1000)k" : "\(count)" }

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width - 1 ? text + " " : text + String(repeating: " ", count: width - text.count)
}

@main
struct ServicePeers {
    @MainActor
    static func main() async throws {
        let quick = CommandLine.arguments.contains("--quick")
        let counts = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
        let rounds = quick ? 3 : 7
        var kernel: [Int: [Round]] = [:], peer: [Int: [Round]] = [:]
        let names = Dictionary(uniqueKeysWithValues: counts.map { count in (count, (0..<count).map { "s\($0)" }) })
        let verbose = CommandLine.arguments.contains("--verbose")
        if let index = CommandLine.arguments.firstIndex(of: "--profile"), index + 1 < CommandLine.arguments.count, let count = Int(CommandLine.arguments[index + 1]) {
            // AppKernel alone, many rounds, for a profiler.
            let names = (0..<count).map { "s\($0)" }
            var rounds: [Round] = []
            let profileRounds = CommandLine.arguments.firstIndex(of: "--rounds").flatMap { Int(CommandLine.arguments[$0 + 1]) } ?? max(1, 2_000_000 / count)
            for _ in 0..<profileRounds { rounds.append(try await appKernelRound(names: names)) }
            print("AppKernel \(label(count)): start \(time(median(rounds.map(\.start)))), shutdown \(time(median(rounds.map(\.shutdown))))")
            return
        }
        // One warm-up round of each, not counted.
        for count in counts {
            let kernelRound = try await appKernelRound(names: names[count]!)
            if verbose { print("warm-up AppKernel \(label(count)): start \(time(kernelRound.start)), shutdown \(time(kernelRound.shutdown))") }
            let peerRound = try await peerRound(count: count)
            if verbose { print("warm-up ServiceGroup \(label(count)): start \(time(peerRound.start)), shutdown \(time(peerRound.shutdown))") }
        }
        for round in 0..<rounds {
            // ServiceGroup's shutdown of 100k takes tens of seconds: 100k runs the first 3 rounds only.
            for count in counts where count < 100_000 || round < 3 {
                if round % 2 == 0 {
                    kernel[count, default: []].append(try await appKernelRound(names: names[count]!))
                    peer[count, default: []].append(try await peerRound(count: count))
                } else {
                    peer[count, default: []].append(try await peerRound(count: count))
                    kernel[count, default: []].append(try await appKernelRound(names: names[count]!))
                }
                await settle()
            }
        }

        /// The median of per-round figures (start or shutdown).
        func figure(_ rounds: [Int: [Round]], _ count: Int, _ phase: Phase) -> Double { median(rounds[count]!.map { $0[phase] }) }
        /// The median of per-round ratios ServiceGroup / AppKernel.
        func speedup(_ count: Int, _ phase: Phase) -> Double {
            median(zip(peer[count]!, kernel[count]!).map { $0[phase] / $1[phase] })
        }

        print("Services: start and shutdown of N services that do nothing, AppKernel (production defaults: ContinuousClock,")
        print("20 s start and 5 s shutdown deadlines) beside swift-service-lifecycle's ServiceGroup (services that wait for")
        print("graceful shutdown), same process, \(rounds) interleaved rounds" + (quick ? ", medians (--quick: 1k and 10k)" : " (100k: 3), medians"))
        let header = ["services", "AppKernel start", "ServiceGroup start", "ratio", "AppKernel shutdown", "ServiceGroup shutdown", "ratio", "AppKernel shutdown/start"]
        let widths = header.map { $0.count + 2 }
        print(zip(header, widths).map { pad($0, $1) }.joined())
        for count in counts {
            let row = [label(count),
                       time(figure(kernel, count, .start)), time(figure(peer, count, .start)), String(format: "%.1f×", speedup(count, .start)),
                       time(figure(kernel, count, .shutdown)), time(figure(peer, count, .shutdown)), String(format: "%.1f×", speedup(count, .shutdown)),
                       String(format: "%.2f", median(kernel[count]!.map { $0.shutdown / $0.start }))]
            print(zip(row, widths).map { pad($0, $1) }.joined())
        }
        print("(ratio: ServiceGroup / AppKernel, the median of per-round ratios)")

        var growth: [(String, Double)] = []
        for (small, large) in zip(counts, counts.dropFirst()) {
            let step = "\(label(small))→\(label(large))"
            growth.append(("AppKernel start \(step)", figure(kernel, large, .start) / figure(kernel, small, .start)))
            growth.append(("AppKernel shutdown \(step)", figure(kernel, large, .shutdown) / figure(kernel, small, .shutdown)))
            growth.append(("ServiceGroup start \(step)", figure(peer, large, .start) / figure(peer, small, .start)))
            growth.append(("ServiceGroup shutdown \(step)", figure(peer, large, .shutdown) / figure(peer, small, .shutdown)))
        }
        print("Growth per 10×: " + growth.map { String(format: "%@ %.1f×", $0.0, $0.1) }.joined(separator: ", "))

        var targets: [(String, Bool)] = []
        for count in counts where count <= 10_000 {
            let ratio = speedup(count, .start)
            targets.append((String(format: "start ≥ 2× faster than ServiceGroup at %@ (%.1f×)", label(count), ratio), ratio >= 2))
        }
        let kernelGrowth = growth.filter { $0.0.hasPrefix("AppKernel") }
        targets.append(("every AppKernel growth factor ≤ 11× per 10× (" + kernelGrowth.map { String(format: "%.1f×", $0.1) }.joined(separator: ", ") + ")",
                        kernelGrowth.allSatisfy { $0.1 <= 11 }))
        let slowest = counts.map { count in median(kernel[count]!.map { $0.shutdown / $0.start }) }.max() ?? .nan
        targets.append((String(format: "AppKernel shutdown no slower than start (largest median shutdown/start %.2f)", slowest), slowest <= 1))
        print("Targets (reported, not enforced):")
        for (target, met) in targets { print("  [\(met ? "met" : "MISSED")] \(target)") }
    }
}
