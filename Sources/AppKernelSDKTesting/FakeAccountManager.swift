public import AppKernel
public import AppKernelAuth
public import AppKernelSDK
import Foundation

/// An account manager with scripted logins, in memory: hand it to an `SDKManager` in place of a
/// `UserAccountManager`.
///
/// Accounts are made by ``account(_:org:)`` from a user id alone. ``logIn(config:using:loginHint:makeCurrent:)``
/// takes its outcome from ``loginQueue``; switching and logging out tell observers, as the real
/// manager does (`willSwitch`/`didSwitch`, `willLogout`/`didLogout`).
///
/// ```swift
/// let accounts = FakeAccountManager()
/// accounts.add("005A")                       // signed in already
/// accounts.loginQueue = [.success("005B")]   // the next login
/// ```
@MainActor
public final class FakeAccountManager: AccountManaging {
    /// Every account, ordered by user id.
    public var allAccounts: [UserAccount] = []
    /// The current user, if any.
    public var currentIdentity: UserAccountIdentity?
    /// The outcomes of the next logins, first first: the user id to log in as, or the error to
    /// throw. With none left, a login fails with `OAuthError.serverError("access_denied")`.
    public var loginQueue: [Result<String, any Error>] = []
    /// How many logins were asked for.
    public var loginCount = 0
    /// The configuration of every login asked for, oldest first.
    public var logins: [OAuthConfig] = []
    /// Whether a login waits for ``answerLogin(_:)`` instead of taking ``loginQueue``'s next
    /// outcome — a person still on the login page (the lifecycle explorer answers it as a step).
    public var holdsLogins = false
    /// The logins waiting for ``answerLogin(_:)``, oldest first.
    private var heldLogins: [CheckedContinuation<Result<String, any Error>, Never>] = []
    private let observers = ObserverList<AccountEvent>()

    /// Creates a manager with no accounts.
    public init() {}

    /// The current user's account.
    public var currentAccount: UserAccount? { allAccounts.first { $0.identity == currentIdentity } }

    /// The account of `user` in `org`, on `login.salesforce.com`, with tokens named after the
    /// user (`token-<user>`, `refresh-<user>`).
    public static func account(_ user: String, org: String = "00DORG") -> UserAccount {
        UserAccount(credentials: Credentials(accessToken: "token-\(user)", refreshToken: "refresh-\(user)",
                                             instanceURL: URL(string: "https://na1.salesforce.com")!,
                                             identityURL: URL(string: "https://login.salesforce.com/id/\(org)/\(user)")!,
                                             userID: user, orgID: org),
                    loginHost: URL(string: "https://login.salesforce.com")!, clientID: "3MVG9-test")
    }

    /// Adds the account of `user` (see ``account(_:org:)``) and, if `current`, makes it current
    /// without telling observers.
    public func add(_ user: String, current: Bool = true) {
        allAccounts.append(Self.account(user))
        allAccounts.sort { $0.identity.userID < $1.identity.userID }
        if current { currentIdentity = Self.account(user).identity }
    }

    /// Counts the login, yields once, then logs in as the next user of ``loginQueue`` — or
    /// throws the queued error. Events in `UserAccountManager`'s order: the first user becomes
    /// current without a switch, a later one (with `makeCurrent`) through willSwitch → didSwitch;
    /// then `didLogin`.
    public func logIn(config: OAuthConfig, using method: LoginMethod, loginHint: String?, makeCurrent: Bool) async throws -> UserAccount {
        loginCount += 1
        logins.append(config)
        let user: String
        if holdsLogins {
            user = try await withCheckedContinuation { heldLogins.append($0) }.get()
        } else {
            await Task.yield()
            guard !loginQueue.isEmpty else { throw OAuthError.serverError(code: "access_denied", description: "no scripted login") }
            user = try loginQueue.removeFirst().get()
        }
        let identity = Self.account(user).identity
        add(user, current: false)
        if currentIdentity == nil { currentIdentity = identity } else if makeCurrent { try switchTo(identity) }
        deliver(.didLogin(identity))
        return Self.account(user)
    }

    /// How many logins wait for ``answerLogin(_:)``.
    public var waitingLogins: Int { heldLogins.count }

    /// Answers the oldest waiting login: logged in as the user id, or refused with the error.
    /// - Returns: Whether a login was waiting.
    @discardableResult
    public func answerLogin(_ outcome: Result<String, any Error>) -> Bool {
        guard !heldLogins.isEmpty else { return false }
        heldLogins.removeFirst().resume(returning: outcome)
        return true
    }

    /// Makes `identity` current, telling observers `willSwitch` then `didSwitch` (nothing if it
    /// is current already).
    public func switchTo(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        guard identity != currentIdentity else { return }
        let previous = currentIdentity
        deliver(.willSwitch(from: previous, to: identity))
        currentIdentity = identity
        deliver(.didSwitch(from: previous, to: identity))
    }

    /// Removes the account, telling observers `willLogout` then `didLogout`; nobody is current
    /// after if it was.
    public func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async {
        deliver(.willLogout(identity, reason))
        allAccounts.removeAll { $0.identity == identity }
        if currentIdentity == identity { currentIdentity = nil }
        deliver(.didLogout(identity, reason))
    }

    /// Observes account events until the token is dropped or cancelled.
    public func observe(_ handler: @escaping @MainActor (AccountEvent) -> Void) -> ListenerToken {
        observers.add(handler)
    }

    private func deliver(_ event: AccountEvent) { observers.notify(event) }
}
