public import Foundation

/// What a login or a refresh yields: tokens and where to use them.
///
/// Tokens never appear in `description`, `debugDescription` or a `dump`: they print as
/// `<redacted>`, so credentials can be logged safely.
public struct Credentials: Sendable, Hashable, Codable {
    /// The bearer token for API calls.
    public var accessToken: String
    /// The token that gets new access tokens; `nil` without the `refresh_token` scope.
    public var refreshToken: String?
    /// The org's instance, base of REST calls (`https://na1.salesforce.com`).
    public var instanceURL: URL
    /// The identity service URL (`https://login.salesforce.com/id/<orgId>/<userId>`).
    public var identityURL: URL
    /// The user's id, from the identity URL.
    public var userID: String
    /// The org's id, from the identity URL.
    public var orgID: String
    /// When the token was issued, in milliseconds since 1970 (Salesforce's `issued_at`).
    public var issuedAt: Int64?
    /// The granted scopes.
    public var scopes: [String]
    /// `Bearer` (the only type accepted; the server may spell it in any case, RFC 6749 §5.1).
    public var tokenType: String
    /// When the access token expires, from the token response's optional `expires_in` (counted
    /// from when the answer arrived); `nil` when the server did not say (Salesforce does not:
    /// its sessions time out after inactivity).
    public var expiresAt: Date?
    /// The server's signature of the identity URL and issue time.
    public var signature: String?
    /// The community's id, for community logins.
    public var communityID: String?
    /// The community's URL, for community logins.
    public var communityURL: URL?

    /// Creates credentials.
    public init(accessToken: String, refreshToken: String?, instanceURL: URL, identityURL: URL, userID: String, orgID: String,
                issuedAt: Int64? = nil, scopes: [String] = [], tokenType: String = "Bearer", signature: String? = nil,
                communityID: String? = nil, communityURL: URL? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.instanceURL = instanceURL
        self.identityURL = identityURL
        self.userID = userID
        self.orgID = orgID
        self.issuedAt = issuedAt
        self.scopes = scopes
        self.tokenType = tokenType
        self.signature = signature
        self.communityID = communityID
        self.communityURL = communityURL
        self.expiresAt = expiresAt
    }

    /// Whether the access token has expired, or will within `leeway`, at `date` — so a caller
    /// can refresh before a request fails with 401. `false` when the expiry is unknown.
    public func needsRefresh(at date: Date = Date(), leeway: TimeInterval = 60) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(date) <= leeway
    }

    /// Reads user and org ids from an identity URL (`…/id/<orgId>/<userId>`).
    public static func ids(fromIdentityURL url: URL) -> (orgID: String, userID: String)? {
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count >= 3, parts[parts.count - 3] == "id", !parts[parts.count - 2].isEmpty, !parts[parts.count - 1].isEmpty
        else { return nil }
        return (parts[parts.count - 2], parts[parts.count - 1])
    }
}

extension Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The credentials with both tokens redacted.
    public var description: String {
        "Credentials(user: \(userID), org: \(orgID), instance: \(instanceURL.absoluteString), accessToken: <redacted>, refreshToken: \(refreshToken == nil ? "nil" : "<redacted>"), scopes: \(scopes.joined(separator: " ")))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the tokens, so `dump` cannot print them.
    public var customMirror: Mirror {
        Mirror(self, children: ["userID": userID, "orgID": orgID, "instanceURL": instanceURL, "accessToken": "<redacted>",
                                "refreshToken": refreshToken == nil ? "nil" : "<redacted>", "scopes": scopes])
    }
}
