import AppKernelCore
import Foundation

/// Why a user was logged out.
public enum LogoutReason: String, Sendable, Hashable, CaseIterable {
    /// The user asked.
    case userInitiated
    /// The refresh token was refused (`invalid_grant`): revoked, expired, or the user was frozen.
    case tokenExpired
    /// Too many wrong passcodes.
    case passcodeFailures
    /// The app decided (e.g. a mobile-policy change).
    case appInitiated
}

/// What the account manager tells its observers, in the order it happens.
public enum AccountEvent: Sendable, Hashable {
    /// An account was added (a login); the current user is already set (the Mobile SDK's
    /// `DidLogIn`, posted last).
    case didLogin(UserAccountIdentity)
    /// The current user is about to change.
    case willSwitch(from: UserAccountIdentity?, to: UserAccountIdentity?)
    /// The current user changed.
    case didSwitch(from: UserAccountIdentity?, to: UserAccountIdentity?)
    /// The user is about to be logged out: wipe their data now (stores, caches, files).
    case willLogout(UserAccountIdentity, LogoutReason)
    /// The user was logged out; their files are gone and their refresh token revoked.
    case didLogout(UserAccountIdentity, LogoutReason)
    /// The org's last user left.
    case orgDidLogout(String)
}

/// The users logged in to this app, in any number of orgs — the Mobile SDK's
/// `SFUserAccountManager`, done for several orgs at once.
///
/// ```swift
/// let accounts = UserAccountManager(store: FileCredentialStore(root: dir), transport: URLSessionTransport())
/// let ada = try await accounts.logIn(config: acme, flow: .webServer, loginHint: "ada@acme.com")
/// let cy = try await accounts.logIn(config: beta, flow: .webServer, loginHint: "cy@beta.com")
/// try accounts.switchTo(ada.identity)
/// await accounts.logout(cy.identity, reason: .userInitiated)
/// ```
@MainActor
public final class UserAccountManager {
    /// Where accounts are kept between launches.
    public let store: any CredentialStore
    /// How logins, refreshes and revocations are sent.
    public let transport: any HTTPTransport
    /// The accounts, ordered by org id then user id.
    public private(set) var allAccounts: [UserAccount] = []
    /// The current user's identity.
    public private(set) var currentIdentity: UserAccountIdentity?
    /// What the last load from the store set aside (unreadable files).
    public private(set) var loadProblems: [CredentialStoreProblem] = []
    /// Revocations that failed during logouts (the logout went on regardless).
    public private(set) var failedRevocations: [(UserAccountIdentity, OAuthError)] = []
    private let observers = ObserverList<AccountEvent>()
    private var loggingOut: Set<UserAccountIdentity> = []

    /// Creates a manager and loads the accounts and the current user from `store`.
    /// - Throws: ``CredentialStoreError`` when the store cannot be read at all (unreadable single
    ///   files are set aside and listed in ``loadProblems`` instead).
    public init(store: any CredentialStore, transport: any HTTPTransport) throws(CredentialStoreError) {
        self.store = store
        self.transport = transport
        let contents = try store.load()
        allAccounts = contents.accounts
        currentIdentity = contents.currentUser
        loadProblems = contents.problems
    }

    /// The current user's account.
    public var currentAccount: UserAccount? { currentIdentity.flatMap(account(for:)) }

    /// The account of `identity`.
    public func account(for identity: UserAccountIdentity) -> UserAccount? { allAccounts.first { $0.identity == identity } }

    /// The accounts of one org.
    public func accounts(inOrg orgID: String) -> [UserAccount] { allAccounts.filter { $0.identity.orgID == orgID } }

    /// The org ids with at least one account.
    public var orgIDs: [String] { Array(Set(allAccounts.map(\.identity.orgID))).sorted() }

    /// Whether the user is being logged out right now.
    public func isLoggingOut(_ identity: UserAccountIdentity) -> Bool { loggingOut.contains(identity) }

    /// Observes account events; keep the token (cancelling or dropping it stops delivery).
    public func observe(_ handler: @escaping @MainActor (AccountEvent) -> Void) -> ListenerToken {
        observers.add(handler)
    }

    // MARK: Login

    /// Logs in through `config`'s login host and adds the account.
    /// - Parameters:
    ///   - config: The connected app and the login host.
    ///   - flow: The OAuth flow (web server with PKCE, or user agent).
    ///   - loginHint: The username to prefill on the login page, if any.
    ///   - makeCurrent: Make the new user current (always, when nobody is).
    /// - Throws: ``OAuthError`` from the login, or ``CredentialStoreError`` when the account
    ///   cannot be stored (it is then not added).
    @discardableResult
    public func logIn(config: OAuthConfig, flow: AuthorizationRequest.Flow, loginHint: String? = nil,
                      makeCurrent: Bool = true) async throws -> UserAccount {
        let (credentials, identity) = try await LoginSession(config: config, transport: transport).logIn(flow: flow, loginHint: loginHint)
        let account = UserAccount(credentials: credentials, userIdentity: identity, loginHost: config.loginHost, clientID: config.clientID)
        try add(account, makeCurrent: makeCurrent)
        return account
    }

    /// Adds (or replaces) an account obtained elsewhere, and stores it — in the Mobile SDK's
    /// order: the account is stored; the first user becomes current without a switch (nobody
    /// was current: there is nothing to switch from), a later one with `makeCurrent` through
    /// willSwitch → didSwitch; `didLogin` comes last, when the current user is already set.
    public func add(_ account: UserAccount, makeCurrent: Bool = true) throws(CredentialStoreError) {
        try store.save(account)
        allAccounts.removeAll { $0.identity == account.identity }
        allAccounts.append(account)
        allAccounts.sort { ($0.identity.orgID, $0.identity.userID) < ($1.identity.orgID, $1.identity.userID) }
        if currentIdentity == nil {
            try store.saveCurrentUser(account.identity)
            currentIdentity = account.identity
        } else if makeCurrent {
            try switchTo(account.identity)
        }
        notify(.didLogin(account.identity))
    }

    // MARK: Switch

    /// Makes `identity` the current user: willSwitch → (stored) → didSwitch. A no-op for the
    /// current user. `nil` makes nobody current.
    /// - Throws: ``CredentialStoreError`` for an unknown account or a failed write.
    public func switchTo(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        guard identity != currentIdentity else { return }
        if let identity, account(for: identity) == nil {
            throw CredentialStoreError(path: identity.description, reason: "there is no such account to switch to")
        }
        let previous = currentIdentity
        notify(.willSwitch(from: previous, to: identity))
        try store.saveCurrentUser(identity)
        currentIdentity = identity
        notify(.didSwitch(from: previous, to: identity))
    }

    // MARK: Logout

    /// Logs a user out, in the Mobile SDK's order: willLogout (observers wipe the user's data) →
    /// the account's files are deleted → the refresh token is revoked (a failed revoke is
    /// recorded in ``failedRevocations`` and does not stop the logout) → the current user is
    /// cleared if it was them → didLogout → orgDidLogout when the org's last user left.
    /// Logging out a user who is being logged out, or unknown, does nothing.
    public func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async {
        guard let account = account(for: identity), !loggingOut.contains(identity) else { return }
        loggingOut.insert(identity)
        defer { loggingOut.remove(identity) }
        notify(.willLogout(identity, reason))
        try? store.delete(identity)
        allAccounts.removeAll { $0.identity == identity }
        let token = account.credentials.refreshToken ?? account.credentials.accessToken
        do {
            try await TokenClient(config: Self.config(for: account), transport: transport).revoke(token: token)
        } catch {
            failedRevocations.append((identity, error))
        }
        if currentIdentity == identity {
            try? store.saveCurrentUser(nil)
            currentIdentity = nil
        }
        notify(.didLogout(identity, reason))
        if accounts(inOrg: identity.orgID).isEmpty { notify(.orgDidLogout(identity.orgID)) }
    }

    /// Logs every user out, one after the other.
    public func logoutAll(reason: LogoutReason) async {
        for account in allAccounts { await logout(account.identity, reason: reason) }
    }

    // MARK: Refresh

    /// Refreshes the user's access token and stores the new credentials. A refused refresh token
    /// (`invalid_grant`) logs the user out (reason `.tokenExpired`) before the error is thrown.
    @discardableResult
    public func refreshCredentials(for identity: UserAccountIdentity) async throws -> UserAccount {
        guard var account = account(for: identity) else {
            throw CredentialStoreError(path: identity.description, reason: "there is no such account to refresh")
        }
        do {
            account.credentials = try await TokenClient(config: Self.config(for: account), transport: transport).refresh(account.credentials)
        } catch {
            if case .serverError(code: "invalid_grant", _) = error { await logout(identity, reason: .tokenExpired) }
            throw error
        }
        try store.save(account)
        if let index = allAccounts.firstIndex(where: { $0.identity == identity }) { allAccounts[index] = account }
        return account
    }

    /// The token endpoints of the account's login host (no redirect URI is needed for them).
    private static func config(for account: UserAccount) -> OAuthConfig {
        OAuthConfig(clientID: account.clientID, redirectURI: account.loginHost, loginHost: account.loginHost)
    }

    private func notify(_ event: AccountEvent) {
        observers.notify(event)
    }
}
