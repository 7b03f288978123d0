import AppKernelPOSIX
import Foundation

/// The command line: `AccountsApp [--interactive] [--login-host URL --client-id ID
/// [--redirect-uri URI] [--device]] [--reset] [AppKernel launch flags…]`, read by AppKernelPOSIX's
/// `CommandLineTool` (`--help`, exit 64 for a bad command line, the launch flags passed through).
struct Options {
    /// Read commands from standard input instead of running the scripted tour.
    var interactive = false
    /// `--reset`: remove the data home and exit (AccountsApp+Reset.swift).
    var reset = false
    /// A real org to log in to instead of the embedded one.
    var loginHost: URL?
    /// The connected app's consumer key for the real org.
    var clientID: String?
    /// The connected app's callback URL for the real org: a loopback URL, as the Salesforce CLI's
    /// connected app registers.
    var redirectURI = "http://localhost:1717/OauthRedirect"
    /// Log in to the real org with the device flow (a code entered on another device).
    var deviceFlow = false
    /// The arguments left for `ProcessHost` (`--background`, `--open-url URL`, …).
    var launchArguments: [String] = []

    /// A command line the tool's parser took but the app cannot use, with what was wrong.
    struct Error: Swift.Error, CustomStringConvertible {
        var description: String
    }

    /// The app's flags, environment and exit statuses: what `--help` prints.
    static let tool = CommandLineTool(
        name: "AccountsApp",
        summary: "the forceios Swift template, headless on Linux: an Accounts list on the Mobile SDK's life cycle",
        synopsis: "[--interactive] [--login-host URL --client-id ID [--redirect-uri URI] [--device]] [--reset] [launch flags]",
        flags: [
            .init("--interactive", "read commands: list, delete N, bg, fg, switch, logout, passcode CODE, quit (without it: run the scripted tour against the embedded org and exit)"),
            .init("--login-host", value: "URL", "log in to a real org: its login page opens in the browser (or its URL is printed) and the app waits on the redirect URI's loopback port"),
            .init("--client-id", value: "ID", "with --login-host: the connected app's consumer key"),
            .init("--redirect-uri", value: "URI", "with --login-host: the connected app's callback URL (default http://localhost:1717/OauthRedirect)"),
            .init("--device", "with --login-host: log in with the device flow (enter a code elsewhere)"),
            .init("--reset", "start over: remove the data home (users, stores, the passcode, the embedded org's state) and exit; the master key file stays. Refused while an instance runs on it"),
        ],
        environment: CommandLineTool.EnvironmentVariable.processHost + [
            .init("XDG_DATA_HOME", "the data home's parent (else ~/.local/share): the data lives in $XDG_DATA_HOME/AccountsApp"),
            .init("XDG_CONFIG_HOME", "the master key file's parent (else ~/.config): $XDG_CONFIG_HOME/AccountsApp/master.key"),
            .init("CREDENTIALS_DIRECTORY", "set by systemd: the master key is $CREDENTIALS_DIRECTORY/accountsapp.key when it is there"),
        ],
        exitStatuses: [
            .init(0, "the app terminated normally"),
            .init(1, "it could not run (a failed launch or login, a passcode nobody answered, a data home refused, a master key missing or wrong) or its data could not be saved"),
            .init(64, "a bad command line or environment"),
            .init(75, "another instance is running on the same data home (one instance a data home: it says which pid)"),
        ],
        notes: [
            """
            data and key: the data is sealed with a master key kept apart from it, in the key file (0600, made on
              the first run — keep a copy: without it the data cannot be opened). Under systemd, give the key as an
              encrypted credential instead:
                openssl rand 32 | systemd-creds encrypt --name=accountsapp.key - /etc/credstore.encrypted/accountsapp.key
              and in the unit LoadCredentialEncrypted=accountsapp.key:/etc/credstore.encrypted/accountsapp.key;
              the app says at start which key it used.
            """,
        ],
        acceptsLaunchFlags: true)

    /// Reads `commandLine` (without the program name) as the app does, without exiting: for
    /// code that builds the app's world itself (the tests' replays, `Options([])`).
    /// - Throws: ``Error`` with what the tool's parser or the app refuses.
    init(_ commandLine: [String]) throws(Error) {
        let arguments: CommandLineTool.Arguments
        do { arguments = try Options.tool.parse(commandLine) } catch { throw Error(description: error.message) }
        try self.init(arguments)
    }

    /// Reads what the tool's parser took; the rest of the checks are the app's.
    /// - Throws: ``Error`` for a login host that is not an http(s) URL, or flags that go together given alone.
    init(_ arguments: CommandLineTool.Arguments) throws(Error) {
        interactive = arguments.isSet("--interactive")
        reset = arguments.isSet("--reset")
        if let text = arguments.value("--login-host") {
            guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw Error(description: "--login-host: '\(text)' is not an http(s) URL")
            }
            loginHost = url
        }
        clientID = arguments.value("--client-id")
        if let uri = arguments.value("--redirect-uri") { redirectURI = uri }
        deviceFlow = arguments.isSet("--device")
        launchArguments = arguments.launchArguments
        if (loginHost == nil) != (clientID == nil) {
            throw Error(description: "--login-host and --client-id go together")
        }
        if deviceFlow && loginHost == nil {
            throw Error(description: "--device needs --login-host and --client-id")
        }
    }
}
