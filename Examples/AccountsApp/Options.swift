import AppKernelPOSIX
import Foundation

/// The command line: `AccountsApp [--interactive] [--login-host URL --client-id ID
/// [--redirect-uri URI] [--device]] [AppKernel launch flags…]`.
struct Options {
    /// Read commands from standard input instead of running the scripted tour.
    var interactive = false
    /// `--help`: print the usage to standard output and exit 0.
    var help = false
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

    /// A bad command line, with what was wrong.
    struct Error: Swift.Error, CustomStringConvertible {
        var description: String
    }

    static let usage = """
        usage: AccountsApp [--interactive] [--login-host URL --client-id ID [--redirect-uri URI] [--device]]
          (no flags)     run the scripted tour against the embedded org and exit
          --interactive  read commands: list, delete N, bg, fg, switch, logout, passcode CODE, quit
          --login-host   log in to a real org: its login page opens in the browser (or its URL is
                         printed) and the app waits on the redirect URI's loopback port
          --device       with --login-host: log in with the device flow (enter a code elsewhere)
          --help, -h     print this and exit 0
          launch flags (passed to the process host): --background, --open-url URL, --source-app NAME,
                         --shortcut TYPE, --user-activity TYPE, --location, --fetch
        environment: APPKERNEL_TRACE=launch.json writes the launch timeline (Chrome trace); set but
                     empty, it is refused; APPKERNEL_JOURNAL=run.journal records every external event
                     (signals, memory pressure) and the trace it produced, for SimulatedHost.replay(journal:)
        data and key: the data lives in $XDG_DATA_HOME/AccountsApp (else ~/.local/share/AccountsApp),
                     sealed with a master key kept apart from it, in the key file
                     $XDG_CONFIG_HOME/AccountsApp/master.key (else ~/.config/AccountsApp; 0600, made
                     on the first run — keep a copy: without it the data cannot be opened). Under
                     systemd, give the key as an encrypted credential instead: `openssl rand 32 |
                     systemd-creds encrypt --name=accountsapp.key - /etc/credstore.encrypted/accountsapp.key`,
                     and in the unit LoadCredentialEncrypted=accountsapp.key:/etc/credstore.encrypted/accountsapp.key;
                     the app uses $CREDENTIALS_DIRECTORY/accountsapp.key when it is there, and says
                     at start which key it used
        exit status: 0 the app terminated normally, 1 it could not run (a failed launch or login, a
                     data home refused, a master key missing or wrong) or its data could not be saved,
                     64 a bad command line or environment, 75 another instance is running on the
                     same data home (one instance a data home: it says which pid)
        """

    init(_ arguments: [String]) throws(Error) {
        var rest = arguments[...]
        func value(for flag: String) throws(Error) -> String {
            guard let value = rest.popFirst(), !value.hasPrefix("--") else { throw Error(description: "\(flag) needs a value\n\(Options.usage)") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--interactive": interactive = true
            case "--login-host":
                let text = try value(for: argument)
                guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                    throw Error(description: "--login-host: '\(text)' is not an http(s) URL")
                }
                loginHost = url
            case "--client-id": clientID = try value(for: argument)
            case "--redirect-uri": redirectURI = try value(for: argument)
            case "--device": deviceFlow = true
            case "--help", "-h": help = true
            default: launchArguments.append(argument)
            }
        }
        if (loginHost == nil) != (clientID == nil) {
            throw Error(description: "--login-host and --client-id go together\n\(Options.usage)")
        }
        if deviceFlow && loginHost == nil {
            throw Error(description: "--device needs --login-host and --client-id\n\(Options.usage)")
        }
        // The launch flags are the process host's: checked here, before anything runs.
        do { _ = try LaunchArguments(arguments: launchArguments) } catch {
            throw Error(description: "\(error.message)\n\(Options.usage)")
        }
    }
}
