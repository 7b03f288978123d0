import AppKernel
import AppKernelCore
import AppKernelSDK
import AppKernelTesting
import Foundation

/// What failing closed costs where a user waits: a wrong passcode answer with its failure count
/// written and fsync'd before the answer is judged (`FilePasscodeStore`), beside the same answer
/// judged against a record kept in memory. Both derive the same PBKDF2 key; the difference,
/// round by round, is what persisting the count adds.
@MainActor
enum FailClosedBenchmark {
    struct Figures {
        var inMemory: Stats
        var persisted: Stats
        /// Persisted minus in memory, per wrong answer, round by round.
        var added: Stats
    }

    /// Measures and prints section 10; returns its targets.
    static func report(rounds: Int) async throws -> [(String, Bool)] {
        var targets: [(String, Bool)] = []
        let passcode = try FailClosedBenchmark.measure(rounds: rounds)
        print(AppKernelBenchmarks.table(
            title: "A wrong passcode answer (PBKDF2, 10,000 iterations; min / median per answer)",
            header: ["record", "per wrong answer"],
            rows: [Row(name: "in memory", values: [Format.time(passcode.inMemory)]),
                   Row(name: "FilePasscodeStore (count written and fsync'd before judging)", values: [Format.time(passcode.persisted)]),
                   Row(name: "added by persisting (round by round)", values: [Format.time(passcode.added)])]))
        print("")
        targets.append((String(format: "persisting the failed-attempt count adds < 5 ms to a wrong answer (median %.2f ms)", passcode.added.median * 1e3),
                        passcode.added.median < 0.005))
        let locked = try await LockedLaunchBenchmark.measure(rounds: rounds)
        print(AppKernelBenchmarks.table(
            title: "An SDK launch keeping its data on disk (a checked data home, a passcode record; min / median)",
            header: ["", "time"],
            rows: [Row(name: "single-instance mode off", values: [Format.time(locked.unlocked)]),
                   Row(name: "single-instance mode on (instance.lock held)", values: [Format.time(locked.singleInstance)]),
                   Row(name: "added (round by round)", values: [Format.time(locked.added)]),
                   Row(name: "one FileLock read-modify-write, uncontended", values: [Format.time(locked.lockedUpdate)]),
                   Row(name: "one StrictModes check, data home → stores/", values: [Format.time(locked.homeCheck)])]))
        print("")
        return targets
    }

    static func measure(rounds: Int, answersPerRound: Int = 5) throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appkernel-bench-passcode-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let managers = [PasscodeManager(store: InMemoryPasscodeStore()),
                        PasscodeManager(store: FilePasscodeStore(url: directory.appendingPathComponent("passcode.json"),
                                                                  keyRing: try KeyRing(dataHome: directory, provider: .inMemory(try SecretKey.random()))))]
        let stats = try Measure.stats(rounds: rounds, warmUp: true, managers.map { manager in
            { @MainActor in
                try manager.setPasscode("2468")
                let seconds = Measure.time {
                    for _ in 0..<answersPerRound { precondition(!manager.verify("0000"), "a wrong answer was accepted") }
                }
                precondition(manager.failedAttempts == answersPerRound, "the failures were not counted")
                return seconds / Double(answersPerRound)
            }
        })
        return Figures(inMemory: stats[0], persisted: stats[1], added: stats[1].zip(stats[0], -))
    }
}

/// What the data-home checks and the locks cost a launch: an SDK launch keeping its data on disk
/// (users, passcode record, stores under a checked data home) with single-instance mode off and
/// on, interleaved, beside the cost of each piece alone — a `FileLock` read-modify-write and a
/// StrictModes check of the data home.
@MainActor
enum LockedLaunchBenchmark {
    struct Figures {
        var unlocked: Stats
        var singleInstance: Stats
        /// Single instance minus unlocked, round by round.
        var added: Stats
        var lockedUpdate: Stats
        var homeCheck: Stats
    }

    /// The master key of the benchmark's data homes (one per run, as a key file would be).
    static let benchmarkMasterKey = try! SecretKey.random()

    static func launch(in directory: URL, singleInstance: Bool) async throws {
        let app = Application(delegate: LaunchDelegate(), clock: TestClock())
        let manager = SDKManager(application: app, bootConfig: BootConfig(remoteAccessConsumerKey: "3MVG9-bench", oauthRedirectURI: "bench://done",
                                                                         oauthScopes: ["api"], shouldAuthenticate: false))
        manager.dataDirectory = directory
        manager.keyRing = try KeyRing(dataHome: directory, provider: .inMemory(benchmarkMasterKey))
        manager.requiresSingleInstance = singleInstance
        manager.passcode.store = FilePasscodeStore(url: directory.appendingPathComponent("passcode.json"), keyRing: manager.keyRing!)
        manager.window = Window()
        manager.rootControllerFactory = { _ in PlaceholderController(message: "root") }
        _ = try app.handle(.launch(LaunchOptions(), inBackground: false))
        await manager.automaticLaunch?.value
        precondition(manager.launchState == .finished, "the SDK launch did not complete: \(app.unhandledErrors)")
        precondition(manager.holdsInstanceLock == singleInstance, "the single-instance lock was not taken as asked")
        _ = try app.handle(.terminate)
    }

    static func measure(rounds: Int) async throws -> Figures {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("appkernel-bench-home-\(getpid())")
        defer { try? FileManager.default.removeItem(at: base) }
        let home = try DataHome(url: base.appendingPathComponent("app"))
        let bodies: [@MainActor () async throws -> Double] = [false, true].map { singleInstance in
            { @MainActor in try await Measure.time { try await launch(in: home.url, singleInstance: singleInstance) } }
        }
        let launches = try await Measure.interleaved(rounds: rounds, warmUp: true, bodies).map(Stats.init)
        let lockFile = home.url.appendingPathComponent("bench.lock")
        let pieces = try Measure.stats(rounds: rounds, warmUp: true, [
            { @MainActor in try Measure.time { for _ in 0..<100 { try FileLock.withExclusiveLock(at: lockFile) {} } } / 100 },
            { @MainActor in try Measure.time { for _ in 0..<100 { _ = try PrivateDirectory.check(home.url.appendingPathComponent("stores"), home: home.url) } } / 100 },
        ])
        return Figures(unlocked: launches[0], singleInstance: launches[1], added: launches[1].zip(launches[0], -),
                       lockedUpdate: pieces[0], homeCheck: pieces[1])
    }
}
