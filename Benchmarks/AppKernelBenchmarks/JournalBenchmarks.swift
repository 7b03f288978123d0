import Foundation

/// What `APPKERNEL_JOURNAL` costs AccountsApp: the built app (release, beside this executable)
/// launched with and without a journal, interleaved round by round, each on a fresh data home —
/// the launch time the app itself prints (`launched:`, from its first line) and the wall time
/// from the spawn to that line — and the journal's bytes per event.
@MainActor
enum JournalBenchmark {
    /// One launch's figures.
    struct Launch {
        /// The app's own `launched:` time, in seconds.
        var reported: Double
        /// From the spawn to the `launched:` line, in seconds.
        var wall: Double
        /// The journal's size and its events (steps), when one was written.
        var journalBytes = 0
        var events = 0
        var largestEvent = 0
    }

    /// Measures and prints section 12; returns its targets.
    static func report(rounds: Int) async throws -> [(String, Bool)] {
        let app = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("AccountsApp")
        guard FileManager.default.isExecutableFile(atPath: app.path) else {
            print("Journal: AccountsApp is not built beside this executable; build it first: swift build -c release --product AccountsApp\n")
            return []
        }
        var plain: [Launch] = [], journaled: [Launch] = []
        _ = try launch(app, journal: false)   // warm-up: the file cache, the binary's pages
        for round in 0..<rounds {
            // The order alternates, so neither side is always first.
            for journal in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                let figures = try launch(app, journal: journal)
                if journal { journaled.append(figures) } else { plain.append(figures) }
            }
        }
        let reported = (plain: Stats(plain.map(\.reported)), journaled: Stats(journaled.map(\.reported)))
        let wall = (plain: Stats(plain.map(\.wall)), journaled: Stats(journaled.map(\.wall)))
        let reportedRatio = reported.journaled.ratio(to: reported.plain), wallRatio = wall.journaled.ratio(to: wall.plain)
        let bytesPerEvent = Double(journaled.map(\.journalBytes).reduce(0, +)) / Double(max(1, journaled.map(\.events).reduce(0, +)))
        let largest = journaled.map(\.largestEvent).max() ?? 0
        print(AppKernelBenchmarks.table(
            title: "Journal (APPKERNEL_JOURNAL): AccountsApp launched with and without it, fresh data home each (\(rounds) interleaved rounds; min / median)",
            header: ["", "no journal", "journal", "journal / none (median of per-round ratios)"],
            rows: [Row(name: "launch, as the app reports it (launched:)", values: [Format.time(reported.plain), Format.time(reported.journaled), Format.factor(reportedRatio.median)]),
                   Row(name: "spawn to launched:", values: [Format.time(wall.plain), Format.time(wall.journaled), Format.factor(wallRatio.median)])]))
        print(String(format: "  journal: %.0f bytes per event on average (header included; launch and terminate), the largest event %d bytes (the launch: its SDK and BootLoader phases)",
                     bytesPerEvent, largest))
        print("")
        return [(String(format: "recording a journal adds ≤ 5%% to AccountsApp's launch (median per-round ratio %.3f×)", reportedRatio.median), reportedRatio.median <= 1.05),
                (String(format: "a journal takes ≤ 1 KB per event (%.0f bytes on average, the largest %d)", bytesPerEvent, largest), bytesPerEvent <= 1024)]
    }

    /// Launches AccountsApp (`--interactive`, standard input at its end: it launches, then quits)
    /// on a fresh data home, with a journal or not.
    static func launch(_ app: URL, journal: Bool) throws -> Launch {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let journalURL = folder.appendingPathComponent("run.journal")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APPKERNEL_") && !$0.key.hasPrefix("NOTIFY_") }
        environment["XDG_DATA_HOME"] = folder.appendingPathComponent("data").path
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
        if journal { environment["APPKERNEL_JOURNAL"] = journalURL.path }
        let process = Process()
        process.executableURL = app
        process.arguments = ["--interactive"]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = ContinuousClock.now
        try process.run()
        var wall: Double?
        var text = ""
        var buffer = Data()
        while let chunk = try output.fileHandleForReading.read(upToCount: 4096), !chunk.isEmpty {
            buffer.append(chunk)
            if wall == nil, String(decoding: buffer, as: UTF8.self).contains("launched:") { wall = Measure.seconds(ContinuousClock.now - start) }
        }
        process.waitUntilExit()
        text = String(decoding: buffer, as: UTF8.self)
        // `   123.4 ms  launched: […]`
        guard let line = text.split(separator: "\n").first(where: { $0.contains("launched:") }),
              let milliseconds = Double(line.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") else {
            throw BenchmarkFailure("AccountsApp did not say it launched:\n\(text)")
        }
        var figures = Launch(reported: milliseconds / 1000, wall: wall ?? .nan)
        if journal, let data = FileManager.default.contents(atPath: journalURL.path) {
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            var sizes: [Int] = []
            for line in lines where !line.isEmpty {
                let isStep = !line.hasPrefix("#") && !line.hasPrefix("=")
                if isStep && !line.hasPrefix("+") { sizes.append(0) }
                if !sizes.isEmpty { sizes[sizes.count - 1] += line.utf8.count + 1 }
            }
            figures.journalBytes = data.count
            figures.events = sizes.count
            figures.largestEvent = sizes.max() ?? 0
        }
        return figures
    }

    /// A benchmark that could not run as intended.
    struct BenchmarkFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
