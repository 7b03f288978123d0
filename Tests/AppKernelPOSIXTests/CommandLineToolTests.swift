import AppKernel
import AppKernelPOSIX
import ChildProcess
import Foundation
import Testing

/// The examples' shared command-line parser, as sysexits(3) and the GNU coding standards'
/// "--help" section ask of a tool: usage on standard output and 0 for `--help`, one line naming
/// the problem plus the usage on standard error and 64 (`EX_USAGE`) for anything undeclared.
struct CommandLineToolTests {
    let tool = CommandLineTool(
        name: "Sweeper", summary: "removes what a crashed run left behind",
        flags: [.init("--dry-run", short: "-n", "say what would be removed, remove nothing"),
                .init("--older-than", value: "DAYS", "only what is older than DAYS days")],
        environment: [.init("SWEEPER_ROOT=PATH", "the folder to sweep")],
        exitStatuses: [.init(1, "something could not be removed"), .init(0, "swept")],
        notes: ["  a note, as written"])

    /// The usage the tool prints: every part `--help` promises.
    @Test func theUsageNamesTheToolItsFlagsEnvironmentAndExitStatuses() {
        let usage = tool.usage
        #expect(usage.hasPrefix("Sweeper — removes what a crashed run left behind\n\nusage: Sweeper [--dry-run] [--older-than DAYS]\n"))
        for expected in ["\nflags:\n", "  --dry-run, -n      say what would be removed", "  --older-than DAYS  only what is older",
                         "  --help, -h         print this help to standard output and exit 0", "\nenvironment:\n",
                         "  SWEEPER_ROOT=PATH  the folder to sweep", "\n  a note, as written\n",
                         "exit status: 0 swept\n             1 something could not be removed\n             64 a bad command line"] {
            #expect(usage.contains(expected), "\(expected) in:\n\(usage)")
        }
        #expect(!usage.contains("launch flags"), "a tool on a simulated host does not offer ProcessHost's flags")
        #expect(usage.split(separator: "\n").allSatisfy { $0.count <= 100 }, "wrapped to 100 columns")
    }

    @Test(arguments: [["--help"], ["-h"], ["--dry-run", "--help"], ["--bogus", "-h"]])
    func helpPrintsTheUsageToStandardOutputAndExits0(arguments: [String]) {
        #expect(tool.decide(arguments) == .exit(status: 0, standardOutput: tool.usage + "\n", standardError: ""))
    }

    @Test(arguments: [(["--x"], "unknown flag '--x'"), (["-x"], "unknown flag '-x'"), (["--dry-run", "-nx"], "unknown flag '-nx'"),
                      (["--older-than"], "--older-than needs a value (DAYS)"), (["--older-than", "--dry-run"], "--older-than needs a value (DAYS)"),
                      (["--dry-run=yes"], "--dry-run takes no value"), (["stray"], "unexpected argument 'stray': Sweeper takes flags only"),
                      (["--", "stray"], "unexpected argument 'stray' after --: Sweeper takes no arguments"),
                      (["--background"], "unknown flag '--background'")])
    func aBadCommandLineIsOneLineAndTheUsageOnStandardErrorWith64(arguments: [String], line: String) {
        #expect(tool.decide(arguments) == .exit(status: 64, standardOutput: "", standardError: "\(line)\n\(tool.usage)\n"))
    }

    @Test func valuesFollowTheirFlagOrAnEqualsSign() throws {
        let next = try tool.parse(["--older-than", "7", "-n"])
        #expect(next.value("--older-than") == "7" && next.isSet("--dry-run") && !next.wantsHelp)
        let equals = try tool.parse(["--older-than=-1", "--older-than=3"])
        #expect(equals.values("--older-than") == ["-1", "3"] && equals.value("--older-than") == "3", "a value starting with - takes the = form")
        #expect(!equals.isSet("--dry-run") && equals.value("--dry-run") == nil)
        #expect(try tool.parse(["--older-than", "-"]).value("--older-than") == "-", "- alone is a value (standard input)")
        #expect(try tool.parse([]).launchArguments.isEmpty)
    }

    @Test func processHostsLaunchFlagsPassThroughCheckedWhenAccepted() throws {
        var host = tool
        host.acceptsLaunchFlags = true
        let parsed = try host.parse(["--background", "--open-url", "app://items/42", "-n", "--source-app=mail", "--fetch"])
        #expect(parsed.launchArguments == ["--background", "--open-url", "app://items/42", "--source-app", "mail", "--fetch"])
        #expect(parsed.isSet("--dry-run"))
        let launch = try LaunchArguments(arguments: parsed.launchArguments)
        #expect(launch.inBackground && launch.options.url == URL(string: "app://items/42") && launch.options.sourceApplication == "mail")
        #expect(host.decide(["--open-url", "not a url"]) == .exit(status: 64, standardOutput: "",
                                                                  standardError: "--open-url 'not a url' is not a URL\n\(host.usage)\n"))
        #expect(host.decide(["--shortcut"]) == .exit(status: 64, standardOutput: "", standardError: "--shortcut needs a value (TYPE)\n\(host.usage)\n"))
        for flag in LaunchArguments.flags { #expect(host.usage.contains("  \(flag.label)"), "\(flag.name) in the usage") }
    }

    /// The declared launch flags are exactly the ones `LaunchArguments` reads: each is taken by
    /// it (with a value when it declares one), and a flag it does not read is not declared.
    @Test func theDeclaredLaunchFlagsAreTheOnesLaunchArgumentsReads() throws {
        for flag in LaunchArguments.flags {
            let arguments = [flag.name] + (flag.valueName == nil ? [] : ["app://x"])
            #expect(throws: Never.self, "\(flag.name)") { try LaunchArguments(arguments: arguments) }
            if flag.valueName != nil {
                #expect(throws: LaunchArguments.Error.self, "\(flag.name) without its value") { try LaunchArguments(arguments: [flag.name]) }
            }
        }
        #expect(Set(LaunchArguments.flags.map(\.name)) == ["--background", "--open-url", "--source-app", "--shortcut", "--user-activity", "--location", "--fetch"])
    }

    @Test func exitStatuses0And64AreAlwaysListedInOrder() {
        let bare = CommandLineTool(name: "Bare", summary: "does one thing")
        #expect(bare.exitStatuses.map(\.code) == [0, 64])
        #expect(bare.usage.hasSuffix("exit status: 0 success\n             64 a bad command line (an unknown flag, a flag without its value)"))
        #expect(bare.usage.contains("usage: Bare\n"), "no trailing space without flags")
        #expect(tool.exitStatuses.map(\.code) == [0, 1, 64])
    }
}

/// `APPKERNEL_TRACE` names a file the host writes after the launch: a path it cannot write is
/// refused before anything runs, in one line that says what, where and the fix.
@MainActor
struct TracePathTests {
    @Test func aTraceInAFolderThatDoesNotExistIsRefusedInOneLine() {
        let path = "/nonexistent-\(UUID().uuidString)/x.json"
        do {
            try ProcessHost.checkEnvironment(["APPKERNEL_TRACE": path])
            Issue.record("a trace in a missing folder was taken")
        } catch {
            #expect(error.name == "APPKERNEL_TRACE")
            #expect(error.description == "APPKERNEL_TRACE: cannot write the launch timeline to \(path): the folder "
                        + "\((path as NSString).deletingLastPathComponent) does not exist; create it, or point APPKERNEL_TRACE at a file in a folder you can write to")
        }
    }

    @Test func aTraceThatIsAFolderOrInAFileIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("plain")
        try Data().write(to: file)
        do {
            try ProcessHost.checkEnvironment(["APPKERNEL_TRACE": folder.path])
            Issue.record("a folder was taken as the trace file")
        } catch {
            #expect(error.description == "APPKERNEL_TRACE: cannot write the launch timeline to \(folder.path): it is a folder; "
                        + "give APPKERNEL_TRACE a file path, such as \(folder.path)/launch.json")
        }
        #expect(throws: ProcessHost.EnvironmentError.self) { try ProcessHost.checkEnvironment(["APPKERNEL_TRACE": file.path + "/x.json"]) }
        #expect(throws: Never.self) { try ProcessHost.checkEnvironment(["APPKERNEL_TRACE": folder.appendingPathComponent("launch.json").path]) }
        #expect(throws: Never.self, "relative to the working directory") { try ProcessHost.checkEnvironment(["APPKERNEL_TRACE": "launch.json"]) }
    }

    /// `ProcessHost.run(delegate:)` (README's server, verbatim) refuses to start — one line on
    /// standard error, exit status 2 (the table in ProcessHost's documentation) — instead of
    /// running and then dumping an NSError.
    @Test func aProcessHostWithAnUnwritableTraceExits2WithOneLine() async throws {
        let path = "/nonexistent-\(UUID().uuidString)/x.json"
        let child = try ChildProcess(executable: "ReadmeServer", environment: ["APPKERNEL_TRACE": path])
        #expect(await child.waitForExit(seconds: 30) == 2, "stderr: \(child.errors)")
        let lines = child.errors.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.contains("APPKERNEL_TRACE: cannot write the launch timeline to \(path): the folder") == true,
                "stderr: \(child.errors)")
        #expect(!child.errors.contains("NSCocoaErrorDomain") && child.lines.isEmpty, "nothing ran: \(child.lines)")
    }
}
