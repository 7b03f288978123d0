public import AppKernel
import Foundation

/// Launch options read from the command line and the environment.
///
/// | flag | environment | effect |
/// |---|---|---|
/// | `--background` | `APPKERNEL_BACKGROUND=1` | launch in the background |
/// | `--open-url URL` | `APPKERNEL_OPEN_URL` | `LaunchOptions.url` |
/// | `--source-app NAME` | `APPKERNEL_SOURCE_APP` | `LaunchOptions.sourceApplication` |
/// | `--shortcut TYPE` | | `LaunchOptions.shortcutItem` |
/// | `--user-activity TYPE` | | `LaunchOptions.userActivity` |
/// | `--location` | | `LaunchOptions.location` |
/// | `--fetch` | | `LaunchOptions.backgroundFetch` (implies `--background`) |
///
/// Flags win over the environment. Arguments after `--` are left to the app.
public struct LaunchArguments: Sendable, Hashable {
    /// The launch options.
    public var options: LaunchOptions
    /// Whether to launch in the background.
    public var inBackground: Bool
    /// Arguments the host did not consume (after `--`, or unknown ones when not strict).
    public var remaining: [String]

    /// An argument the host cannot use.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        /// What is wrong, and the flags there are.
        public var description: String {
            "\(message). Flags: --background, --open-url URL, --source-app NAME, --shortcut TYPE, --user-activity TYPE, --location, --fetch"
        }
    }

    /// Reads `arguments` (without the program name) and `environment`.
    /// - Parameters:
    ///   - arguments: The command line, without the program name.
    ///   - environment: The process's environment.
    ///   - strict: Refuse unknown `--flags` (default), or leave them in ``remaining``.
    /// - Throws: ``Error`` for an unknown flag, a flag without its value, or a bad URL.
    public init(arguments: [String], environment: [String: String] = [:], strict: Bool = true) throws(Error) {
        var options = LaunchOptions()
        var inBackground = environment["APPKERNEL_BACKGROUND"] == "1"
        if let text = environment["APPKERNEL_OPEN_URL"] {
            guard let url = URL(string: text), url.scheme != nil else { throw Error(message: "APPKERNEL_OPEN_URL '\(text)' is not a URL") }
            options.url = url
        }
        options.sourceApplication = environment["APPKERNEL_SOURCE_APP"]
        var remaining: [String] = []
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws(Error) -> String {
            guard let next = iterator.next(), !next.hasPrefix("--") else { throw Error(message: "\(flag) needs a value") }
            return next
        }
        while let argument = iterator.next() {
            switch argument {
            case "--":
                while let rest = iterator.next() { remaining.append(rest) }
            case "--background": inBackground = true
            case "--location": options.location = true
            case "--fetch":
                options.backgroundFetch = true
                inBackground = true
            case "--open-url":
                let text = try value(argument)
                guard let url = URL(string: text), url.scheme != nil else { throw Error(message: "--open-url '\(text)' is not a URL") }
                options.url = url
            case "--source-app": options.sourceApplication = try value(argument)
            case "--shortcut":
                let type = try value(argument)
                options.shortcutItem = ShortcutItem(type: type, localizedTitle: type)
            case "--user-activity": options.userActivity = UserActivity(activityType: try value(argument))
            default:
                if strict && argument.hasPrefix("--") { throw Error(message: "unknown flag '\(argument)'") }
                remaining.append(argument)
            }
        }
        self.options = options
        self.inBackground = inBackground
        self.remaining = remaining
    }
}
