import ChildProcess
import Foundation
import Testing

/// Issue 35: every example behaves like a tool — `--help` prints the usage to standard output and
/// exits 0; an unknown flag, long or short, prints one line naming it and the usage to standard
/// error and exits 64 (`EX_USAGE`, sysexits(3)) before anything runs. Before, three examples ran
/// their whole tour for either, and AccountsApp accepted `-x`.
struct ExamplesAsToolsTests {
    static let examples = ["AccountsApp", "LifecycleTour", "ModularApp", "MultiOrgLogin"]

    @Test(arguments: examples, ["--help", "-h"])
    func helpPrintsTheUsageToStandardOutputAndExits0(example: String, flag: String) async throws {
        let child = try await runExample(example, arguments: [flag], status: 0, seconds: 30)
        let text = child.lines.joined(separator: "\n")
        #expect(child.lines.first?.hasPrefix("\(example) — ") == true, "the name and a one-line summary: \(child.lines.prefix(1))")
        for part in ["usage: \(example)", "\nflags:\n", "  --help, -h", "\nexit status: 0 ", "\n             64 "] {
            #expect(text.contains(part), "\(part) in \(example) \(flag)")
        }
        #expect(child.errors.isEmpty, "stderr: \(child.errors)")
    }

    @Test(arguments: examples, ["-x", "--x"])
    func anUnknownFlagIsOneLineAndTheUsageOnStandardErrorWith64(example: String, flag: String) async throws {
        let home = try TemporaryDataHome()
        let child = try await runExample(example, arguments: [flag], environment: home.environment, status: 64, seconds: 30)
        let lines = child.errors.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "unknown flag '\(flag)'", "stderr: \(child.errors)")
        #expect(lines.dropFirst().first?.hasPrefix("\(example) — ") == true && child.errors.contains("usage: \(example)"))
        #expect(child.lines.isEmpty, "nothing ran: \(child.lines.prefix(3))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.url.path).isEmpty, "nothing was written")
    }

    @Test func aFlagWithoutItsValueIsRefusedWith64() async throws {
        let child = try await runExample("AccountsApp", arguments: ["--login-host"], status: 64, seconds: 30)
        #expect(child.errors.hasPrefix("--login-host needs a value (URL)\nAccountsApp — "), "stderr: \(child.errors)")
        let launch = try await runExample("AccountsApp", arguments: ["--open-url"], status: 64, seconds: 30)
        #expect(launch.errors.hasPrefix("--open-url needs a value (URL)\n"), "a launch flag is checked the same way: \(launch.errors)")
    }

    /// The launch flags are ProcessHost's: AccountsApp (on a ProcessHost) lists them and passes
    /// them through; an example on a simulated host refuses them, since they would do nothing.
    @Test func launchFlagsPassThroughToTheProcessHostAndNowhereElse() async throws {
        let help = try await runExample("AccountsApp", arguments: ["--help"], status: 0, seconds: 30)
        #expect(help.lines.contains("launch flags (ProcessHost's, passed through to it):"))
        let tour = try await runExample("LifecycleTour", arguments: ["--background"], status: 64, seconds: 30)
        #expect(tour.errors.hasPrefix("unknown flag '--background'\n"))
        let badURL = try await runExample("AccountsApp", arguments: ["--open-url", "nope"], status: 64, seconds: 30)
        #expect(badURL.errors.hasPrefix("--open-url 'nope' is not a URL\n"))
    }
}
