import AppKernel
public import AppKernelAuth

/// What the SDK manager needs from an account manager — `UserAccountManager` provides it; tests
/// may pass a fake.
@MainActor
public protocol AccountManaging: AnyObject {
    /// The current user's account.
    var currentAccount: UserAccount? { get }
    /// Every account, in a stable order.
    var allAccounts: [UserAccount] { get }
    /// Logs a user in through `config`, the way `method` says, and makes them current.
    func logIn(config: OAuthConfig, using method: LoginMethod, loginHint: String?, makeCurrent: Bool) async throws -> UserAccount
    /// Makes `identity` current (`nil`: nobody).
    func switchTo(_ identity: UserAccountIdentity?) throws(CredentialStoreError)
    /// Logs a user out.
    func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async
    /// Observes account events; the token keeps the observer (an `ObserverList` makes one).
    func observe(_ handler: @escaping @MainActor (AccountEvent) -> Void) -> ListenerToken
    /// Reads the accounts again, logging out here (reason `LogoutReason.loggedOutElsewhere`)
    /// those another instance of the app logged out; returns them. The default does nothing (an
    /// account manager no other instance shares).
    func reloadAccounts() throws(CredentialStoreError) -> [UserAccountIdentity]
}

extension AccountManaging {
    /// Nothing to reload: no other instance shares these accounts.
    public func reloadAccounts() throws(CredentialStoreError) -> [UserAccountIdentity] { [] }
}

extension UserAccountManager: AccountManaging {}
