/// Who an account is: a user in an org (the Mobile SDK's `SFUserAccountIdentity`).
///
/// It lives in the bottom module because more than the login code names an account: SmartStore
/// lays its stores out per user (`StoreOwner.user`), the REST client and the SDK manager key their
/// state by it; none of them needs OAuth to say who a user is.
public struct UserAccountIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The user's id.
    public var userID: String
    /// The org's id.
    public var orgID: String

    /// Creates an identity.
    public init(userID: String, orgID: String) {
        self.userID = userID
        self.orgID = orgID
    }

    /// `<orgID>/<userID>`.
    public var description: String { "\(orgID)/\(userID)" }
}
