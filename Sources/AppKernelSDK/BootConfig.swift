public import AppKernelAuth
import AppKernelCore
public import Foundation

/// The app's settings for the SDK — the Mobile SDK's `bootconfig.json` / `bootconfig.plist`.
///
/// ```json
/// {
///   "remoteAccessConsumerKey": "3MVG9…",
///   "oauthRedirectURI": "myapp://oauth/done",
///   "oauthScopes": ["api", "refresh_token"],
///   "shouldAuthenticate": true,
///   "loginHost": "https://login.salesforce.com"
/// }
/// ```
///
/// A hybrid app's file carries the keys of ``HybridSettings`` as well (`isLocal`, `startPage`,
/// `errorPage`, `attemptOfflineLoad`, `unauthenticatedStartPage`); they are checked by the Mobile
/// SDK's own rules and kept in ``hybrid``.
///
/// Unlike the Mobile SDK, which validates two keys and only logs a missing or unparseable file,
/// every problem is a `ConfigError` naming the file, the key path and, for JSON, the line and
/// column (property lists have no positions). Unknown keys are refused.
public struct BootConfig: Sendable, Hashable {
    /// The connected app's consumer key.
    public var remoteAccessConsumerKey: String
    /// The connected app's callback URL, as a string (as in the SDK's file).
    public var oauthRedirectURI: String
    /// The scopes to ask for.
    public var oauthScopes: [String]
    /// Whether launch logs the user in (`false`: deferred login — see `SDKManager.loginIfRequired`).
    public var shouldAuthenticate: Bool
    /// Where users log in.
    public var loginHost: String
    /// A hybrid app's start and error pages; `nil` when the file names none of their keys.
    public var hybrid: HybridSettings?

    /// The start-page settings of a hybrid app's `bootconfig.json`, with the Mobile SDK's defaults.
    public struct HybridSettings: Sendable, Hashable {
        /// Whether ``startPage`` is a page of the app's own bundle (`true`) or a path on the org.
        /// The SDK's default: `false`, but `true` when the file names no start page.
        public var isLocal: Bool
        /// The first page, relative (a bundled file, or a path such as `apex/MyPage` on the org). Default `index.html`.
        public var startPage: String
        /// The page shown when the start page cannot load. Default `error.html`.
        public var errorPage: String
        /// Whether a remote app shows its cached start page when offline. Default `true`.
        public var attemptOfflineLoad: Bool
        /// An absolute http(s) URL a remote app that does not authenticate starts at.
        public var unauthenticatedStartPage: String?

        /// Creates the settings; the defaults are the SDK's.
        public init(isLocal: Bool = true, startPage: String = "index.html", errorPage: String = "error.html",
                    attemptOfflineLoad: Bool = true, unauthenticatedStartPage: String? = nil) {
            self.isLocal = isLocal
            self.startPage = startPage
            self.errorPage = errorPage
            self.attemptOfflineLoad = attemptOfflineLoad
            self.unauthenticatedStartPage = unauthenticatedStartPage
        }

        /// The keys a hybrid `bootconfig.json` adds to a native one.
        public static let keys: Set<String> = ["isLocal", "startPage", "errorPage", "attemptOfflineLoad", "unauthenticatedStartPage"]
    }

    /// The file names looked for, in order.
    public static let fileNames = ["bootconfig.json", "bootconfig.plist"]

    /// Creates a configuration.
    public init(remoteAccessConsumerKey: String, oauthRedirectURI: String, oauthScopes: [String] = [],
                shouldAuthenticate: Bool = true, loginHost: String = "https://login.salesforce.com",
                hybrid: HybridSettings? = nil) {
        self.hybrid = hybrid
        self.remoteAccessConsumerKey = remoteAccessConsumerKey
        self.oauthRedirectURI = oauthRedirectURI
        self.oauthScopes = oauthScopes
        self.shouldAuthenticate = shouldAuthenticate
        self.loginHost = loginHost
    }

    /// Loads and validates `bootconfig.json` (or `bootconfig.plist`) from `directory`.
    /// - Throws: `ConfigError` (`unreadableFile` when neither exists).
    public static func load(fromDirectory directory: URL) throws(ConfigError) -> BootConfig {
        for name in fileNames {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path) { return try load(contentsOf: url) }
        }
        throw ConfigError(code: .unreadableFile, file: fileNames[0], keyPath: "",
                          reason: "neither \(fileNames.joined(separator: " nor ")) exists in \(directory.path)")
    }

    /// Loads and validates one file; `.plist` files (and data starting with `<?xml` or `bplist`)
    /// are read as property lists, others as JSON.
    /// - Throws: `ConfigError` (`unreadableFile`, `malformed`, or a key's problem).
    public static func load(contentsOf url: URL) throws(ConfigError) -> BootConfig {
        try BootConfig(ConfigParser.load(contentsOf: url))
    }

    /// Parses and validates JSON text (named `file` in errors).
    /// - Throws: `ConfigError` with the line and column.
    public static func parse(json data: Data, file: String = "bootconfig.json") throws(ConfigError) -> BootConfig {
        try BootConfig(ConfigParser.parseJSON(data, file: file))
    }

    /// Reads a parsed file's keys, then checks their values; errors name the value's position.
    init(_ root: ConfigValue) throws(ConfigError) {
        try root.onlyKeys(HybridSettings.keys.union(["remoteAccessConsumerKey", "oauthRedirectURI", "oauthScopes", "shouldAuthenticate", "loginHost"]))
        self.init(remoteAccessConsumerKey: try root.required("remoteAccessConsumerKey").string(),
                  oauthRedirectURI: try root.required("oauthRedirectURI").string(),
                  oauthScopes: try root.member("oauthScopes")?.strings() ?? [],
                  shouldAuthenticate: try root.member("shouldAuthenticate")?.bool() ?? true,
                  loginHost: try root.member("loginHost")?.string() ?? "https://login.salesforce.com",
                  hybrid: try Self.hybridSettings(in: root))
        do { try validate(file: root.file) } catch { throw root.locating(error) }
    }

    /// The hybrid keys of a parsed file, with the SDK's defaults; `nil` if it names none.
    private static func hybridSettings(in root: ConfigValue) throws(ConfigError) -> HybridSettings? {
        guard try root.object().contains(where: { HybridSettings.keys.contains($0.key) }) else { return nil }
        let startPage = try root.member("startPage")?.string()
        return HybridSettings(isLocal: try root.member("isLocal")?.bool() ?? (startPage == nil),
                              startPage: startPage ?? "index.html",
                              errorPage: try root.member("errorPage")?.string() ?? "error.html",
                              attemptOfflineLoad: try root.member("attemptOfflineLoad")?.bool() ?? true,
                              unauthenticatedStartPage: try root.member("unauthenticatedStartPage")?.string())
    }

    /// Checks the values: a consumer key, a redirect URI with a scheme, an http(s) login host,
    /// non-empty scopes without spaces; for a hybrid app, the SDK's start-page rules (a non-empty,
    /// relative start page; an absolute http(s) unauthenticated start page, required by a remote
    /// app that does not authenticate).
    public func validate(file: String = "bootconfig.json") throws(ConfigError) {
        func fail(_ key: String, _ reason: String) -> ConfigError { ConfigError(code: .invalidValue, file: file, keyPath: key, reason: reason) }
        let placeholders = placeholderKeys
        if let first = placeholders.first {
            let others = placeholders.dropFirst()
            throw fail(first.key, "is the template's placeholder '\(first.value)'"
                       + (others.isEmpty ? "" : " (and so is \(others.map(\.key).joined(separator: ", ")))")
                       + ": copy your connected app's consumer key and callback URL into \(file) (Setup → App Manager → your connected app)")
        }
        guard !remoteAccessConsumerKey.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw fail("remoteAccessConsumerKey", "is empty; copy the consumer key of your connected app")
        }
        guard let redirect = URL(string: oauthRedirectURI), redirect.scheme != nil else {
            throw fail("oauthRedirectURI", "'\(oauthRedirectURI)' is not a URL with a scheme (e.g. myapp://oauth/done)")
        }
        guard let host = URL(string: loginHost), host.scheme == "https" || host.scheme == "http", host.host != nil else {
            throw fail("loginHost", "'\(loginHost)' is not an http(s) URL")
        }
        for (index, scope) in oauthScopes.enumerated() where scope.isEmpty || scope.contains(" ") {
            throw fail("oauthScopes[\(index)]", "'\(scope)' is not a single scope name")
        }
        if let hybrid { try validate(hybrid, fail: fail) }
    }

    /// The SDK's hybrid rules (its error codes in parentheses).
    private func validate(_ hybrid: HybridSettings, fail: (String, String) -> ConfigError) throws(ConfigError) {
        func isWebURL(_ text: String) -> Bool { text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://") }
        guard !hybrid.startPage.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw fail("startPage", "is empty; name the app's first page, relative (e.g. index.html) (the Mobile SDK's error 1066)")
        }
        guard !isWebURL(hybrid.startPage) else {
            throw fail("startPage", "'\(hybrid.startPage)' is an absolute URL; the start page is relative — a bundled file or a path on the org (the Mobile SDK's error 1067)")
        }
        let unauthenticated = hybrid.unauthenticatedStartPage ?? ""
        if !unauthenticated.isEmpty, !isWebURL(unauthenticated) {
            throw fail("unauthenticatedStartPage", "'\(unauthenticated)' is not an absolute http(s) URL (the Mobile SDK's error 1068)")
        }
        if !hybrid.isLocal, !shouldAuthenticate, unauthenticated.isEmpty {
            throw fail("unauthenticatedStartPage", "is required: a remote app (isLocal false) that does not authenticate starts at this absolute URL (the Mobile SDK's error 1069)")
        }
    }

    /// The template's unfilled `bootconfig.json` (forceios / the Mobile SDK templates): the
    /// consumer key `__INSERT_CONSUMER_KEY_HERE__` and the redirect URI
    /// `__INSERT_REDIRECT_URI_HERE__`, as a new app has them before its connected app's values are
    /// copied in. It does not validate: a launch with it fails in its config phase with a
    /// `ConfigError` naming both keys.
    public static let placeholder = BootConfig(remoteAccessConsumerKey: "__INSERT_CONSUMER_KEY_HERE__",
                                               oauthRedirectURI: "__INSERT_REDIRECT_URI_HERE__",
                                               oauthScopes: ["web", "api"])

    /// The keys whose value is still a template's placeholder (`__INSERT_…_HERE__`), in file order.
    public var placeholderKeys: [(key: String, value: String)] {
        func isPlaceholder(_ value: String) -> Bool { value.hasPrefix("__INSERT_") && value.hasSuffix("_HERE__") }
        let values = [("remoteAccessConsumerKey", remoteAccessConsumerKey), ("oauthRedirectURI", oauthRedirectURI), ("loginHost", loginHost)]
            + oauthScopes.enumerated().map { ("oauthScopes[\($0.offset)]", $0.element) }
        return values.filter { isPlaceholder($0.1) }.map { (key: $0.0, value: $0.1) }
    }

    /// Settings that load but have no effect, as the Mobile SDK warns about them: an
    /// `unauthenticatedStartPage` in a local app, or in a remote app that authenticates.
    public var warnings: [String] {
        guard let hybrid, let page = hybrid.unauthenticatedStartPage, !page.isEmpty else { return [] }
        if hybrid.isLocal { return ["unauthenticatedStartPage '\(page)' is ignored: the app is local (isLocal true)"] }
        if shouldAuthenticate { return ["unauthenticatedStartPage '\(page)' is ignored: the app authenticates (shouldAuthenticate true)"] }
        return []
    }

    /// The OAuth configuration these settings describe.
    public var oauthConfig: OAuthConfig {
        OAuthConfig(clientID: remoteAccessConsumerKey, redirectURI: URL(string: oauthRedirectURI) ?? URL(fileURLWithPath: "/"),
                    loginHost: URL(string: loginHost) ?? OAuthConfig.productionLoginHost, scopes: oauthScopes)
    }
}
