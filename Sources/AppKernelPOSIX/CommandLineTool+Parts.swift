extension CommandLineTool {
    /// A flag: `--name`, with an optional short name (`-n`) and an optional value (`--name VALUE`).
    public struct Flag: Sendable, Hashable {
        /// The long name, with its dashes (`--login-host`).
        public var name: String
        /// The short name, with its dash (`-i`), if any.
        public var shortName: String?
        /// What the value is called in the usage (`URL`); `nil` for a flag that takes no value.
        public var valueName: String?
        /// What the flag does, in a line or two.
        public var summary: String

        /// Declares a flag.
        /// - Parameters:
        ///   - name: The long name, with its dashes (`--login-host`).
        ///   - short: The short name, with its dash (`-i`).
        ///   - value: What the value is called (`URL`); `nil` for a flag without a value.
        ///   - summary: What the flag does.
        public init(_ name: String, short: String? = nil, value: String? = nil, _ summary: String) {
            self.name = name
            self.shortName = short
            self.valueName = value
            self.summary = summary
        }

        /// The flag as the usage shows it: `--login-host URL`, `--interactive, -i`.
        public var label: String {
            name + (valueName.map { " \($0)" } ?? "") + (shortName.map { ", \($0)" } ?? "")
        }
    }

    /// An environment variable the tool reads.
    public struct EnvironmentVariable: Sendable, Hashable {
        /// The variable's name, with its value's shape when it helps (`APPKERNEL_TRACE=PATH`).
        public var name: String
        /// What it does.
        public var summary: String

        /// Declares a variable.
        /// - Parameters:
        ///   - name: The name, with its value's shape when it helps (`APPKERNEL_TRACE=PATH`).
        ///   - summary: What it does.
        public init(_ name: String, _ summary: String) {
            self.name = name
            self.summary = summary
        }

        /// The variables every ``ProcessHost`` reads: the launch timeline, the journal, and the
        /// environment forms of the launch flags.
        public static let processHost: [EnvironmentVariable] = [
            EnvironmentVariable("APPKERNEL_TRACE=PATH", "write the launch timeline there: a picture (one HTML page) when PATH ends in .html, else Chrome trace JSON for Perfetto; its folder must exist and be writable, or nothing runs"),
            EnvironmentVariable("APPKERNEL_JOURNAL=PATH", "record every external event (signals, memory pressure) and the trace it produced, for SimulatedHost.replay(journal:)"),
            EnvironmentVariable("APPKERNEL_BACKGROUND=1", "launch in the background, as --background"),
            EnvironmentVariable("APPKERNEL_OPEN_URL=URL", "launch to open URL, as --open-url"),
            EnvironmentVariable("APPKERNEL_SOURCE_APP=NAME", "the app that asked for the launch, as --source-app"),
        ]
    }

    /// What an exit status means.
    public struct ExitStatus: Sendable, Hashable {
        /// The status.
        public var code: Int32
        /// When the tool exits with it.
        public var meaning: String

        /// Declares an exit status.
        /// - Parameters:
        ///   - code: The status.
        ///   - meaning: When the tool exits with it.
        public init(_ code: Int32, _ meaning: String) {
            self.code = code
            self.meaning = meaning
        }
    }

    /// The flags a command line gave, by their long names.
    public struct Arguments: Sendable, Hashable {
        /// Each flag given, by long name, with its values in order (`""` for a flag without one).
        var given: [String: [String]] = [:]
        /// ``ProcessHost``'s launch flags given, with their values, in order: what
        /// `ProcessHost.Configuration(arguments:)` takes.
        public internal(set) var launchArguments: [String] = []
        /// Whether `--help` or `-h` was given.
        public internal(set) var wantsHelp = false

        /// Whether the flag named `name` (its long name) was given.
        public func isSet(_ name: String) -> Bool { given[name] != nil }

        /// The last value given to the flag named `name`; `nil` when it was not given.
        public func value(_ name: String) -> String? { given[name]?.last }

        /// Every value given to the flag named `name`, in order.
        public func values(_ name: String) -> [String] { given[name] ?? [] }
    }

    /// What a command line comes to (``CommandLineTool/decide(_:)``).
    public enum Decision: Sendable, Hashable {
        /// Run with these flags.
        case run(Arguments)
        /// Print these and exit with `status` (`--help`, or a bad command line).
        case exit(status: Int32, standardOutput: String, standardError: String)
    }

    /// A command line the tool refuses: the one line that says what is wrong.
    public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, naming the flag or argument (`unknown flag '-x'`).
        public var message: String
        /// Creates an error.
        /// - Parameter message: What is wrong, naming the flag or argument.
        public init(_ message: String) { self.message = message }
        /// The message.
        public var description: String { message }
    }
}
