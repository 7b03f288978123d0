import AppKernelAuth
import AppKernelCore
import Foundation

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
/// Unlike the Mobile SDK, which validates two keys and only logs a missing or unparseable file,
/// every problem is a ``ConfigError`` naming the file, the key path and, for JSON, the line and
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

    /// The file names looked for, in order.
    public static let fileNames = ["bootconfig.json", "bootconfig.plist"]

    /// Creates a configuration.
    public init(remoteAccessConsumerKey: String, oauthRedirectURI: String, oauthScopes: [String] = [],
                shouldAuthenticate: Bool = true, loginHost: String = "https://login.salesforce.com") {
        self.remoteAccessConsumerKey = remoteAccessConsumerKey
        self.oauthRedirectURI = oauthRedirectURI
        self.oauthScopes = oauthScopes
        self.shouldAuthenticate = shouldAuthenticate
        self.loginHost = loginHost
    }

    /// Loads and validates `bootconfig.json` (or `bootconfig.plist`) from `directory`.
    /// - Throws: ``ConfigError`` (`unreadableFile` when neither exists).
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
    /// - Throws: ``ConfigError`` (`unreadableFile`, `malformed`, or a key's problem).
    public static func load(contentsOf url: URL) throws(ConfigError) -> BootConfig {
        try BootConfig(ConfigParser.load(contentsOf: url))
    }

    /// Parses and validates JSON text (named `file` in errors).
    /// - Throws: ``ConfigError`` with the line and column.
    public static func parse(json data: Data, file: String = "bootconfig.json") throws(ConfigError) -> BootConfig {
        try BootConfig(ConfigParser.parseJSON(data, file: file))
    }

    /// Reads a parsed file's keys, then checks their values; errors name the value's position.
    init(_ root: ConfigValue) throws(ConfigError) {
        try root.onlyKeys(["remoteAccessConsumerKey", "oauthRedirectURI", "oauthScopes", "shouldAuthenticate", "loginHost"])
        self.init(remoteAccessConsumerKey: try root.required("remoteAccessConsumerKey").string(),
                  oauthRedirectURI: try root.required("oauthRedirectURI").string(),
                  oauthScopes: try root.member("oauthScopes")?.strings() ?? [],
                  shouldAuthenticate: try root.member("shouldAuthenticate")?.bool() ?? true,
                  loginHost: try root.member("loginHost")?.string() ?? "https://login.salesforce.com")
        do { try validate(file: root.file) } catch { throw root.locating(error) }
    }

    /// Checks the values: a consumer key, a redirect URI with a scheme, an http(s) login host,
    /// non-empty scopes without spaces.
    public func validate(file: String = "bootconfig.json") throws(ConfigError) {
        func fail(_ key: String, _ reason: String) -> ConfigError { ConfigError(code: .invalidValue, file: file, keyPath: key, reason: reason) }
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
    }

    /// The OAuth configuration these settings describe.
    public var oauthConfig: OAuthConfig {
        OAuthConfig(clientID: remoteAccessConsumerKey, redirectURI: URL(string: oauthRedirectURI) ?? URL(fileURLWithPath: "/"),
                    loginHost: URL(string: loginHost) ?? OAuthConfig.productionLoginHost, scopes: oauthScopes)
    }
}
