// AppKernel's benchmark executable. Build and run in release mode:
//
//     swift run -c release AppKernelBenchmarks          # full run
//     swift run -c release AppKernelBenchmarks --quick  # CI's smoke run
//
// Figures are wall-clock medians of several rounds on this machine; compare them with the
// reference figures in ../shared/reference/anchors.md (NotificationCenter.post on Linux:
// ~73 ns per observer at 100 observers, ~105 ns at 10,000).
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

struct Figure {
    let name: String
    let value: Double
    let unit: String
}

@main
enum AppKernelBenchmarks {
    @MainActor
    static func main() async throws {
        let quick = CommandLine.arguments.contains("--quick")
        let rounds = quick ? 3 : 9
        let scale = quick ? 10 : 1
        var figures: [Figure] = []
        print("AppKernel benchmarks (\(quick ? "quick" : "full") run, median of \(rounds) rounds)\n")

        // 1. Listener fan-out: one memory warning published to N listeners.
        for listenerCount in [1, 100, 10_000] {
            let host = SimulatedHost(traceOptions: [])
            let app = try host.launch(delegate: BenchAppDelegate())
            var heard = 0
            let tokens = (0..<listenerCount).map { _ in app.addListener(for: .didReceiveMemoryWarning) { _ in heard += 1 } }
            let events = max(10, 200_000 / listenerCount / scale)
            let seconds = median(rounds) { for _ in 0..<events { try? host.sendMemoryWarning() } }
            precondition(heard >= events * listenerCount, "listeners were not all called")
            let perListener = seconds / Double(events * listenerCount) * 1e9
            figures.append(Figure(name: "publish, per listener, \(listenerCount) listener(s)", value: perListener, unit: "ns"))
            withExtendedLifetime(tokens) {}
        }

        // 1b. Hooks: one event with no hook, and with a before, a handle (.continue) and an after hook.
        for hooked in [false, true] {
            let host = SimulatedHost(traceOptions: [])
            let app = try host.launch(delegate: BenchAppDelegate())
            var calls = 0
            if hooked {
                app.hooks.before(.didReceiveMemoryWarning) { _ in calls += 1 }
                app.hooks.handle(.didReceiveMemoryWarning) { _ in calls += 1; return .continue }
                app.hooks.after(.didReceiveMemoryWarning) { _ in calls += 1 }
            }
            let events = 200_000 / scale
            let seconds = median(rounds) { for _ in 0..<events { try? host.sendMemoryWarning() } }
            precondition(!hooked || calls >= events * 3, "hooks were not all called")
            figures.append(Figure(name: hooked ? "event with before + handle + after hooks" : "event with no hooks",
                                  value: seconds / Double(events) * 1e9, unit: "ns"))
        }

        // 2. A foreground/background round trip with one scene (4 scene callbacks, 4 app events).
        do {
            let host = SimulatedHost(traceOptions: [])
            _ = try host.launch(delegate: BenchAppDelegate())
            let trips = 20_000 / scale
            let seconds = median(rounds) {
                for _ in 0..<trips {
                    try? host.moveToBackground()
                    try? host.moveToForeground()
                }
            }
            figures.append(Figure(name: "background + foreground round trip", value: seconds / Double(trips) * 1e6, unit: "µs"))
        }

        // 3. A cold launch (one scene) and termination of a fresh Application.
        do {
            let cycles = 10_000 / scale
            let seconds = median(rounds) {
                for _ in 0..<cycles {
                    let app = Application(delegate: BenchAppDelegate(), clock: TestClock())
                    _ = try? app.handle(.launch(LaunchOptions(), inBackground: false))
                    _ = try? app.handle(.terminate)
                }
            }
            figures.append(Figure(name: "launch + terminate, fresh Application", value: seconds / Double(cycles) * 1e6, unit: "µs"))
        }

        // 4. TestClock: schedule N timers and advance past all of them.
        do {
            let timers = 20_000 / scale
            let clock = TestClock()
            var fired = 0
            var samples: [Double] = []
            for _ in 0..<rounds {
                let start = ContinuousClock.now
                let handles = (0..<timers).map { index in
                    clock.scheduleTimer(after: .milliseconds(index)) { fired += 1 }
                }
                await clock.advance(by: .seconds(timers))
                samples.append(seconds(ContinuousClock.now - start))
                withExtendedLifetime(handles) {}
            }
            precondition(fired == timers * rounds, "timers did not all fire")
            figures.append(Figure(name: "TestClock, per timer (\(timers) pending)", value: samples.sorted()[rounds / 2] / Double(timers) * 1e9, unit: "ns"))
        }

        // 5. Services: dependency-ordered start of N no-op services (~3 dependencies each), and the
        // boot of I/O-bound services against the dependency graph's critical path.
        var perCount: [(count: Int, seconds: Double)] = []
        for count in [1_000, 10_000, 100_000] {
            let (seconds, edges) = try await ServiceBenchmarks.startCost(count: count, rounds: count >= 100_000 ? (quick ? 1 : 3) : rounds)
            perCount.append((count, seconds))
            figures.append(Figure(name: "start \(count) services (\(edges) edges)", value: seconds * 1e3, unit: "ms"))
        }
        for (small, large) in zip(perCount, perCount.dropFirst()) {
            figures.append(Figure(name: "service start cost ratio \(large.count)/\(small.count)", value: large.seconds / small.seconds, unit: "×"))
        }
        let boot = try await ServiceBenchmarks.criticalPathRatio(count: quick ? 100 : 400)
        figures.append(Figure(name: "I/O-bound boot wall time / critical path", value: boot.ratio, unit: "×"))
        figures.append(Figure(name: "  critical path (sum of starts)", value: boot.criticalPath * 1e3, unit: String(format: "ms (%.0f ms)", boot.sum * 1e3)))

        for figure in figures {
            print(String(format: "%-48@ %10.2f %@", figure.name as NSString, figure.value, figure.unit as NSString))
        }
        if let peak = peakResidentMemory() { print("\npeak resident memory: \(peak)") }
        print("\nreference: NotificationCenter.post on Linux ≈ 73 ns per observer at 100, ≈ 105 ns at 10,000")
    }

    /// The median wall time, in seconds, of `rounds` runs of `body`.
    @MainActor
    static func median(_ rounds: Int, _ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        var samples: [Double] = []
        for _ in 0..<rounds {
            samples.append(seconds(clock.measure(body)))
        }
        return samples.sorted()[samples.count / 2]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func peakResidentMemory() -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM") }.map { $0.dropFirst(6).trimmingCharacters(in: .whitespaces) }
    }
}

