import AppKernel
import AppKernelPOSIX
import AppKernelTesting
import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `APPKERNEL_JOURNAL`: what the process host writes, and how it refuses a path it must not use.
struct JournalTests {
    @Test @MainActor func anEmptyJournalPathIsRefusedNamingTheVariable() {
        #expect {
            try ProcessHost.checkEnvironment(["APPKERNEL_JOURNAL": " "])
        } throws: { error in
            "\(error)".hasPrefix("APPKERNEL_JOURNAL: set but empty") && "\(error)".contains("or unset it")
        }
    }

    @Test @MainActor func anUnwritablePathIsRefusedWithThePathAndTheFix() throws {
        let path = "/nonexistent-\(UUID().uuidString)/run.journal"
        let configuration = ProcessHost.Configuration(memoryPressure: nil, arguments: [], environment: ["APPKERNEL_JOURNAL": path])
        #expect {
            _ = try ProcessHost(delegate: JournalTestDelegate(), configuration: configuration)
        } throws: { error in
            guard let error = error as? ProcessHost.EnvironmentError else { return false }
            return error.name == "APPKERNEL_JOURNAL" && error.message.contains(path) && error.message.contains("give it the path of a file")
        }
    }

    @Test @MainActor func aLinkInTheJournalsPlaceIsRefusedAndItsTargetLeftAlone() throws {
        let folder = try JournalFolder()
        let target = folder.url.appendingPathComponent("target")
        try Data("keep".utf8).write(to: target)
        let link = folder.url.appendingPathComponent("run.journal")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let configuration = ProcessHost.Configuration(memoryPressure: nil, arguments: [], environment: ["APPKERNEL_JOURNAL": link.path])
        #expect {
            _ = try ProcessHost(delegate: JournalTestDelegate(), configuration: configuration)
        } throws: { error in
            "\(error)".contains("symbolic link") && "\(error)".contains(link.path)
        }
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
    }

    @Test @MainActor func anEarlierJournalOpenToOthersIsReplacedOwnerOnly() throws {
        let folder = try JournalFolder()
        let journal = folder.url.appendingPathComponent("run.journal")
        try Data("an earlier run\n".utf8).write(to: journal)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: journal.path)
        let configuration = ProcessHost.Configuration(memoryPressure: nil, arguments: ["--location"], environment: ["APPKERNEL_JOURNAL": journal.path])
        let host = try ProcessHost(delegate: JournalTestDelegate(), configuration: configuration)
        #expect(try FileManager.default.attributesOfItem(atPath: journal.path)[.posixPermissions] as? Int == 0o600)
        let text = try String(contentsOf: journal, encoding: .utf8)
        #expect(text.hasSuffix("# appkernel journal 1\n# executable: \(URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent)\n# arguments: --location\n"))
        #expect(!text.contains("earlier"))
        withExtendedLifetime(host) {}
    }

    @Test func theJournalIsOwnerOnlyAndHoldsEachSignalsStepWithItsTraceAndNoToken() async throws {
        let folder = try JournalFolder()
        let journal = folder.url.appendingPathComponent("run.journal")
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["APPKERNEL_JOURNAL": journal.path],
                                     arguments: ["--open-url", "demo://item/7?access_token=SECRET42&view=full"])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        child.send(SIGUSR1)
        #expect(await child.waitForLine("app.memoryWarning"))
        child.send(SIGTSTP)
        #expect(await child.waitForLine("scene.didEnterBackground"))
        // Stopped first: a SIGCONT before the host's own SIGSTOP would leave it stopped.
        #expect(await child.waitUntil { _, _ in ProcessHostSignalTests.processState(child.pid) == "T" })
        child.send(SIGCONT)
        #expect(await child.waitUntil { lines, _ in lines.filter { $0 == "scene.didBecomeActive" }.count == 2 })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)

        let mode = try FileManager.default.attributesOfItem(atPath: journal.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let text = try String(contentsOf: journal, encoding: .utf8)
        #expect(!text.contains("SECRET42"))
        #expect(text.hasPrefix("# appkernel journal 1\n# executable: ProcessHostDemo\n# arguments: --open-url demo://item/7?access_token=•&view=full\n"))
        let lines = text.split(separator: "\n").map(String.init)
        let steps = lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("=") && !$0.hasPrefix("+") }
        #expect(steps == ["launch", "memoryWarning # SIGUSR1", "background # SIGTSTP", "foreground # SIGCONT", "terminate # SIGTERM"])
        let afterWarning = try #require(lines.firstIndex(of: "memoryWarning # SIGUSR1"))
        #expect(lines[afterWarning + 1] == "= app.didReceiveMemoryWarning")
        #expect(lines.suffix(4) == ["= scene-1.willResignActive", "= scene-1.didEnterBackground", "= scene-1.didDisconnect", "= app.willTerminate"])
        #expect(text.utf8.count / steps.count <= 1024, "at most 1 KB an event")
        #expect(lines.allSatisfy { !$0.hasPrefix("+") || $0.hasSuffix("ms") || $0.hasSuffix("s") || $0.hasSuffix("m") })
    }
}

/// `SimulatedHost.replay(journal:)` against journals written by hand.
@MainActor
struct JournalReplayTests {
    static let journal = """
        # appkernel journal 1
        # executable: demo
        # arguments:
        +20ms
        launch
        = app.willFinishLaunching
        = app.didFinishLaunching
        = bootLoader.phase(setupWindow)
        = bootLoader.phaseEnded(setupWindow)
        = bootLoader.phase(startRunOnceServices)
        = bootLoader.phaseEnded(startRunOnceServices)
        = bootLoader.phase(startNonLazyServices)
        = bootLoader.phaseEnded(startNonLazyServices)
        = bootLoader.phase(startAutoStartServiceGroups)
        = bootLoader.phaseEnded(startAutoStartServiceGroups)
        = bootLoader.phase(showWindow)
        = bootLoader.phaseEnded(showWindow)
        = bootLoader.phase(startLauncher)
        = bootLoader.phaseEnded(startLauncher)
        = app.configurationForConnecting(scene-1)
        = scene-1.willConnect
        = scene-1.willEnterForeground
        = scene-1.didBecomeActive
        +2s
        memoryWarning # SIGUSR1
        = app.didReceiveMemoryWarning
        +250ms
        background # SIGTSTP
        = scene-1.willResignActive
        = scene-1.didEnterBackground

        """

    @Test func aJournalReplaysToTheIdenticalTraceOnTheTestClock() async throws {
        var world: ExplorerWorld?
        let replay = try await SimulatedHost.replay(journal: Self.journal) {
            world = ExplorerWorld { _ in JournalTestDelegate() }
            return world!
        }
        #expect(replay.isIdentical, "\(replay)")
        #expect(replay.matchedObservations == 21)
        #expect(world?.clock.now.offset == .milliseconds(2_270))
        #expect(replay.description == "identical (6 steps, 21 trace lines)")
    }

    @Test func aPartialLastLineIsLeftOutAndWhatTheKillCutIsNotCompared() async throws {
        let cut = Self.journal.prefix { $0 != "=" } + "= app.willFinishLaunching\n= app.didFinishLaun"
        let replay = try await SimulatedHost.replay(journal: String(cut)) { ExplorerWorld { _ in JournalTestDelegate() } }
        #expect(replay.isIdentical, "\(replay)")
        #expect(replay.droppedPartialLine)
        #expect(replay.matchedObservations == 1)
    }

    @Test func theFirstDivergingLineIsNamedWithWhatWasExpectedAndWhatCame() async throws {
        let wrong = Self.journal.replacingOccurrences(of: "= app.didReceiveMemoryWarning", with: "= app.willTerminate")
        let replay = try await SimulatedHost.replay(journal: wrong) { ExplorerWorld { _ in JournalTestDelegate() } }
        #expect(replay.divergence == JournalReplay.Divergence(line: 26, expected: "= app.willTerminate", actual: "= app.didReceiveMemoryWarning"))
        #expect("\(replay)".hasPrefix("diverged at line 26: expected '= app.willTerminate', the replay gave '= app.didReceiveMemoryWarning'"))
    }

    @Test func aStepTheHostRefusesIsADivergenceAtItsLine() async throws {
        let twice = Self.journal + "background # SIGTSTP\n= scene-1.didEnterBackground\n"
        let replay = try await SimulatedHost.replay(journal: twice) { ExplorerWorld { _ in JournalTestDelegate() } }
        #expect(replay.divergence?.line == 31)
        #expect(replay.divergence?.actual.hasPrefix("the host refused it") == true)
    }

    @Test func aSignalStepRunsWhatTheHostsSignalTableMapsItTo() async throws {
        let asSignals = Self.journal.replacingOccurrences(of: "memoryWarning # SIGUSR1", with: "signal(SIGUSR1)")
            .replacingOccurrences(of: "background # SIGTSTP", with: "signal(SIGTSTP)")
        let replay = try await SimulatedHost.replay(journal: asSignals) { ExplorerWorld { _ in JournalTestDelegate() } }
        #expect(replay.isIdentical, "\(replay)")
    }

    @Test func anUnknownStepIsRefusedWithItsLineAndTheStepsThereAre() async throws {
        await #expect {
            _ = try await SimulatedHost.replay(journal: "launch\nsleep # nope\n") { ExplorerWorld { _ in JournalTestDelegate() } }
        } throws: { error in
            "\(error)".hasPrefix("journal line 2: unknown step 'sleep'; add its StepDefinition") && "\(error)".contains("launch, launchInBackground")
        }
    }
}

@MainActor
final class JournalTestDelegate: ApplicationDelegate {
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Journal") { JournalTestSceneDelegate() }
    }
}

@MainActor
final class JournalTestSceneDelegate: SceneDelegate {}

/// A temporary folder the test removes.
final class JournalFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
