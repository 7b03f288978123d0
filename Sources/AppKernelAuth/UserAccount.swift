public import AppKernelCore
public import Foundation

/// A logged-in user: identity, credentials, what the identity service said, and where they
/// logged in. Prints without its tokens.
public struct UserAccount: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Who the account is.
    public var identity: UserAccountIdentity
    /// The account's tokens.
    public var credentials: Credentials
    /// The identity service's answer, once fetched.
    public var userIdentity: UserIdentity?
    /// Where the user logged in (for refresh and revoke).
    public var loginHost: URL
    /// The connected app's consumer key the tokens were issued to.
    public var clientID: String

    /// Creates an account; its identity comes from the credentials.
    public init(credentials: Credentials, userIdentity: UserIdentity? = nil, loginHost: URL, clientID: String) {
        self.identity = UserAccountIdentity(userID: credentials.userID, orgID: credentials.orgID)
        self.credentials = credentials
        self.userIdentity = userIdentity
        self.loginHost = loginHost
        self.clientID = clientID
    }

    /// The account without its tokens.
    public var description: String {
        "UserAccount(\(identity), \(userIdentity?.username ?? "unknown user"), \(credentials))"
    }
}
