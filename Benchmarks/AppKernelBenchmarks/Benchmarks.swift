// AppKernel's benchmark executable. Build and run in release mode:
//
//     swift run -c release AppKernelBenchmarks          # full run
//     swift run -c release AppKernelBenchmarks --quick  # CI's smoke run (never fails on a timing)
//
// Everything is measured side by side in one run, on this machine: AppKernel's listeners against
// a plain closure array and Foundation's NotificationCenter; the hook pipeline with 0, 1 and 100
// hooks per stage; a full launch; service starts at 1k / 10k / 100k; simulated transitions per
// second. Figures are medians of several rounds of wall-clock time.
import AppKernel
import AppKernelTesting
import Foundation

@MainActor
final class BenchSceneDelegate: SceneDelegate {}

@MainActor
final class BenchAppDelegate: ApplicationDelegate {
    var warnings = 0
    func applicationDidReceiveMemoryWarning(_ application: Application) { warnings += 1 }
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Bench") { BenchSceneDelegate() }
    }
}

/// A counter NotificationCenter's observer blocks can share.
/// `@unchecked Sendable`: only the benchmark's own thread touches it.
final class Counter: @unchecked Sendable {
    var count = 0
}

/// One printed row.
struct Row {
    var name: String
    var values: [String]
}

@main
enum AppKernelBenchmarks {
    @MainActor
    static func main() async throws {
        let quick = CommandLine.arguments.contains("--quick")
        let rounds = quick ? 3 : 9
        let scale = quick ? 10 : 1
        print("AppKernel benchmarks (\(quick ? "quick" : "full") run, medians of \(rounds) rounds, release build)")
        print("machine: \(Machine.description)\n")
        var targets: [(String, Bool)] = []

        // 1. Event dispatch: one memory warning to N listeners.
        let dispatch = try DispatchBenchmark.measure(rounds: rounds, scale: scale)
        print(table(title: "Event dispatch (one memory warning to N listeners)",
                    header: ["listeners", "AppKernel ns/event", "AppKernel ns/listener", "closure array ns/listener", "NotificationCenter ns/listener"],
                    rows: dispatch.rows))
        let atScale = dispatch.perListener(10_000)
        print(String(format: "  at 10,000: AppKernel / closure array = %.2f×, NotificationCenter / AppKernel = %.2f×",
                     atScale.appKernel / atScale.closures, atScale.center / atScale.appKernel))
        print(String(format: "  fixed cost per event: AppKernel %.0f ns (no listener), NotificationCenter %.0f ns per post (no observer)\n",
                     dispatch.fixedAppKernel, dispatch.fixedCenter))
        targets.append(("per-listener dispatch ≤ 2× the closure array at 10,000", atScale.appKernel <= 2 * atScale.closures))
        targets.append(("per-listener dispatch ≥ 5× cheaper than NotificationCenter at 10,000", atScale.center >= 5 * atScale.appKernel))
        targets.append(("fixed per-event cost below NotificationCenter's per post", dispatch.fixedAppKernel < dispatch.fixedCenter))

        // 2. Hooks: before + handle (.continue) + after, k hooks at each stage.
        let hooks = try HookBenchmark.measure(rounds: rounds, scale: scale)
        print(table(title: "Hook pipeline (before / handle / after, k hooks at each stage)",
                    header: ["hooks per stage", "ns per event", "overhead over no hooks"], rows: hooks))
        print("")

        // 3. A full launch: kernel + ContextBootLoader + SDK phases + 1,000 services + root controller.
        let launch = try await LaunchBenchmark.measure(rounds: rounds, services: 1_000)
        print(table(title: "Full launch (kernel, BootLoader, SDK phases, 1,000 services, root controller; no real work)",
                    header: ["time", "memory retained by one launched app"],
                    rows: [Row(name: "", values: [String(format: "%.2f ms", launch.seconds * 1e3), String(format: "%.0f KB", launch.retainedKB)])]))
        print("")
        targets.append(("a 1,000-service launch under 5 ms", launch.seconds < 0.005))

        // 4. Services: dependency-ordered start of N no-op services (~3 dependencies each).
        var perCount: [(count: Int, seconds: Double, edges: Int)] = []
        for count in [1_000, 10_000, 100_000] {
            let (seconds, edges) = try await ServiceBenchmarks.startCost(count: count, rounds: count >= 100_000 ? (quick ? 1 : 3) : rounds)
            perCount.append((count, seconds, edges))
        }
        var serviceRows: [Row] = []
        for (index, entry) in perCount.enumerated() {
            let growth = index == 0 ? "" : String(format: "%.2f×", entry.seconds / perCount[index - 1].seconds)
            serviceRows.append(Row(name: "\(entry.count)", values: ["\(entry.edges)", String(format: "%.2f ms", entry.seconds * 1e3), growth]))
        }
        print(table(title: "Service start (no-op services, dependencies i−1, i/2, i/3)",
                    header: ["services", "edges", "start", "growth per 10×"], rows: serviceRows))
        let boot = try await ServiceBenchmarks.criticalPathRatio(count: quick ? 100 : 400)
        print(String(format: "  I/O-bound boot (%d services sleeping 5–20 ms): wall %.0f ms, critical path %.0f ms, sum %.0f ms → wall / critical path = %.3f×\n",
                     quick ? 100 : 400, boot.ratio * boot.criticalPath * 1e3, boot.criticalPath * 1e3, boot.sum * 1e3, boot.ratio))
        let growths = zip(perCount, perCount.dropFirst()).map { $1.seconds / $0.seconds }
        targets.append(("10,000 services start in under 50 ms", perCount[1].seconds < 0.05))
        targets.append(("linear growth (≤ ~11× per 10× services)", growths.allSatisfy { $0 <= 11.5 }))
        targets.append(("I/O-bound boot within 10% of the critical path", boot.ratio <= 1.1))

        // 5. Simulation speed.
        let simulation = try SimulationBenchmark.measure(rounds: rounds, scale: scale)
        print(table(title: "Simulation speed (SimulatedHost, trace off)", header: ["host", "lifecycle transitions per second", "per round trip"],
                    rows: simulation.rows))
        print("")
        targets.append(("≥ 1,000,000 simulated transitions per second", simulation.best >= 1_000_000))

        // 6. The test clock.
        let timer = await ClockBenchmark.perTimer(rounds: rounds, timers: 20_000 / scale)
        print(String(format: "TestClock: %.0f ns per timer with %d pending\n", timer * 1e9, 20_000 / scale))

        print("Targets (reported, never enforced):")
        for (name, met) in targets { print("  \(met ? "met " : "MISS") \(name)") }
        if let peak = Machine.status("VmHWM") { print("\npeak resident memory of this run: \(peak)") }
    }

    /// The median wall time, in seconds, of `rounds` runs of `body`.
    @MainActor
    static func median(_ rounds: Int, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = clock.now
            try body()
            samples.append(seconds(clock.now - start))
        }
        return samples.sorted()[samples.count / 2]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A text table: a title, a header and rows, columns padded.
    static func table(title: String, header: [String], rows: [Row]) -> String {
        let hasNames = rows.contains { !$0.name.isEmpty }
        let columns = (hasNames ? [[header[0]] + rows.map(\.name)] : [])
            + (0..<(header.count - (hasNames ? 1 : 0))).map { index in
                [header[index + (hasNames ? 1 : 0)]] + rows.map { index < $0.values.count ? $0.values[index] : "" }
            }
        let widths = columns.map { $0.map(\.count).max() ?? 0 }
        var lines = [title]
        for line in 0...(rows.count) {
            lines.append("  " + zip(columns, widths).map { column, width in
                let text = column[line]
                return String(repeating: " ", count: width - text.count) + text
            }.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }
}

/// What this machine is.
enum Machine {
    static var description: String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        return String(format: "%@, %d cores, %.0f GiB, %@", cpu, ProcessInfo.processInfo.activeProcessorCount, memory,
                      ProcessInfo.processInfo.operatingSystemVersionString)
    }

    /// A line of `/proc/self/status` (`VmHWM`, `VmRSS`), without its name.
    static func status(_ key: String) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix(key) }.map { $0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    /// The resident set size, in KB.
    static var residentKB: Double { Double(status("VmRSS")?.split(separator: " ").first ?? "0") ?? 0 }
}
