public import Foundation

/// How an app logs in to one Salesforce org (or community): its connected app's consumer key,
/// the redirect URI registered for it, the login host and the scopes.
///
/// ```swift
/// let config = OAuthConfig(clientID: "3MVG9…", redirectURI: URL(string: "myapp://callback")!,
///                          loginHost: URL(string: "https://login.salesforce.com")!,
///                          scopes: ["api", "refresh_token"])
/// ```
public struct OAuthConfig: Sendable, Hashable {
    /// The connected app's consumer key (OAuth `client_id`).
    public var clientID: String
    /// Where the authorization server sends the browser back (OAuth `redirect_uri`).
    public var redirectURI: URL
    /// `https://login.salesforce.com`, `https://test.salesforce.com`, a My Domain, or a
    /// community URL (its path is kept: `https://example.my.site.com/partners`).
    public var loginHost: URL
    /// The scopes to ask for (`api`, `refresh_token`, `web`, …); sent space-separated.
    public var scopes: [String]
    /// The login page's layout (`touch` for mobile).
    public var display: String
    /// The device authorization endpoint of RFC 8628 (RFC 8414's `device_authorization_endpoint`),
    /// for servers that have one; `nil` (the default) uses Salesforce's variant of the device
    /// flow, which asks the token endpoint for the device code.
    public var deviceAuthorizationURL: URL?
    /// The most the body of a token, revoke, device or identity answer may hold (after
    /// decompression); a larger one fails with ``OAuthError/responseTooLarge(_:)``. These
    /// answers are a few kilobytes; the default is 1 MiB. Login pages are not bounded by it
    /// (their transport's ``SocketTransport/maximumResponseBytes`` is).
    public var maximumResponseBytes = OAuthConfig.defaultMaximumResponseBytes

    /// The default of ``maximumResponseBytes``: 1 MiB.
    public static let defaultMaximumResponseBytes = 1 << 20

    /// Salesforce's production login host.
    public static let productionLoginHost = URL(string: "https://login.salesforce.com")!
    /// Salesforce's sandbox login host.
    public static let sandboxLoginHost = URL(string: "https://test.salesforce.com")!

    /// Creates a configuration.
    public init(clientID: String, redirectURI: URL, loginHost: URL = OAuthConfig.productionLoginHost,
                scopes: [String] = [], display: String = "touch", deviceAuthorizationURL: URL? = nil) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.loginHost = loginHost
        self.scopes = scopes
        self.display = display
        self.deviceAuthorizationURL = deviceAuthorizationURL
    }

    /// A configuration for the login host `host` (see ``LoginHostStorage``).
    public init(clientID: String, redirectURI: URL, loginHost host: LoginHost, scopes: [String] = []) {
        self.init(clientID: clientID, redirectURI: redirectURI, loginHost: host.url, scopes: scopes)
    }

    /// `<login host>/services/oauth2/authorize`.
    public var authorizeURL: URL { endpoint("authorize") }
    /// `<login host>/services/oauth2/token`.
    public var tokenURL: URL { endpoint("token") }
    /// `<login host>/services/oauth2/revoke`.
    public var revokeURL: URL { endpoint("revoke") }

    /// ``maximumResponseBytes`` as a request's limit.
    var responseLimit: HTTPRequest.ResponseLimit {
        HTTPRequest.ResponseLimit(bytes: maximumResponseBytes, setting: "OAuthConfig.maximumResponseBytes")
    }

    private func endpoint(_ name: String) -> URL {
        var base = loginHost.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: "\(base)/services/oauth2/\(name)") ?? loginHost
    }
}
