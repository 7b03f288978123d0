import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line tool's interface — its flags, environment variables and exit statuses — and
/// the parser that holds the command line to it, as a Unix tool does.
///
/// `--help` (or `-h`) prints the usage (name, one-line summary, flags, environment, exit
/// statuses) to standard output and exits 0. Anything the tool does not declare — an unknown
/// `--flag` or `-f`, a flag without its value, a stray argument — prints one line naming it, then
/// the usage, to standard error and exits 64 (`EX_USAGE`, sysexits(3)), before anything runs.
/// ``ProcessHost``'s own launch flags (``LaunchArguments/flags``: `--background`,
/// `--open-url URL`, …) pass through, checked, to ``Arguments/launchArguments`` when
/// ``acceptsLaunchFlags`` is on.
///
/// ```swift
/// let tool = CommandLineTool(
///     name: "Sweeper", summary: "removes what a crashed run left behind",
///     flags: [.init("--dry-run", "say what would be removed, remove nothing"),
///             .init("--older-than", value: "DAYS", "only what is older than DAYS days")],
///     environment: [.init("SWEEPER_ROOT", "the folder to sweep (default: the data home)")],
///     exitStatuses: [.init(0, "swept"), .init(1, "something could not be removed")])
/// let arguments = tool.parseOrExit(["--dry-run", "--older-than", "7"])
/// let days = arguments.value("--older-than").flatMap(Int.init) ?? 30
/// print(arguments.isSet("--dry-run"), days)
/// ```
///
/// A value may follow its flag as the next argument or after `=` (`--older-than=7`); one that
/// starts with `-` must use the `=` form, so that a forgotten value never swallows the next flag.
public struct CommandLineTool: Sendable {
    /// The tool's name, as typed (`AccountsApp`).
    public var name: String
    /// What the tool does, in one line.
    public var summary: String
    /// What follows the name on the usage line; by default every flag in brackets.
    public var synopsis: String
    /// The tool's own flags (`--help` and `-h` are always known).
    public var flags: [Flag]
    /// The environment variables the tool reads.
    public var environment: [EnvironmentVariable]
    /// What each exit status means; 0 and 64 (a bad command line) are added when missing.
    public var exitStatuses: [ExitStatus]
    /// Paragraphs printed after the environment, as written (where the tool keeps its data, say).
    public var notes: [String]
    /// Whether ``ProcessHost``'s launch flags (``LaunchArguments/flags``) are accepted and passed
    /// through in ``Arguments/launchArguments``: on for a tool that runs its app on a
    /// `ProcessHost`, off for one that drives a simulated host (the flags would do nothing).
    public var acceptsLaunchFlags: Bool

    /// The exit status of a bad command line: 64, `EX_USAGE` in sysexits(3).
    public static let usageExitStatus: Int32 = 64

    /// Declares a tool.
    /// - Parameters:
    ///   - name: The tool's name, as typed.
    ///   - summary: What the tool does, in one line.
    ///   - synopsis: What follows the name on the usage line; `nil` lists every flag in brackets.
    ///   - flags: The tool's own flags, each named `--long` (with an optional `-s`).
    ///   - environment: The environment variables the tool reads.
    ///   - exitStatuses: What each exit status means.
    ///   - notes: Paragraphs printed after the environment.
    ///   - acceptsLaunchFlags: Whether ``ProcessHost``'s launch flags pass through (see the property).
    /// - Precondition: Every flag is named `--long` and every short name `-s`, each once (a
    ///   programming error otherwise).
    public init(name: String, summary: String, synopsis: String? = nil, flags: [Flag] = [], environment: [EnvironmentVariable] = [],
                exitStatuses: [ExitStatus] = [], notes: [String] = [], acceptsLaunchFlags: Bool = false) {
        let names = flags.flatMap { [$0.name] + ($0.shortName.map { [$0] } ?? []) } + ["--help", "-h"]
        precondition(Set(names).count == names.count, "CommandLineTool \(name): a flag is declared twice, or as --help / -h")
        precondition(flags.allSatisfy { $0.name.hasPrefix("--") && $0.name.count > 2 && ($0.shortName.map { $0.count == 2 && $0.hasPrefix("-") } ?? true) },
                     "CommandLineTool \(name): flags are named --long, short names -s")
        self.name = name
        self.summary = summary
        self.flags = flags
        self.environment = environment
        var statuses = exitStatuses
        if !statuses.contains(where: { $0.code == 0 }) { statuses.append(ExitStatus(0, "success")) }
        if !statuses.contains(where: { $0.code == Self.usageExitStatus }) {
            statuses.append(ExitStatus(Self.usageExitStatus, "a bad command line (an unknown flag, a flag without its value)"))
        }
        self.exitStatuses = statuses.sorted { $0.code < $1.code }
        self.notes = notes
        self.acceptsLaunchFlags = acceptsLaunchFlags
        self.synopsis = synopsis ?? (flags.map { "[\($0.name)\($0.valueName.map { " \($0)" } ?? "")]" } + (acceptsLaunchFlags ? ["[launch flags]"] : [])).joined(separator: " ")
    }

    /// Reads `arguments` (without the program name) against the declared flags.
    /// - Parameter arguments: The command line, without the program name.
    /// - Returns: The flags given; ``Arguments/wantsHelp`` when `--help` or `-h` is among them
    ///   (before a `--`), whatever else is there.
    /// - Throws: ``UsageError`` naming the first unknown flag, flag without its value, value
    ///   given to a flag that takes none, stray argument, or launch flag ``LaunchArguments``
    ///   refuses (a URL that is not one).
    public func parse(_ arguments: [String]) throws(UsageError) -> Arguments {
        var result = Arguments()
        if arguments.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            result.wantsHelp = true
            return result
        }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                if let stray = rest.first { throw UsageError("unexpected argument '\(stray)' after --: \(name) takes no arguments") }
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else { throw UsageError("unexpected argument '\(argument)': \(name) takes flags only") }
            let (flagName, inline) = Self.split(argument)
            if let flag = flags.first(where: { $0.name == flagName || $0.shortName == flagName }) {
                result.given[flag.name, default: []].append(try value(for: flag, as: flagName, inline: inline, rest: &rest) ?? "")
            } else if acceptsLaunchFlags, let flag = LaunchArguments.flags.first(where: { $0.name == flagName }) {
                result.launchArguments.append(flag.name)
                if let value = try value(for: flag, as: flagName, inline: inline, rest: &rest) { result.launchArguments.append(value) }
            } else {
                throw UsageError("unknown flag '\(flagName)'")
            }
        }
        if acceptsLaunchFlags {
            do { _ = try LaunchArguments(arguments: result.launchArguments) } catch { throw UsageError(error.message) }
        }
        return result
    }

    /// What a command line comes to, without printing or exiting (``parseOrExit(_:)`` does both).
    /// - Parameter arguments: The command line, without the program name.
    /// - Returns: ``Decision/run(_:)`` with the flags given; or ``Decision/exit(status:standardOutput:standardError:)``:
    ///   0 with the usage for `--help`, 64 with the line naming what is wrong and the usage.
    public func decide(_ arguments: [String]) -> Decision {
        do {
            let parsed = try parse(arguments)
            return parsed.wantsHelp ? .exit(status: 0, standardOutput: usage + "\n", standardError: "") : .run(parsed)
        } catch {
            return .exit(status: Self.usageExitStatus, standardOutput: "", standardError: "\(error.message)\n\(usage)\n")
        }
    }

    /// Reads the process's command line: returns the flags given, or prints and exits as
    /// ``decide(_:)`` says (`--help`: usage to standard output, exit 0; a bad command line: what
    /// is wrong and the usage to standard error, exit 64).
    /// - Parameter arguments: The command line, without the program name; the process's by default.
    /// - Returns: The flags given, when the tool should run.
    public func parseOrExit(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Arguments {
        switch decide(arguments) {
        case .run(let parsed): return parsed
        case .exit(let status, let standardOutput, let standardError):
            FileHandle.standardOutput.write(Data(standardOutput.utf8))
            FileHandle.standardError.write(Data(standardError.utf8))
            exit(status)
        }
    }

    /// Refuses the command line for a reason the tool found itself (two flags that go together,
    /// a value it cannot use): prints `message` and the usage to standard error and exits 64.
    /// - Parameter message: What is wrong, in one line, naming the flag.
    public func refuse(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(message)\n\(usage)\n".utf8))
        exit(Self.usageExitStatus)
    }

    /// `--name=value` as the name and the value; anything else as itself and no value.
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// The value `flag` takes: `inline` (after `=`) or the next argument; `nil` for a flag that takes none.
    private func value(for flag: Flag, as typed: String, inline: String?, rest: inout ArraySlice<String>) throws(UsageError) -> String? {
        guard let valueName = flag.valueName else {
            if inline != nil { throw UsageError("\(typed) takes no value") }
            return nil
        }
        if let inline { return inline }
        guard let next = rest.first, !next.hasPrefix("-") || next == "-" else {
            throw UsageError("\(typed) needs a value (\(valueName))")
        }
        rest.removeFirst()
        return next
    }
}
