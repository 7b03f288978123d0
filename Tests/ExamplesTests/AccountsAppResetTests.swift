import ChildProcess
import Foundation
import Testing

/// Issue 35: after a passcode was set in `--interactive`, every plain run ended with "the user did
/// not enter the passcode" (the tour had typed its own, wrongly, counting a failure each time)
/// and no way out. The tour now answers only its own passcode (checked against the stored hash:
/// no failure counted), says what happened and how to start over; `--reset` starts over.
@Suite(.serialized)
struct AccountsAppResetTests {
    @Test func aPasscodeNobodyCanAnswerSaysWhatHappenedAndHowToStartOver() async throws {
        let home = try TemporaryDataHome()
        let dataHome = home.url.appendingPathComponent("AccountsApp").path
        let set = try await runExample("AccountsApp", arguments: ["--interactive"], input: "passcode 1357\nquit\n", environment: home.environment)
        #expect(set.lines.contains { $0.contains("passcode set") }, "\(set.lines)")
        for _ in 0..<2 {
            let plain = try await runExample("AccountsApp", environment: home.environment, status: 1)
            ExampleOutput(plain.lines).expectInOrder([
                "launch error: the launch phase 'passcode' failed: the user did not enter the passcode",
                "the launch did not complete; the app ends with status 1",
                "a passcode is set on this data home and nobody answered it (the scripted tour answers only its own passcode (2468) "
                    + "and reads no terminal; --interactive does). Type it in `AccountsApp --interactive` (on a terminal), or start over "
                    + "with `AccountsApp --reset`, which removes the data home \(dataHome) (users, stores, the passcode)",
                "terminated (exit 1)",
            ])
            #expect(!plain.lines.contains { $0.contains("passcode asked") }, "the tour did not guess: no failure was counted")
        }
        let piped = try await runExample("AccountsApp", arguments: ["--interactive"], environment: home.environment, status: 1)
        #expect(piped.lines.contains { $0.contains("nobody answered it (standard input ended before a passcode was typed)") }, "\(piped.lines)")
        // The passcode is still there, with every attempt left: typed, it opens the app.
        let typed = try await runExample("AccountsApp", arguments: ["--interactive"], input: "1357\nquit\n", environment: home.environment)
        #expect(typed.lines.contains { $0.contains("passcode (attempt 1, 10 left)") }, "\(typed.lines)")
    }

    @Test func resetRemovesTheDataHomeAndTheNextRunStartsOver() async throws {
        let home = try TemporaryDataHome()
        let dataHome = home.url.appendingPathComponent("AccountsApp")
        _ = try await runExample("AccountsApp", arguments: ["--interactive"], input: "passcode 1357\nquit\n", environment: home.environment)
        let reset = try await runExample("AccountsApp", arguments: ["--reset"], environment: home.environment, status: 0, seconds: 30)
        #expect(reset.lines.count == 1 && reset.lines.first?.contains("removed the data home \(dataHome.path) (users, stores, the passcode, "
                                                                           + "the embedded org's state); the master key file stays") == true, "\(reset.lines)")
        #expect(!FileManager.default.fileExists(atPath: dataHome.path))
        #expect(FileManager.default.fileExists(atPath: home.keyFile.path), "the master key stays")
        let again = try await runExample("AccountsApp", arguments: ["--reset"], environment: home.environment, status: 0, seconds: 30)
        #expect(again.lines.first?.contains("nothing to reset: there is no data home at \(dataHome.path)") == true, "\(again.lines)")
        let fresh = try await runExample("AccountsApp", environment: home.environment, status: 0)
        #expect(fresh.lines.contains { $0.contains("launched: [authenticated]") }, "a fresh login: \(fresh.lines.suffix(3))")
    }

    /// One instance a data home: a reset while an instance runs on it would pull its data away.
    @Test func resetIsRefusedWith75WhileAnInstanceRunsOnTheDataHome() async throws {
        let home = try TemporaryDataHome()
        let dataHome = home.url.appendingPathComponent("AccountsApp")
        let running = try ChildProcess(executable: "AccountsApp", environment: home.environment, arguments: ["--interactive"])
        #expect(await running.waitUntil(seconds: 60) { lines, _ in lines.contains { $0.contains("commands: list") } }, "stderr: \(running.errors)")
        let reset = try await runExample("AccountsApp", arguments: ["--reset"], environment: home.environment, status: 75, seconds: 30)
        #expect(reset.errors.hasPrefix("AccountsApp --reset: the data home \(dataHome.path) was NOT removed: "), "stderr: \(reset.errors)")
        #expect(reset.errors.hasSuffix("; quit that instance first\n"))
        #expect(FileManager.default.fileExists(atPath: dataHome.appendingPathComponent("keys").path), "the data is intact")
        running.write("quit\n")
        #expect(await running.waitForExit(seconds: 60) == 0, "stderr: \(running.errors)")
    }
}
