public import Foundation
import AppKernelCore

/// How a login reaches the user — one choice among the three ways (and a testing mode):
///
/// - ``loopback(port:opener:timeout:clock:)``: the web-server flow with PKCE; the authorize URL
///   opens in the user's browser and a listener on loopback (`127.0.0.1`, and `::1` for a
///   `localhost` redirect) receives the redirect (RFC 8252 §7.3). The way for a desktop or a
///   terminal with a browser at hand.
/// - ``deviceFlow`` / ``deviceFlow(presenter:clock:)``: the device authorization grant (RFC
///   8628); the app shows a code and an address, the user approves on any device. The way for a
///   headless machine.
/// - ``userAgent(flow:_:)``: the app's own agent (an embedded web view, a custom browser) opens
///   the authorize URL and hands back the callback URL.
/// - ``autoApprove(flow:headers:)``: *testing mode*, no person: the authorize pages are fetched
///   over the transport and must redirect at once (an embedded org, a test server).
/// - ``clientCredentials(secret:consumerKey:)``: no person at all — a daemon logs in as its
///   connected app's integration user (Salesforce's client-credentials flow).
///
/// ```swift
/// let account = try await accounts.logIn(config: config, using: .loopback(port: 1717))
/// ```
public struct LoginMethod: Sendable {
    enum Kind: Sendable {
        case loopback(port: UInt16?, opener: BrowserOpener, timeout: Duration, clock: any Clock<Duration>)
        case deviceFlow(presenter: DeviceCodePresenter, clock: any Clock<Duration>)
        case userAgent(flow: AuthorizationRequest.Flow, agent: @Sendable (URL) async throws -> URL)
        case autoApprove(flow: AuthorizationRequest.Flow, headers: [String: String])
        case clientCredentials(secret: ClientSecret, consumerKey: String?)
    }

    let kind: Kind

    /// The loopback redirect (RFC 8252 §7.3) with the web-server flow and PKCE (S256).
    ///
    /// The config's redirect URI must be `http://localhost…` or `http://127.0.0.1…` (a
    /// connected app registers e.g. `http://localhost:1717/OauthRedirect`); its path is the one
    /// the listener answers, its port is replaced by the listener's, and its host is kept as
    /// registered — the server compares the redirect URI exactly. For `localhost` the listener
    /// listens on both `127.0.0.1` and `::1` (a browser may try either; another program on the
    /// other one would get the code); for `127.0.0.1` on that address alone. Either address's
    /// port in use fails the login with ``OAuthError/portInUse(_:address:)`` naming it.
    /// - Parameters:
    ///   - port: The port to listen on: `nil` takes the redirect URI's (an ephemeral one when it
    ///     has none), `0` an ephemeral one — for servers that allow any loopback port, as RFC
    ///     8252 §7.3 asks.
    ///   - opener: Shows the authorize URL: ``BrowserOpener/system`` runs `xdg-open` on a private
    ///     page that forwards to it where there is a display (never the URL itself on a command
    ///     line) and prints the URL otherwise; tests pass one that plays the browser.
    ///   - timeout: How long to wait for the redirect before ``OAuthError/timedOut(_:)``.
    ///   - clock: The clock the timeout runs on.
    public static func loopback(port: UInt16? = nil, opener: BrowserOpener = .system, timeout: Duration = .seconds(300),
                                clock: any Clock<Duration> = ContinuousClock()) -> LoginMethod {
        LoginMethod(kind: .loopback(port: port, opener: opener, timeout: timeout, clock: clock))
    }

    /// The device flow (RFC 8628), its code shown on the console (standard error).
    public static var deviceFlow: LoginMethod { deviceFlow() }

    /// The device flow (RFC 8628): requests a device code, shows the user code and the
    /// verification URL through `presenter`, and polls the token endpoint at the server's
    /// `interval` (5 s more after each `slow_down`, twice as long after a connection failure)
    /// until the user approves, denies (`access_denied`) or the code expires — a poll is sent
    /// whenever its time is within the code's `expires_in`, counted from the request for it.
    ///
    /// The requests are Salesforce's ("OAuth 2.0 Device Flow for IoT Integration"): the code is
    /// asked of the token endpoint (`response_type=device_code`, `client_id`, `scope`) and
    /// polled there with `grant_type=device` and `code`. A config that names an
    /// ``OAuthConfig/deviceAuthorizationURL`` uses RFC 8628's instead: the code from that
    /// endpoint, polled with `grant_type=urn:ietf:params:oauth:grant-type:device_code` and
    /// `device_code`.
    /// - Parameters:
    ///   - presenter: Shows the code to the user.
    ///   - clock: The clock polling waits on (tests pass one they drive).
    public static func deviceFlow(presenter: DeviceCodePresenter = .console, clock: any Clock<Duration> = ContinuousClock()) -> LoginMethod {
        LoginMethod(kind: .deviceFlow(presenter: presenter, clock: clock))
    }

    /// The app's own user agent: `agent` gets the authorize URL, shows the login pages, and
    /// returns the URL the server redirected to (the config's redirect URI with its parameters).
    /// - Parameters:
    ///   - flow: `.webServer` (a code and PKCE; the default) or `.userAgent` (tokens in the
    ///     fragment).
    ///   - agent: Opens the authorize URL and hands back the callback URL.
    public static func userAgent(flow: AuthorizationRequest.Flow = .webServer,
                                 _ agent: @escaping @Sendable (_ authorizeURL: URL) async throws -> URL) -> LoginMethod {
        LoginMethod(kind: .userAgent(flow: flow, agent: agent))
    }

    /// Testing mode: fetches the authorize URL over the manager's transport and follows its
    /// redirects to the callback, with no person in between (``LoginSession/authorize(_:)``).
    /// Works only against servers that approve at once; a login form fails with
    /// ``OAuthError/noRedirect(status:summary:)``.
    /// - Parameters:
    ///   - flow: `.webServer` (PKCE) or `.userAgent`.
    ///   - headers: Headers sent with the authorize request (a session cookie, say).
    public static func autoApprove(flow: AuthorizationRequest.Flow = .webServer, headers: [String: String] = [:]) -> LoginMethod {
        LoginMethod(kind: .autoApprove(flow: flow, headers: headers))
    }
}

extension LoginMethod {
    /// Salesforce's "OAuth 2.0 Client Credentials Flow for Server-to-Server Integration", for a
    /// daemon with no person to log in: the connected app's consumer key and secret are posted
    /// to the My Domain's token endpoint (`grant_type=client_credentials`, `client_id`,
    /// `client_secret`) and the org answers with an access token for the app's run-as
    /// (integration) user.
    ///
    /// The secret is read from `secret` — a systemd credential or a sealed file — at each login,
    /// never from a string; a login while an argument or an environment variable names a
    /// consumer secret fails (``ClientSecretError``). The config's login host must be the org's
    /// My Domain (`https://<domain>.my.salesforce.com`): Salesforce refuses this flow on
    /// `login.salesforce.com` and `test.salesforce.com`, and so does the login, before any
    /// request. The answer has no refresh token: `UserAccountManager` logs in again the same
    /// way when the access token needs refreshing (in the process that logged in).
    /// - Parameters:
    ///   - secret: Where the consumer secret is kept.
    ///   - consumerKey: The connected app's consumer key; the config's `clientID` when `nil`.
    public static func clientCredentials(secret: ClientSecret, consumerKey: String? = nil) -> LoginMethod {
        LoginMethod(kind: .clientCredentials(secret: secret, consumerKey: consumerKey))
    }

    /// Whether this is a client-credentials login (which has no refresh token to refresh with).
    var isClientCredentials: Bool {
        if case .clientCredentials = kind { return true }
        return false
    }
}

/// A step of a login, named in ``LoginError``.
public enum LoginStep: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Starting the loopback redirect listener.
    case listen
    /// Showing the authorize URL (the browser opener or the app's agent).
    case openBrowser
    /// Waiting for the browser's redirect (deadline, cancellation).
    case awaitCallback
    /// Reading the callback: state, the server's error, the code or tokens.
    case callback
    /// Fetching the authorize pages with no person (testing mode).
    case authorize
    /// Exchanging the code for tokens.
    case tokenExchange
    /// Requesting a device code (device flow).
    case deviceAuthorization
    /// Polling for the tokens while the user approves (device flow).
    case devicePolling
    /// Fetching the user's identity.
    case identity
    /// Reading a client-credentials login's consumer secret.
    case clientSecret
    /// Asking for a token with the consumer key and secret (client credentials).
    case clientCredentials

    /// The step, in words.
    public var description: String {
        switch self {
        case .listen: "starting the redirect listener"
        case .openBrowser: "opening the login page"
        case .awaitCallback: "waiting for the browser's redirect"
        case .callback: "reading the redirect"
        case .authorize: "fetching the authorize pages"
        case .tokenExchange: "exchanging the code for tokens"
        case .deviceAuthorization: "requesting a device code"
        case .devicePolling: "waiting for the device login to be approved"
        case .identity: "fetching the user's identity"
        case .clientSecret: "reading the consumer secret"
        case .clientCredentials: "asking for a token with the consumer key and secret"
        }
    }
}

/// Why a login failed: the step, and the ``OAuthError`` there. Never carries a token.
public struct LoginError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step that failed.
    public var step: LoginStep
    /// What went wrong there.
    public var error: OAuthError

    /// Creates an error.
    public init(step: LoginStep, error: OAuthError) {
        self.step = step
        self.error = error
    }

    /// "login failed while <step>: <error>".
    public var description: String { "login failed while \(step): \(error)" }
}

/// Shows an authorize URL to the user: the loopback flow's "browser".
public struct BrowserOpener: Sendable {
    private let show: @Sendable (URL) async throws -> ForwardingPage?

    /// Creates an opener that calls `open` with the authorize URL. It should return once the
    /// URL is shown (the login waits for the redirect meanwhile); a thrown error ends the login
    /// at ``LoginStep/openBrowser``.
    public init(_ open: @escaping @Sendable (URL) async throws -> Void) {
        show = { url in
            try await open(url)
            return nil
        }
    }

    private init(showing show: @escaping @Sendable (URL) async throws -> ForwardingPage?) { self.show = show }

    /// Shows `url`. Called by a login, the ``system`` opener's forwarding page is removed when
    /// the login ends; called on its own, the page stays in its private directory (`0700`).
    public func open(_ url: URL) async throws { _ = try await show(url) }

    /// Shows `url`, and returns the forwarding page left for the browser (if any), which the
    /// caller removes once the login has ended.
    func present(_ url: URL) async throws -> ForwardingPage? { try await show(url) }

    /// `xdg-open` where there is a graphical session (`DISPLAY` or `WAYLAND_DISPLAY` set and
    /// `xdg-open` on `PATH`); otherwise the URL is printed on standard error for the user to open.
    ///
    /// The authorize URL is never put in a process's arguments, which every local user can read
    /// (`/proc/<pid>/cmdline`): it carries the `state` that keeps a forged answer out of the
    /// login. `xdg-open` gets the path of a `0600` page in a new `0700` directory (in
    /// `$XDG_RUNTIME_DIR`, or the temporary directory) that forwards the browser to the URL; the
    /// login removes it when it ends. The URL is also printed on standard error, for a browser
    /// that cannot read the page (one confined by a snap sees neither directory) or when
    /// `xdg-open` fails. If the page cannot be written, only the URL is printed.
    public static var system: BrowserOpener { system(environment: ProcessInfo.processInfo.environment) }

    /// ``system`` with `environment` (`PATH`, `DISPLAY`, `XDG_RUNTIME_DIR`, `TMPDIR`) in place
    /// of the process's; `xdg-open` runs with it. What the person is told goes to `announce`
    /// (standard error; a test keeps it).
    static func system(environment: [String: String],
                       announce: @escaping @Sendable (String) -> Void = printToStandardError) -> BrowserOpener {
        BrowserOpener(showing: { url in
            guard hasGraphicalSession(environment: environment), let xdgOpen = executable(named: "xdg-open", path: environment["PATH"]) else {
                announce(prompt(for: url))
                return nil
            }
            let page: ForwardingPage
            do { page = try ForwardingPage(forwardingTo: url, environment: environment) } catch {
                announce(prompt(for: url))
                return nil
            }
            // Not Foundation's Process: its child (and the browser xdg-open may start) would
            // inherit this thread's blocked signals (CleanSpawn).
            do { CleanSpawn.reapWhenDone(try CleanSpawn.start(xdgOpen, arguments: [page.file.path], environment: environment).pid) } catch {
                page.remove()
                announce(prompt(for: url))
                return nil
            }
            announce("Opening the login page in the browser. If it does not appear, open this address in a browser:\n  \(url.absoluteString)\n")
            return page
        })
    }

    /// An opener that only prints: `write` gets a line asking the user to open the URL.
    public static func printing(_ write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) -> BrowserOpener {
        BrowserOpener { url in write(prompt(for: url)) }
    }

    /// Whether `environment` has a display: `DISPLAY` or `WAYLAND_DISPLAY` set and not empty.
    public static func hasGraphicalSession(environment: [String: String]) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// The executable `name` in the `PATH` list `path`, if any.
    static func executable(named name: String, path: String?) -> URL? {
        for directory in (path ?? "").split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    static func prompt(for url: URL) -> String {
        "To log in, open this address in a browser:\n  \(url.absoluteString)\n"
    }
}

/// Writes `text` to standard error.
@Sendable func printToStandardError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}
