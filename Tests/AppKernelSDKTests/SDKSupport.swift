import Foundation
import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelTesting

/// An account manager with scripted logins, in memory.
@MainActor final class FakeAccountManager: AccountManaging {
    var allAccounts: [UserAccount] = []
    var currentIdentity: UserAccountIdentity?
    var loginQueue: [Result<String, any Error>] = []   // user ids to log in as, or failures
    var loginCount = 0
    var logins: [OAuthConfig] = []
    private let observers = ObserverList<AccountEvent>()

    var currentAccount: UserAccount? { allAccounts.first { $0.identity == currentIdentity } }

    static func account(_ user: String, org: String = "00DORG") -> UserAccount {
        UserAccount(credentials: Credentials(accessToken: "token-\(user)", refreshToken: "refresh-\(user)",
                                             instanceURL: URL(string: "https://na1.salesforce.com")!,
                                             identityURL: URL(string: "https://login.salesforce.com/id/\(org)/\(user)")!,
                                             userID: user, orgID: org),
                    loginHost: URL(string: "https://login.salesforce.com")!, clientID: "3MVG9-test")
    }

    func add(_ user: String, current: Bool = true) {
        allAccounts.append(Self.account(user))
        allAccounts.sort { $0.identity.userID < $1.identity.userID }
        if current { currentIdentity = Self.account(user).identity }
    }

    func logIn(config: OAuthConfig, flow: AuthorizationRequest.Flow, loginHint: String?, makeCurrent: Bool) async throws -> UserAccount {
        loginCount += 1
        logins.append(config)
        await Task.yield()
        guard !loginQueue.isEmpty else { throw OAuthError.serverError(code: "access_denied", description: "no scripted login") }
        let user = try loginQueue.removeFirst().get()
        add(user, current: false)
        try switchTo(Self.account(user).identity)
        return Self.account(user)
    }

    func switchTo(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        guard identity != currentIdentity else { return }
        let previous = currentIdentity
        deliver(.willSwitch(from: previous, to: identity))
        currentIdentity = identity
        deliver(.didSwitch(from: previous, to: identity))
    }

    func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async {
        deliver(.willLogout(identity, reason))
        allAccounts.removeAll { $0.identity == identity }
        if currentIdentity == identity { currentIdentity = nil }
        deliver(.didLogout(identity, reason))
    }

    func observe(_ handler: @escaping @MainActor (AccountEvent) -> Void) -> ListenerToken {
        observers.add(handler)
    }

    private func deliver(_ event: AccountEvent) { observers.notify(event) }
}

/// Answers passcode prompts from a script; `nil` entries mean the user gives up.
@MainActor final class ScriptedPasscodes: PasscodeProvider {
    var answers: [String?]
    var prompts: [(attempt: Int, remaining: Int)] = []
    init(_ answers: [String?]) { self.answers = answers }
    func passcode(attempt: Int, remaining: Int) async -> String? {
        prompts.append((attempt, remaining))
        return answers.isEmpty ? nil : answers.removeFirst()
    }
}

struct SDKTestError: Error, CustomStringConvertible {
    var description: String { "SDKTestError" }
}

let deferredConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
                                oauthScopes: ["api"], shouldAuthenticate: false)
let authConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
                            oauthScopes: ["api", "refresh_token"], shouldAuthenticate: true)

/// A directory with the given config files, removed when the returned closure runs.
func configDirectory(_ files: [String: String]) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
    return directory
}

let userstoreJSON = #"{"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}]}]}"#
let usersyncsJSON = #"{"syncs": [{"syncName": "syncDownAccounts", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "query": "SELECT Id FROM Account"}}]}"#

/// A root controller that names its user.
@MainActor final class AccountsController: RootController {
    let user: String?
    init(user: String?) { self.user = user }
}
