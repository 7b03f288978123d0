import ChildProcess
import LoopbackServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `swift run AccountsApp`, as a newcomer runs it: the built executable in a child process.
@Suite(.serialized)
struct AccountsAppTests {
    @Test func theScriptedTourRunsEveryStepAgainstTheEmbeddedOrgAndExitsZero() async throws {
        let home = try TemporaryDataHome()
        let child = try await runExample("AccountsApp", environment: home.environment)
        let output = ExampleOutput(child.lines)
        output.expectInOrder([
            "using the embedded org (ada@acme.com, bob@beta.com) — no network",
            "app did finish launching",
            "scene connected (scene-1)",
            "launch phase config done (…)",
            "SmartStore ready: the global store has 0 soup(s)",
            "launch phase sdkInit done (…)",
            "launch phase passcode done (…)",
            "launch phase auth done (…)",
            "launch phase rootController done (…)",
        ])
        output.expectInOrder([
            "root controller appeared for ada@acme.com",
            "synced down 2 new or changed account(s) into the store of ada@acme.com",
            "── list", "┌ Accounts of ada@acme.com", "│   Acme Corporation — Manufacturing", "│   Globex — Energy",
            "│ Contacts", "│   1. Ada Lovelace", "│   2. Alan Turing", "│   3. Grace Hopper", "│   4. Linus Torvalds", "│   5. Margaret Hamilton",
            "── delete a contact that has cases",
            "delete contact 1 (Ada Lovelace)", "  row 1 removed (optimistic delete)", "  row 1 put back",
            "  refused: Your attempt to delete Ada Lovelace could not be completed because it is associated with the following cases.",
            "│   1. Ada Lovelace",
            "── delete a contact without cases",
            "delete contact 2 (Alan Turing)", "  row 2 removed (optimistic delete)", "  deleted Alan Turing",
            "│   1. Ada Lovelace", "│   2. Grace Hopper",
            "── the org goes away; rename an account offline (it stays in the store)",
            "│   Acme Corporation (renamed offline) — Manufacturing  (changed here, not synced up yet)",
            "sync up failed, the change stays in the store: ",
            "── the org is back: sync up", "synced up: 1 updated, 0 created, 0 refused",
            "│   Acme Corporation (renamed offline) — Manufacturing",
            "── set a passcode", "passcode set",
            "scene will resign active", "scene entered the background", "scene will enter the foreground", "scene became active",
            "passcode asked (attempt 1, 10 left)", "wrong passcode", "passcode asked (attempt 2, 9 left)", "unlocked",
            "── switch user", "logging in another user (bob@beta.com)", "current user changed: bob@beta.com",
            "root controller appeared for bob@beta.com", "synced down 1 new or changed account(s) into the store of bob@beta.com",
            "┌ Accounts of bob@beta.com", "│   Beta Labs — Research", "│ Contacts", "│   (none)",
            "── log out", "logging out bob@beta.com", "current user changed: ada@acme.com",
            "┌ Accounts of ada@acme.com", "│   Acme Corporation (renamed offline) — Manufacturing",
            "── quit", "app will terminate", "terminated (exit 0)",
        ])
        #expect(!child.lines.contains { $0.contains("typing •") && $0.hasSuffix(")") }, "a masked passcode is not printed after all")
        let deleted = try #require(output.index(of: "  deleted Alan Turing"))
        #expect(!output.texts[deleted...].contains { $0.hasPrefix("│") && $0.contains("Alan Turing") },
                "the deleted contact is gone from every later list")
    }

    @Test func aRelaunchFindsTheUserAndTheStoreWithoutALoginAndLeavesNothingElsewhere() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        let second = try await runExample("AccountsApp", environment: home.environment)
        let output = ExampleOutput(second.lines)
        output.expectInOrder([
            "passcode asked (attempt 1, 10 left)",                     // the passcode set by the first run
            "launched: [alreadyAuthenticated, passcodeVerified]",
            "synced down 0 new or changed account(s) into the store of ada@acme.com",
            "┌ Accounts of ada@acme.com", "│   Acme Corporation (renamed offline) — Manufacturing",
        ])
        // Everything the app keeps is under its data home, owner-only.
        let app = home.url.appendingPathComponent("AccountsApp")
        let mode = try FileManager.default.attributesOfItem(atPath: app.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let passcode = try FileManager.default.attributesOfItem(atPath: app.appendingPathComponent("passcode.json").path)[.posixPermissions] as? Int
        #expect(passcode == 0o600)
        let files = FileManager.default.enumerator(atPath: home.url.path)?.allObjects as? [String] ?? []
        #expect(!files.isEmpty && files.allSatisfy { $0.hasPrefix("AccountsApp") }, "\(files)")
    }

    /// Every example, run with a temporary directory of its own (`TMPDIR`), leaves it as it found it.
    @Test func theExamplesLeaveTheTemporaryDirectoryAsTheyFoundIt() async throws {
        let home = try TemporaryDataHome(), temporary = try TemporaryDataHome()
        let environment = home.environment.merging(["TMPDIR": temporary.url.path]) { $1 }
        for example in ["AccountsApp", "LifecycleTour", "ModularApp", "MultiOrgLogin"] {
            _ = try await runExample(example, environment: environment)
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path) == [], "\(example) left files behind")
        }
    }

    @Test func interactiveCommandsDriveTheSameApp() async throws {
        let home = try TemporaryDataHome()
        let commands = ["list", "delete 9", "frobnicate", "delete 2", "bg", "fg", "switch", "switch", "logout", "quit"]
        let child = try await runExample("AccountsApp", arguments: ["--interactive"], input: commands.joined(separator: "\n") + "\n",
                                         environment: home.environment)
        let output = ExampleOutput(child.lines.flatMap { $0.components(separatedBy: "> ") }.filter { !$0.isEmpty })
        output.expectInOrder([
            "commands: list, delete N, bg, fg, switch, logout, passcode CODE, quit",
            "┌ Accounts of ada@acme.com",
            "there is no contact 9",
            "unknown command 'frobnicate'",
            "delete contact 2 (Alan Turing)", "  deleted Alan Turing",
            "scene entered the background", "scene became active",
            "logging in another user (bob@beta.com)", "current user changed: bob@beta.com",
            "current user changed: ada@acme.com",
            "logging out ada@acme.com", "current user changed: bob@beta.com",
            "app will terminate", "terminated (exit 0)",
        ])
    }

    /// After the last user logs out the app returns to its login, as the Mobile SDK's apps do —
    /// and says so, rather than logging a user back in silently.
    @Test func theLastLogoutIsAnnouncedAndSoIsTheLoginThatFollows() async throws {
        let home = try TemporaryDataHome()
        let child = try await runExample("AccountsApp", arguments: ["--interactive"], input: "logout\nquit\n", environment: home.environment)
        ExampleOutput(child.lines.flatMap { $0.components(separatedBy: "> ") }.filter { !$0.isEmpty }).expectInOrder([
            "logging out ada@acme.com — the last user: the app returns to its login, as the Mobile SDK's apps do",
            "logged in again as ada@acme.com",
            "terminated (exit 0)",
        ])
    }

    /// Output that arrives while the prompt waits (a memory warning from SIGUSR1) ends the
    /// prompt's line first and shows the prompt again: it never lands inside the typed line.
    @Test func outputArrivingWhileThePromptWaitsGetsALineOfItsOwn() async throws {
        let home = try TemporaryDataHome()
        let child = try ChildProcess(executable: "AccountsApp", environment: home.environment, arguments: ["--interactive"])
        #expect(await child.waitUntil { lines, _ in lines.contains { $0.contains("commands: list") } })
        // The prompt follows that line in the same main-actor turn: it is waiting now.
        child.send(SIGUSR1)
        #expect(await child.waitUntil { lines, _ in lines.contains { $0.contains("memory warning (SIGUSR1") } })
        let warning = try #require(child.lines.first { $0.contains("memory warning (SIGUSR1") })
        #expect(!warning.contains("> "), "the warning is not inside the prompt's line: \(warning)")
        child.send(SIGINT)
        #expect(await child.waitForExit(seconds: 30) == 0)
    }

    /// On a real terminal (a pseudo-terminal a Python script drives) the passcode typed at the
    /// lock's prompt is not echoed, while the commands around it are.
    @Test(.enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
    func aPasscodeTypedOnATerminalIsNotEchoed() async throws {
        let home = try TemporaryDataHome()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/pty_passcode.py")
        let child = try ChildProcess(executable: "/usr/bin/env", environment: home.environment,
                                     arguments: ["python3", script.path, ChildProcess.executable("AccountsApp").path])
        #expect(await child.waitForExit(seconds: 60) == 0, "stderr: \(child.errors)")
        #expect(child.lines == ["NOT ECHOED", "exit 0"], "stderr: \(child.errors)")
    }

    @Test func ctrlCTerminatesGracefullyAndTheLaunchTimelineIsWritten() async throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-launch-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: trace) }
        let home = try TemporaryDataHome()
        let child = try ChildProcess(executable: "AccountsApp", environment: home.environment.merging(["APPKERNEL_TRACE": trace.path]) { $1 },
                                     arguments: ["--interactive"])
        #expect(await child.waitUntil { lines, _ in lines.contains { $0.contains("commands: list") } })
        child.send(SIGINT)
        #expect(await child.waitForExit(seconds: 30) == 0, "stderr: \(child.errors)")
        ExampleOutput(child.lines.flatMap { $0.components(separatedBy: "> ") }.filter { !$0.isEmpty })
            .expectInOrder(["scene will resign active", "scene entered the background", "app will terminate",
                            "launch timeline written to \(trace.path)", "terminated (exit 0)"])
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any]
        let events = json?["traceEvents"] as? [[String: Any]] ?? []
        let names = events.compactMap { $0["name"] as? String }
        #expect(chromeTraceNestingViolations(events) == [], "the SDK's phases and the pipeline's steps overlap; each track still nests")
        #expect(["sdk.config", "sdk.sdkInit", "sdk.passcode", "sdk.auth", "sdk.rootController"].allSatisfy(names.contains), "\(names)")
        #expect(names.contains("app.didFinishLaunching"))
    }

    @Test func helpPrintsEveryFlagCommandAndExitStatusToStandardOutputAndExits0() async throws {
        let child = try await runExample("AccountsApp", arguments: ["--help"], status: 0, seconds: 30)
        let text = child.lines.joined(separator: "\n")
        for expected in ["--interactive", "--login-host", "--client-id", "--redirect-uri", "--device", "--help",
                         "list, delete N, bg, fg, switch, logout, passcode CODE, quit", "--open-url URL", "APPKERNEL_TRACE",
                         "exit status: 0", "64 a bad command line or environment"] {
            #expect(text.contains(expected), "\(expected) in --help")
        }
        #expect(child.errors.isEmpty)
    }

    @Test func anUnknownFlagOrAnEmptyTraceSettingIsRefusedBeforeAnythingRuns() async throws {
        let home = try TemporaryDataHome()
        let flag = try await runExample("AccountsApp", arguments: ["--bogus"], environment: home.environment, status: 64, seconds: 30)
        #expect(flag.errors.hasPrefix("unknown flag '--bogus'"))
        let trace = try await runExample("AccountsApp", environment: home.environment.merging(["APPKERNEL_TRACE": ""]) { $1 },
                                         status: 64, seconds: 30)
        #expect(trace.errors.hasPrefix("APPKERNEL_TRACE: set but empty"))
        #expect(flag.lines.isEmpty && trace.lines.isEmpty, "nothing ran")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.url.path).isEmpty, "no data folder was made")
    }

    /// A login that cannot reach its org (the device flow against a closed loopback port): the
    /// error is said once, in words for the app's user, and the app ends gracefully with status 1.
    @Test func aFailedLaunchSaysWhyOnceAndExits1() async throws {
        let home = try TemporaryDataHome()
        let child = try await runExample("AccountsApp", arguments: ["--login-host", "http://127.0.0.1:9", "--client-id", "x", "--device"],
                                         environment: home.environment, status: 1, seconds: 60)
        let errors = child.lines.filter { $0.contains("login failed while requesting a device code") }
        #expect(errors.count == 1, "\(child.lines)")
        #expect(errors.first?.contains("launch error: the launch phase 'auth' failed: ") == true)
        #expect(!child.lines.contains { $0.contains("call launch() again") }, "no advice meant for the code that calls launch()")
        ExampleOutput(child.lines).expectInOrder(["the launch did not complete; the app ends with status 1", "app will terminate", "terminated (exit 1)"])
    }

    /// Issue 35: a trace path that cannot be written was found out after the run (status 0, and
    /// an NSError dump in the log); it is now refused before anything runs, in one line.
    @Test func aTraceThatCannotBeWrittenIsRefusedInOneLineBeforeAnythingRuns() async throws {
        let home = try TemporaryDataHome()
        let path = home.url.appendingPathComponent("no-such-folder/launch.json").path
        let child = try await runExample("AccountsApp", environment: home.environment.merging(["APPKERNEL_TRACE": path]) { $1 },
                                         status: 64, seconds: 60)
        #expect(child.errors == "APPKERNEL_TRACE: cannot write the launch timeline to \(path): the folder \(home.url.path)/no-such-folder "
                    + "does not exist; create it, or point APPKERNEL_TRACE at a file in a folder you can write to\n")
        #expect(child.lines.isEmpty, "nothing ran: \(child.lines)")
        #expect(!child.lines.contains { $0.contains("launch timeline written to") })
    }

    @Test func aBadCommandLineSaysWhatIsWrongAndExits64() async throws {
        let child = try await runExample("AccountsApp", arguments: ["--login-host", "https://login.salesforce.com"], status: 64, seconds: 30)
        #expect(child.errors.hasPrefix("--login-host and --client-id go together"))
        let bad = try await runExample("AccountsApp", arguments: ["--login-host", "ftp://x", "--client-id", "y"], status: 64, seconds: 30)
        #expect(bad.errors.hasPrefix("--login-host: 'ftp://x' is not an http(s) URL"))
    }

    /// Issue 29: one instance a data home. A second AccountsApp on the same data home is refused
    /// with the first one's pid and exit status 75, while the first runs on untouched.
    @Test func aSecondInstanceOnTheSameDataHomeIsRefusedWith75() async throws {
        let home = try TemporaryDataHome()
        let first = try ChildProcess(executable: "AccountsApp", environment: home.environment, arguments: ["--interactive"])
        #expect(await first.waitUntil(seconds: 60) { lines, _ in lines.contains { $0.contains("commands: list") } }, "stderr: \(first.errors)")
        let second = try await runExample("AccountsApp", arguments: ["--interactive"], environment: home.environment, status: 75, seconds: 60)
        let dataHome = home.url.appendingPathComponent("AccountsApp").path
        #expect(second.errors.contains("already running as pid \(first.pid) with data home \(dataHome)"), "stderr: \(second.errors)")
        #expect(second.lines.contains { $0.contains("terminated (exit 75)") }, "\(second.lines)")
        #expect(!second.lines.contains { $0.contains("launch phase sdkInit done") }, "nothing of the app ran: \(second.lines)")
        // The first instance saves the embedded org only when it quits: a file there now would be
        // the refused one's, written over the running instance's state.
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/embedded-org/org.sealed"), "the refused instance wrote nothing")
        first.write("list\nquit\n")
        #expect(await first.waitForExit(seconds: 60) == 0, "stderr: \(first.errors)")
        #expect(first.lines.contains { $0.contains("Acme Corporation") }, "the first instance's data is intact")
    }
}
