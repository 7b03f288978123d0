// AppKernel's benchmark executable. Build and run in release mode:
//
//     swift run -c release AppKernelBenchmarks          # full run
//     swift run -c release AppKernelBenchmarks --quick  # CI's smoke run (about 10 s here; never fails on a timing)
//
// Everything is measured on this machine in one run, in interleaved rounds: where things are
// compared, round 1 of each runs, then round 2 of each, and so on (the order rotating), and every
// figure is printed as the min and the median of its rounds. Ratios — and every target judged on
// one — are taken round by round and their median printed, so a noisy neighbour hits both sides
// of a comparison alike. Measured:
//
//   1. event dispatch: one memory warning to 1 / 100 / 10,000 listeners — AppKernel against a
//      plain closure array and Foundation's NotificationCenter — and the fixed cost of an event
//      nobody listens to: bare, with hooks registered on other events, with SimulatedHost's
//      default trace on, and a NotificationCenter post;
//   2. the hook pipeline with 1 and 100 hooks per stage, with no slow-hook budget configured and
//      with the default one;
//   3. a full launch (kernel, BootLoader, SDK phases, 1,000 services, root controller) and the
//      memory one launched app keeps;
//   4. services at production defaults (ContinuousClock, 20 s start deadline) beside the test
//      setup (TestClock, no deadline): registration, startServices() and shutdown of 10k and 100k
//      no-op services (--quick: 1k and 10k) in three graph shapes; an I/O-bound boot against its
//      critical path (swift-service-lifecycle side by side: Benchmarks/ServicePeers);
//   5. simulated lifecycle transitions per second;
//   6. scaling: 1k / 10k / 100k (--quick: 1k / 10k) of listeners and hooks registered and
//      cancelled, a burst of re-entrant events, a failing service chain, service starts and
//      TestClock timers, with the growth per 10× (round by round, then the median);
//   7. SmartStore: an upsert of 100k entries (--quick: 10k) against raw SQLite inserts, indexed
//      exact and range queries, and a Smart SQL join of two 10k-entry soups (StoreBenchmarks.swift);
//   8. MobileSync: a sync down of 20,000 records (--quick: 4,000) in pages of 2,000 (400) from
//      the embedded org through URLSession into a SmartStore file, and the resident-memory growth;
//   9. a hostile body of 1 GB (--quick: 256 MB), announced and not, over loopback to RestClient
//      through SocketTransport and URLSessionTransport: outcome, time, peak memory growth
//      (HostileBodyBenchmark.swift);
//  10. failing closed: a wrong passcode answer with its failure count written and fsync'd before
//      it is judged, beside one judged in memory; an SDK launch on disk with single-instance mode
//      off and on, a FileLock update and a data-home check (FailClosedBenchmarks.swift);
//  11. sealed at rest: a sealed SmartStore's upsert of 100k entries (--quick: 10k) and indexed
//      queries beside a plain one's, Core's AES-256-GCM beside `openssl speed`, and a sealed
//      credential file's open (SealedBenchmarks.swift);
//  12. the journal (APPKERNEL_JOURNAL): AccountsApp's launch with and without one, side by side,
//      and its bytes per event (JournalBenchmarks.swift; needs `swift build -c release --product
//      AccountsApp` first, else it says so and is skipped);
//  13. the lifecycle explorer: schedules a second and distinct states for a kernel-only app
//      (exhaustive to depth 4, then random walks) and for the ported forceios template (SDK
//      manager subclass, root factory, embedded org's REST clients; depth 3, --quick: 2) with
//      its data homes in the temporary directory and on tmpfs, and where a run's time goes,
//      part by part (ExplorerBenchmarks.swift).
//
// The targets at the end are reported, never enforced: the run exits 0 whatever the timings.
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
        let sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
        // Services: 9 rounds in a full run (5 at 100k, whose shutdowns take seconds), 3 in a quick one.
        let serviceRounds = { (count: Int) in quick ? 3 : count >= 100_000 ? 5 : 9 }
        let wall = ContinuousClock.now
        Machine.keepFreedMemory()
        if CommandLine.arguments.contains("--hostile-body") {          // section 9 alone
            print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)\n")
            for (name, met) in try await HostileBodyBenchmark.report(quick: quick) { print("  \(met ? "met " : "MISS") \(name)") }
            return
        }
        if CommandLine.arguments.contains("--fail-closed") {           // section 10 alone
            print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)\n")
            for (name, met) in try await FailClosedBenchmark.report(rounds: rounds) { print("  \(met ? "met " : "MISS") \(name)") }
            return
        }
        if CommandLine.arguments.contains("--journal") {               // section 12 alone
            print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)\n")
            for (name, met) in try await JournalBenchmark.report(rounds: rounds) { print("  \(met ? "met " : "MISS") \(name)") }
            return
        }
        if CommandLine.arguments.contains("--explorer") {              // section 13 alone
            print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)\n")
            for (name, met) in try await ExplorerBenchmark.report(quick: quick) { print("  \(met ? "met " : "MISS") \(name)") }
            return
        }
        if CommandLine.arguments.contains("--sealed") {                // section 11 alone
            print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)\n")
            for (name, met) in try await SealedBenchmark.report(quick: quick) { print("  \(met ? "met " : "MISS") \(name)") }
            return
        }
        print("AppKernel benchmarks (\(quick ? "quick" : "full") run, release build): \(rounds) interleaved rounds per comparison, "
              + "figures are min / median of the rounds, ratios the median of per-round ratios")
        if quick { print("quick run: 10× fewer events per round, services and scaling at 1k / 10k instead of up to 100k") }
        print("machine: \(Machine.description); load average at start: \(Machine.loadAverage)")
        print("heap: freed memory stays in the process (glibc trimming off), as in a long-running app, so no size pays the kernel's page faults for pages a smaller size already used and freed\n")
        var targets: [(String, Bool)] = []

        // 1. Event dispatch.
        let dispatch = try DispatchBenchmark.measure(rounds: rounds, scale: scale)
        let ns = { (stats: Stats) in Format.number(stats.map { $0 * 1e9 }, "%.1f") }
        print(AppKernelBenchmarks.table(
            title: "Event dispatch (one memory warning to N listeners; ns, min / median)",
            header: ["listeners", "AppKernel per event", "AppKernel per listener", "closure array per listener", "NotificationCenter per listener"],
            rows: dispatch.perListener.map { count, figures in
                Row(name: "\(count)", values: [Format.number(figures.appKernelEvent.map { $0 * 1e9 }, "%.0f"), ns(figures.appKernel),
                                               ns(figures.closures), ns(figures.center)])
            }))
        let atScale = dispatch.perListener.first { $0.count == 10_000 }!.figures
        let overClosures = atScale.appKernel.ratio(to: atScale.closures), centerOver = atScale.center.ratio(to: atScale.appKernel)
        print(String(format: "  at 10,000 (per-round ratios, median): AppKernel / closure array = %.2f×, NotificationCenter / AppKernel = %.2f×",
                     overClosures.median, centerOver.median))
        let fixed = dispatch.fixed
        print(AppKernelBenchmarks.table(
            title: "  fixed cost per event (nobody listens to it; ns, min / median; ratio to a NotificationCenter post, median of per-round ratios)",
            header: ["", "ns per event", "/ NotificationCenter post"],
            rows: [("AppKernel, no hooks, trace off", fixed.plain),
                   ("AppKernel, hooks on .didEnterBackground and .openURL, trace off", fixed.otherHooks),
                   ("AppKernel, SimulatedHost() default trace on", fixed.traced),
                   ("NotificationCenter post, no observer", fixed.center)].map { name, stats in
                Row(name: "  " + name, values: [ns(stats), Format.factor(stats.ratio(to: fixed.center).median)])
            }))
        print("")
        targets.append(("per-listener dispatch ≤ 2× the closure array at 10,000", overClosures.median <= 2))
        targets.append(("per-listener dispatch ≥ 5× cheaper than NotificationCenter at 10,000", centerOver.median >= 5))
        targets.append((String(format: "fixed cost per event ≤ 100 ns with hooks on other events (median %.0f ns)", fixed.otherHooks.median * 1e9),
                        fixed.otherHooks.median <= 100e-9))
        let fixedOverCenter = fixed.plain.ratio(to: fixed.center).median
        targets.append((String(format: "fixed cost ≤ 0.8× a NotificationCenter post (judged with no hooks, trace off: %.2f×; for reference, with hooks on other events: %.2f×)",
                               fixedOverCenter, fixed.otherHooks.ratio(to: fixed.center).median),
                        fixedOverCenter <= 0.8))

        // 2. Hooks: before + handle (.continue) + after, k hooks at each stage.
        let hooks = try HookBenchmark.measure(rounds: rounds, scale: scale)
        var hookRows: [Row] = []
        if let first = hooks.first {
            hookRows.append(Row(name: "0", values: [ns(first.figures.baseNoBudget), ns(first.figures.baseBudget), "", ""]))
        }
        for (perStage, figures) in hooks {
            hookRows.append(Row(name: "\(perStage)", values: [ns(figures.noBudget), ns(figures.budget),
                                                             ns(figures.perHookNoBudget), ns(figures.perHookBudget)]))
        }
        print(AppKernelBenchmarks.table(
            title: "Hook pipeline (before / handle / after, k hooks at each stage; ns, min / median; per hook = (k hooks − none) / 3k, round by round)",
            header: ["hooks per stage", "per event, no budget", "per event, default budget (100 ms)", "per hook, no budget", "per hook, default budget"],
            rows: hookRows))
        print("")
        let slowHooks = hooks.filter { $0.figures.perHookNoBudget.median > 40e-9 }
        targets.append(("per hook ≤ 40 ns with no budget configured (1 and 100 per stage"
                         + (slowHooks.isEmpty ? ")" : "; over at " + slowHooks.map { String(format: "%d: %.1f ns", $0.perStage, $0.figures.perHookNoBudget.median * 1e9) }.joined(separator: ", ") + ")"),
                        slowHooks.isEmpty))

        // 3. A full launch: kernel + ContextBootLoader + SDK phases + 1,000 services + root controller.
        let launch = try await LaunchBenchmark.measure(rounds: rounds, services: 1_000)
        print(AppKernelBenchmarks.table(
            title: "Full launch (kernel, BootLoader, SDK phases, 1,000 services on TestClock, root controller; no real work)",
            header: ["time (min / median)", "memory retained by one launched app"],
            rows: [Row(name: "", values: [Format.time(launch.seconds), String(format: "%.0f KB", launch.retainedKB)])]))
        print("")
        targets.append(("a 1,000-service launch under 5 ms", launch.seconds.median < 0.005))

        // 4. Services: production defaults beside the test setup, three graph shapes.
        let serviceCounts = sizes
        let services = try await ServiceBenchmarks.measure(counts: serviceCounts, rounds: serviceRounds)
        print("Services: register, startServices() and shutdown() of N no-op services, "
              + (quick ? "3 interleaved rounds" : "9 interleaved rounds (the first 5 with 100k)")
              + (quick ? " (quick run: 1k and 10k only; the full run adds 100k)" : ""))
        for count in serviceCounts {
            let rows = services.filter { $0.count == count }.map { figures in
                Row(name: "\(figures.shape.label), \(figures.setup == .production ? "production" : "test")",
                    values: ["\(figures.edges)", Format.time(figures.register), Format.time(figures.start), Format.time(figures.queued),
                             Format.time(figures.shutdown),
                             Format.factor(figures.shutdownOverStart.median)])
            }
            print(AppKernelBenchmarks.table(title: "  \(Format.count(count)) services (min / median; production = \(ServiceSetup.production.label), test = \(ServiceSetup.test.label))",
                                            header: ["  shape, setup", "edges", "registration", "startServices()", "queued at its return", "shutdown()", "shutdown / start"],
                                            rows: rows))
            let versusTest = GraphShape.allCases.map { shape -> String in
                let production = services.first { $0.count == count && $0.shape == shape && $0.setup == .production }!
                let test = services.first { $0.count == count && $0.shape == shape && $0.setup == .test }!
                return "\(shape.label) \(Format.factor(production.start.ratio(to: test.start).median))"
            }
            print("    start, production / test (median of per-round ratios): " + versusTest.joined(separator: ", "))
        }
        print("  beside swift-service-lifecycle's ServiceGroup, in one process: swift run -c release --package-path Benchmarks/ServicePeers ServicePeers")
        let boot = try await ServiceBenchmarks.criticalPathRatio(count: quick ? 100 : 400)
        print(String(format: "  I/O-bound boot (%d services sleeping 5–20 ms, ContinuousClock): wall %.0f ms, critical path %.0f ms, sum %.0f ms → wall / critical path = %.3f×\n",
                     quick ? 100 : 400, boot.ratio * boot.criticalPath * 1e3, boot.criticalPath * 1e3, boot.sum * 1e3, boot.ratio))
        let slowShutdowns = services.filter { $0.shutdownOverStart.median > 1 }
        targets.append(("shutdown no slower than start (every count, shape and setup; median of per-round shutdown / start"
                        + (slowShutdowns.isEmpty ? ")" : "; over: " + slowShutdowns.map {
                            "\(Format.count($0.count)) \($0.shape.short) \($0.setup == .production ? "prod" : "test") \(Format.factor($0.shutdownOverStart.median))"
                        }.joined(separator: ", ") + ")"),
                        slowShutdowns.isEmpty))
        targets.append(("I/O-bound boot within 10% of the critical path", boot.ratio <= 1.1))

        // 5. Simulation speed.
        let simulation = try SimulationBenchmark.measure(rounds: rounds, scale: scale)
        print(AppKernelBenchmarks.table(title: "Simulation speed (SimulatedHost, trace off)",
                                        header: ["host", "lifecycle transitions per second (best / median)", "per round trip (min / median)"],
                                        rows: simulation.rows))
        print("")
        targets.append(("≥ 1,000,000 simulated transitions per second", simulation.best >= 1_000_000))

        // 6. Scaling.
        print("Scaling (\(sizes.map(Format.count).joined(separator: " / "))\(quick ? ", quick run" : ""); time min / median; "
              + "growth per 10× = median of the per-round ratios, sizes interleaved in each round)")
        var paths = try await Scaling.measure(sizes: sizes, maxRounds: rounds, budget: quick ? 1.5 : 15, cap: quick ? 2 : 60)
        paths += Scaling.servicePaths(services, sizes: serviceCounts,
                                      rounds: "the services section's rounds" + (quick ? "" : " (growth 10k→100k over the 5 with 100k)"))
        for path in paths { print(path.table) }
        print("")
        let misses = paths.flatMap(\.misses)
        targets.append(("every growth factor per 10× ≤ 11×" + (misses.isEmpty ? "" : " — over: " + misses.joined(separator: "; ")), misses.isEmpty))

        // 7. SmartStore: upsert against raw SQLite, indexed queries, a Smart SQL join.
        targets += try await StoreBenchmarks.run(quick: quick)

        // 8. MobileSync: a sync down streamed into a SmartStore file.
        let sync = try await SyncBenchmark.measure(records: quick ? 4_000 : 20_000, pageSize: quick ? 400 : 2_000)
        print(String(format: "MobileSync sync down: %@ accounts in pages of %@ through URLSession into a SmartStore file: %@ (%.0f records/s); "
                     + "resident memory %@ %.1f MB above where it stood before, %.1f MB after\n",
                     Format.count(sync.records), Format.count(sync.pageSize), Format.time(sync.seconds), Double(sync.records) / sync.seconds,
                     sync.peakMeasured ? "peaked" : "(peak not measurable here) ended", sync.peakMeasured ? sync.peakGrowthMB : sync.residentGrowthMB,
                     sync.residentGrowthMB))
        targets.append((String(format: "sync down of %@ records in pages of %@: peak memory grows < 50 MB (%.1f MB)", Format.count(sync.records),
                               Format.count(sync.pageSize), sync.peakGrowthMB), sync.peakMeasured && sync.peakGrowthMB < 50))

        // 9. A hostile body: 1 GB over loopback, through the default transport and URLSession.
        targets += try await HostileBodyBenchmark.report(quick: quick)

        // 10. Failing closed: a wrong passcode answer with its count persisted first; locks at launch.
        targets += try await FailClosedBenchmark.report(rounds: rounds)

        // 11. Sealed at rest: sealed store beside plain, the AEAD beside openssl speed, a credential open.
        targets += try await SealedBenchmark.report(quick: quick)

        // 12. The journal: AccountsApp's launch with and without APPKERNEL_JOURNAL, bytes per event.
        targets += try await JournalBenchmark.report(rounds: rounds)

        // 13. The lifecycle explorer: schedules a second, states, where a run's time goes.
        targets += try await ExplorerBenchmark.report(quick: quick)

        print("Targets (reported, never enforced):")
        for (name, met) in targets { print("  \(met ? "met " : "MISS") \(name)") }
        if let peak = Machine.status("VmHWM") { print("\npeak resident memory of this run: \(peak)") }
        print(String(format: "wall time of this run: %.1f s; load average at the end: %@", Measure.seconds(ContinuousClock.now - wall), Machine.loadAverage))
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

    /// The 1, 5 and 15-minute load averages (`/proc/loadavg`): other work on the machine, which
    /// the interleaved rounds keep out of the ratios but not out of the absolute figures.
    static var loadAverage: String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// A line of `/proc/self/status` (`VmHWM`, `VmRSS`), without its name.
    static func status(_ key: String) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix(key) }.map { $0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    /// Returns the heap's free memory to the system (glibc's `malloc_trim`, looked up at run time:
    /// the Glibc module does not export it), so a later VmRSS difference counts new memory rather
    /// than reused free memory. Does nothing elsewhere.
    static func releaseFreeMemory() {
        #if os(Linux)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// Keeps freed memory in the heap instead of handing it back to the kernel (glibc's
    /// `mallopt`: no trimming, and blocks up to 32 MB from the heap rather than their own
    /// mappings). Without it, each 100k run faults in fresh pages that the 1k and 10k runs reuse
    /// warm, which inflates the growth factors with kernel work that a long-running app, whose
    /// heap is warm, does not do. ``releaseFreeMemory()`` still trims on demand. Does nothing
    /// elsewhere.
    static func keepFreedMemory() {
        #if os(Linux)
        typealias Option = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Option.self)
        _ = mallopt(-1, Int32.max)          // M_TRIM_THRESHOLD
        _ = mallopt(-3, 32 * 1024 * 1024)   // M_MMAP_THRESHOLD (glibc's largest)
        #endif
    }

    /// The resident set size, in KB.
    static var residentKB: Double { Double(status("VmRSS")?.split(separator: " ").first ?? "0") ?? 0 }
}
