public import AppKernelCore
public import Foundation

/// Why a user was logged out.
public enum LogoutReason: String, Sendable, Hashable, CaseIterable {
    /// The user asked.
    case userInitiated
    /// The refresh token was refused (`invalid_grant`): revoked, expired, or the user was frozen.
    case tokenExpired
    /// Too many wrong passcodes.
    case passcodeFailures
    /// The stored passcode could not be read or verified (damaged, missing, replaced): the app
    /// fails closed and logs every user out.
    case passcodeTampered
    /// The app decided (e.g. a mobile-policy change).
    case appInitiated
    /// Another instance of the app on the same data home logged the user out; this instance
    /// learnt it when it read the accounts again (``UserAccountManager/reloadAccounts()``).
    case loggedOutElsewhere
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
    /// Revoking the user's token failed. `willRetry`: the revocation is kept
    /// (``UserAccountManager/pendingRevocations``, in the credential store) and retried at the
    /// next launch, the next logout or ``UserAccountManager/retryFailedRevocations()``; `false`:
    /// the server refused it for good (``UserAccountManager/failedRevocations`` says why).
    case revocationFailed(UserAccountIdentity, willRetry: Bool)
    /// A revocation kept after a failure went through at last.
    case revocationCompleted(UserAccountIdentity)
}

/// The users logged in to this app, in any number of orgs — the Mobile SDK's
/// `SFUserAccountManager`, done for several orgs at once.
///
/// ```swift
/// let accounts = try UserAccountManager(store: FileCredentialStore(root: dir, keyRing: keys), transport: URLSessionTransport())
/// let ada = try await accounts.logIn(config: acme, using: .loopback(port: 1717), loginHint: "ada@acme.com")
/// let cy = try await accounts.logIn(config: beta, using: .deviceFlow)
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
    /// Every failed revocation attempt of this run, in order, with its error (the logout went on
    /// regardless). Those worth retrying are also in ``pendingRevocations``.
    public private(set) var failedRevocations: [(UserAccountIdentity, OAuthError)] = []
    /// Revocations that failed and will be retried until they succeed — kept in the store, so a
    /// new manager (the next launch) retries them.
    public private(set) var pendingRevocations: [PendingRevocation] = []
    /// The `User-Agent` every login, refresh and revocation carries (``UserAgentTransport``):
    /// the process's (``UserAgent/default``) unless set — the SDK manager sets its app's.
    public var userAgent: UserAgent = .default
    /// The logins to run again in place of a refresh, for accounts that have no refresh token
    /// because a client-credentials login made them (this process's only: the secret's source
    /// is never stored).
    private var reLogins: [UserAccountIdentity: (config: OAuthConfig, method: LoginMethod)] = [:]
    private let observers = ObserverList<AccountEvent>()
    private var loggingOut: Set<UserAccountIdentity> = []
    private var retrying: Task<Void, Never>?

    /// Creates a manager and loads the accounts and the current user from `store`; revocations
    /// a previous launch could not complete are retried at once, in the background (await
    /// ``retryFailedRevocations()`` to wait for them).
    /// - Throws: ``CredentialStoreError`` when the store cannot be read at all (unreadable single
    ///   files are set aside and listed in ``loadProblems`` instead).
    public init(store: any CredentialStore, transport: any HTTPTransport) throws(CredentialStoreError) {
        self.store = store
        self.transport = transport
        let contents = try store.load()
        allAccounts = contents.accounts
        currentIdentity = contents.currentUser
        loadProblems = contents.problems
        do {
            pendingRevocations = try store.loadPendingRevocations()
        } catch {
            loadProblems.append(CredentialStoreProblem(path: error.path, reason: error.reason, movedTo: nil))
        }
        if !pendingRevocations.isEmpty {
            retrying = Task { [weak self] in await self?.retryPending(excluding: nil) }
        }
    }

    /// ``transport`` with ``userAgent``: how every request of the manager is sent.
    public var sending: any HTTPTransport { UserAgentTransport(transport, userAgent: userAgent) }

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

    /// Logs in through `config`'s login host with `method`, and adds the account.
    ///
    /// ```swift
    /// let account = try await accounts.logIn(config: config, using: .loopback(port: 1717))
    /// ```
    /// - Parameters:
    ///   - config: The connected app and the login host.
    ///   - method: ``LoginMethod/loopback(port:opener:timeout:clock:)`` (a browser),
    ///     ``LoginMethod/deviceFlow`` (a code to enter elsewhere), ``LoginMethod/userAgent(flow:_:)``
    ///     (the app's agent), or ``LoginMethod/autoApprove(flow:headers:)`` (testing mode).
    ///   - loginHint: The username to prefill on the login page, if any.
    ///   - makeCurrent: Make the new user current (always, when nobody is).
    /// - Throws: ``LoginError`` naming the step that failed, or ``CredentialStoreError`` when the
    ///   account cannot be stored (it is then not added).
    @discardableResult
    public func logIn(config: OAuthConfig, using method: LoginMethod, loginHint: String? = nil,
                      makeCurrent: Bool = true) async throws -> UserAccount {
        let (credentials, identity) = try await LoginSession(config: config, transport: sending).logIn(using: method, loginHint: loginHint)
        let account = UserAccount(credentials: credentials, userIdentity: identity, loginHost: config.loginHost, clientID: config.clientID)
        try add(account, makeCurrent: makeCurrent)
        if method.isClientCredentials { reLogins[account.identity] = (config, method) }
        return account
    }

    /// Logs in with no person in the loop — ``LoginMethod/autoApprove(flow:headers:)``, the
    /// testing mode: the authorize pages are fetched over ``transport`` and must redirect at once
    /// (an embedded org, a test server). Against a real login page it fails with
    /// ``OAuthError/noRedirect(status:summary:)``; apps use
    /// ``logIn(config:using:loginHint:makeCurrent:)``.
    /// - Parameters:
    ///   - config: The connected app and the login host.
    ///   - flow: The OAuth flow (web server with PKCE, or user agent).
    ///   - loginHint: The username to prefill on the login page, if any.
    ///   - makeCurrent: Make the new user current (always, when nobody is).
    /// - Throws: ``OAuthError`` from the login (the step is dropped, for callers written before
    ///   ``LoginError``), or ``CredentialStoreError`` when the account cannot be stored.
    @discardableResult
    public func logIn(config: OAuthConfig, flow: AuthorizationRequest.Flow, loginHint: String? = nil,
                      makeCurrent: Bool = true) async throws -> UserAccount {
        do {
            return try await logIn(config: config, using: .autoApprove(flow: flow), loginHint: loginHint, makeCurrent: makeCurrent)
        } catch let error as LoginError {
            throw error.error
        }
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
    /// the account's files are deleted → the refresh token is revoked (RFC 7009: token,
    /// `token_type_hint`, `client_id`) — a failure does not stop the logout: it is recorded in
    /// ``failedRevocations``, kept in ``pendingRevocations`` when worth retrying, and told as
    /// ``AccountEvent/revocationFailed(_:willRetry:)`` → the current user is cleared if it was
    /// them → didLogout → orgDidLogout when the org's last user left. Then revocations pending
    /// from earlier are retried. Logging out a user who is being logged out, or unknown, does
    /// nothing.
    public func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async {
        guard let account = account(for: identity), !loggingOut.contains(identity) else { return }
        loggingOut.insert(identity)
        defer { loggingOut.remove(identity) }
        notify(.willLogout(identity, reason))
        try? store.delete(identity)
        allAccounts.removeAll { $0.identity == identity }
        reLogins[identity] = nil
        let (token, hint): (String, TokenClient.TokenTypeHint) = account.credentials.refreshToken.map { ($0, .refreshToken) }
            ?? (account.credentials.accessToken, .accessToken)
        let config = Self.config(for: account)
        var failure: OAuthError?
        do {
            try await TokenClient(config: config, transport: sending).revoke(token: token, hint: hint)
        } catch {
            failure = error
        }
        if let failure {
            failedRevocations.append((identity, failure))
            let willRetry = PendingRevocation.isWorthRetrying(failure)
            if willRetry {
                let revocation = PendingRevocation(identity: identity, revokeURL: config.revokeURL, clientID: account.clientID,
                                                   tokenTypeHint: hint, token: token, failure: failure)
                keepPending { $0 + [revocation] }
            }
            notify(.revocationFailed(identity, willRetry: willRetry))
        }
        if currentIdentity == identity {
            try? store.saveCurrentUser(nil)
            currentIdentity = nil
        }
        notify(.didLogout(identity, reason))
        if accounts(inOrg: identity.orgID).isEmpty { notify(.orgDidLogout(identity.orgID)) }
        if pendingRevocations.contains(where: { $0.identity != identity || failure == nil }) {
            await retryFailedRevocations(excluding: failure == nil ? nil : identity)
        }
    }

    /// Reads the accounts from the store again — another instance of the app on the same data
    /// home may have logged users out. Each account gone from the store is logged out here too:
    /// willLogout → didLogout with ``LogoutReason/loggedOutElsewhere`` (observers close and wipe
    /// what they hold of the user) → orgDidLogout when the org's last user left, without deleting
    /// or revoking anything (the other instance did); the current user is cleared if it was one
    /// of them. Accounts logged in elsewhere join ``allAccounts`` (without becoming current).
    /// - Returns: The users logged out elsewhere.
    /// - Throws: ``CredentialStoreError`` when the store cannot be read (nothing changes).
    @discardableResult
    public func reloadAccounts() throws(CredentialStoreError) -> [UserAccountIdentity] {
        let contents = try store.load()
        let stored = Set(contents.accounts.map(\.identity))
        let gone = allAccounts.map(\.identity).filter { !stored.contains($0) && !loggingOut.contains($0) }
        for identity in gone {
            loggingOut.insert(identity)
            notify(.willLogout(identity, .loggedOutElsewhere))
            allAccounts.removeAll { $0.identity == identity }
            if currentIdentity == identity { currentIdentity = nil }
            notify(.didLogout(identity, .loggedOutElsewhere))
            if accounts(inOrg: identity.orgID).isEmpty { notify(.orgDidLogout(identity.orgID)) }
            loggingOut.remove(identity)
        }
        let known = Set(allAccounts.map(\.identity))
        allAccounts += contents.accounts.filter { !known.contains($0.identity) && !loggingOut.contains($0.identity) }
        allAccounts.sort { ($0.identity.orgID, $0.identity.userID) < ($1.identity.orgID, $1.identity.userID) }
        return gone
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
        if account.credentials.refreshToken == nil, let reLogin = reLogins[identity] {
            // Client credentials: no refresh token (Salesforce issues none); log in again.
            let (credentials, _) = try await LoginSession(config: reLogin.config, transport: sending).logIn(using: reLogin.method)
            account.credentials = credentials
            try store.save(account)
            if let index = allAccounts.firstIndex(where: { $0.identity == identity }) { allAccounts[index] = account }
            return account
        }
        do {
            account.credentials = try await TokenClient(config: Self.config(for: account), transport: sending).refresh(account.credentials)
        } catch {
            if case .serverError(code: "invalid_grant", _, _) = error { await logout(identity, reason: .tokenExpired) }
            throw error
        }
        try store.save(account)
        if let index = allAccounts.firstIndex(where: { $0.identity == identity }) { allAccounts[index] = account }
        return account
    }

    /// The user's credentials, refreshed first when their access token has expired or will
    /// within `leeway` (known from the token response's `expires_in`) — so a request need not
    /// fail with 401 first. Credentials whose expiry is unknown come back as they are.
    /// - Throws: As ``refreshCredentials(for:)``.
    public func freshCredentials(for identity: UserAccountIdentity, leeway: TimeInterval = 60, now: Date = Date()) async throws -> Credentials {
        guard let account = account(for: identity) else {
            throw CredentialStoreError(path: identity.description, reason: "there is no such account")
        }
        guard account.credentials.needsRefresh(at: now, leeway: leeway) else { return account.credentials }
        return try await refreshCredentials(for: identity).credentials
    }

    // MARK: Revocations

    /// Retries the revocations that failed (``pendingRevocations``), once each: those that go
    /// through are dropped (``AccountEvent/revocationCompleted(_:)``), those that fail again are
    /// kept, those the server refuses for good are dropped with
    /// ``AccountEvent/revocationFailed(_:willRetry:)`` (`willRetry: false`). A retry already
    /// running (the one a new manager starts) is waited for instead of doubled.
    public func retryFailedRevocations() async {
        await retryFailedRevocations(excluding: nil)
    }

    private func retryFailedRevocations(excluding skipped: UserAccountIdentity?) async {
        while let running = retrying { await running.value }
        guard pendingRevocations.contains(where: { $0.identity != skipped }) else { return }
        let task = Task { await self.retryPending(excluding: skipped) }
        retrying = task
        await task.value
    }

    private func retryPending(excluding skipped: UserAccountIdentity?) async {
        defer { retrying = nil }
        for pending in pendingRevocations where pending.identity != skipped {
            var failure: OAuthError?
            do { try await pending.revoke(over: sending) } catch { failure = error }
            guard let failure else {
                keepPending { $0.filter { $0 != pending } }
                notify(.revocationCompleted(pending.identity))
                continue
            }
            failedRevocations.append((pending.identity, failure))
            if PendingRevocation.isWorthRetrying(failure) {
                keepPending { $0.map { kept in
                    guard kept == pending else { return kept }
                    var updated = kept
                    updated.attempts += 1
                    updated.lastFailure = failure.description
                    return updated
                } }
            } else {
                keepPending { $0.filter { $0 != pending } }
                notify(.revocationFailed(pending.identity, willRetry: false))
            }
        }
    }

    /// Changes the pending list in the store — a read-modify-write, so what another instance of
    /// the app added meanwhile is kept — and takes the store's list as the manager's. A failed
    /// write changes the list in memory only (and in ``loadProblems``' sense it is lost at exit;
    /// nothing better can be done).
    private func keepPending(_ change: ([PendingRevocation]) -> [PendingRevocation]) {
        do { pendingRevocations = try store.updatePendingRevocations(change) } catch {
            pendingRevocations = change(pendingRevocations)
            loadProblems.append(CredentialStoreProblem(path: error.path, reason: "pending revocations not saved: \(error.reason)", movedTo: nil))
        }
    }

    /// The token endpoints of the account's login host (no redirect URI is needed for them).
    private static func config(for account: UserAccount) -> OAuthConfig {
        OAuthConfig(clientID: account.clientID, redirectURI: account.loginHost, loginHost: account.loginHost)
    }

    private func notify(_ event: AccountEvent) {
        observers.notify(event)
    }
}
