// The Qiita article "logging in to Salesforce without the Mobile SDK", done right: two orgs, a
// user in each, the user-agent flow with its callback's `state` checked, the identity looked up,
// the web-server flow with PKCE, switching between the two users, and a logout that revokes the
// refresh token. The orgs are embedded (no network) and reached through a real URLSession.
// `swift run MultiOrgLogin`.
import AppKernel
import AppKernelPOSIX
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import Foundation

@MainActor func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

/// `url` with the random `state`, PKCE and token values replaced by `…`, so the printout reads
/// the same on every run.
func redacted(_ url: URL) -> String {
    var text = url.absoluteString
    for key in ["state", "code_challenge", "access_token", "refresh_token", "code", "signature", "issued_at"] {
        text = text.replacingOccurrences(of: "\(key)=[^&#]*", with: "\(key)=…", options: .regularExpression)
    }
    return text
}

/// An account event, as a line.
func describe(_ event: AccountEvent) -> String {
    func user(_ identity: UserAccountIdentity?) -> String { identity.map { "\($0.userID)@\($0.orgID)" } ?? "nobody" }
    switch event {
    case .didLogin(let identity): return "didLogin \(user(identity))"
    case .willSwitch(let from, let to): return "willSwitch \(user(from)) → \(user(to))"
    case .didSwitch(let from, let to): return "didSwitch \(user(from)) → \(user(to))"
    case .willLogout(let identity, let reason): return "willLogout \(user(identity)) (\(reason.rawValue))"
    case .didLogout(let identity, let reason): return "didLogout \(user(identity)) (\(reason.rawValue))"
    case .orgDidLogout(let orgID): return "orgDidLogout \(orgID) (its last user left)"
    case .revocationFailed(let identity, let willRetry): return "revocationFailed \(user(identity))\(willRetry ? " (kept, to retry)" : "")"
    case .revocationCompleted(let identity): return "revocationCompleted \(user(identity))"
    }
}

@main
enum MultiOrgLogin {
    /// The example's command line: no flags but `--help`; what it answers is what it does.
    static let tool = CommandLineTool(
        name: "MultiOrgLogin",
        summary: "two embedded orgs, a user in each: the user-agent and web-server (PKCE) flows checked, a user switch, a revoking logout",
        environment: [.init("TMPDIR", "where the run keeps its credential store (MultiOrgLogin-PID, removed at the end)")],
        exitStatuses: [.init(0, "every step ran"),
                       .init(1, "a step failed (the error is printed: a refused login, a failed revoke, …)")],
        notes: ["The orgs are embedded, reached through a real URLSession: no network. Random values print as …"])

    @MainActor
    static func main() async {
        // `--help` and a bad command line end here (AppKernelPOSIX's CommandLineTool).
        _ = tool.parseOrExit()
        do { try await run() } catch {
            say("error: \(error)")
            exit(1)
        }
    }

    @MainActor
    static func run() async throws {
        // Two orgs on hosts of their own, each with one user and its own data.
        let acme = EmbeddedOrg(users: [.init(username: "ada@acme.com", userID: "005ADA000000001", orgID: "00DACME000000001", displayName: "Ada Lovelace")],
                               baseURL: URL(string: "https://acme.embedded.salesforce.test")!)
        acme.insert("Account", ["Name": "Acme Corporation"], orgID: "00DACME000000001")
        let beta = EmbeddedOrg(users: [.init(username: "bob@beta.com", userID: "005BOB000000002", orgID: "00DBETA000000002", displayName: "Bob Beta")],
                               baseURL: URL(string: "https://beta.embedded.salesforce.test")!)
        beta.insert("Account", ["Name": "Beta Labs"], orgID: "00DBETA000000002")
        EmbeddedOrgURLProtocol.register(beta)
        let transport = acme.urlSessionTransport()      // one URLSession reaches both hosts
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("MultiOrgLogin-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let keys = try KeyRing(dataHome: root, provider: .inMemory(SecretKey.random()))   // an app: .keyFile(application:), apart from the data
        let accounts = try UserAccountManager(store: FileCredentialStore(root: root, keyRing: keys), transport: transport)
        let observation = accounts.observe { event in say("  event: \(describe(event))") }
        defer { observation.cancel() }

        say("== 1. Ada logs in to Acme with the user-agent flow (the article's flow), checked")
        let request = AuthorizationRequest(config: acme.oauthConfig, flow: .userAgent, loginHint: "ada@acme.com")
        say("authorize: \(redacted(request.url))")
        let session = LoginSession(config: acme.oauthConfig, transport: transport)
        let callback = try await session.authorize(request)
        say("callback:  \(redacted(callback))")
        // A callback made for another request (a forged one) and an error callback are refused.
        let other = AuthorizationRequest(config: acme.oauthConfig, flow: .userAgent)
        do { _ = try other.parseCallback(callback) } catch { say("a callback for another request is refused: \(error)") }
        let denied = URL(string: "appkernel://oauth/done#error=access_denied&error_description=end-user+denied+authorization&state=\(request.state)")!
        do { _ = try request.parseCallback(denied) } catch { say("an error callback is refused: \(error)") }
        let credentials = try request.parseCallback(callback)
        say("state matched; access token for user \(credentials.userID) in org \(credentials.orgID)")
        let identity = try await session.identity(for: credentials)
        say("identity: \(identity.displayName) <\(identity.username)>, org \(identity.orgID)")
        try accounts.add(UserAccount(credentials: credentials, userIdentity: identity, loginHost: acme.baseURL, clientID: acme.clientID))

        say("== 2. Bob logs in to Beta with the web-server flow and PKCE")
        let bob = try await accounts.logIn(config: beta.oauthConfig, flow: .webServer, loginHint: "bob@beta.com")
        say("beta saw: \(beta.requestLog.joined(separator: "; "))")
        say("identity: \(bob.userIdentity?.displayName ?? "?") <\(bob.userIdentity?.username ?? "?")>, org \(bob.identity.orgID)")
        say("logged in: \(accounts.allAccounts.map { $0.userIdentity?.username ?? "?" }.joined(separator: ", ")) in orgs \(accounts.orgIDs.joined(separator: ", "))")

        say("== 3. Switch between them; each one's REST client reaches their own org")
        for account in [accounts.allAccounts[0], bob] {
            try accounts.switchTo(account.identity)
            guard let client = RestClient.forCurrentUser(of: accounts, transport: transport) else { continue }
            let records = try await client.send(request: client.request(forQuery: "SELECT Name FROM Account", apiVersion: nil)).asJSON()
            let names = records.objectValue?["records"]?.arrayValue?.compactMap { $0.objectValue?["Name"]?.stringValue } ?? []
            say("\(account.userIdentity?.username ?? "?") sees: \(names.joined(separator: ", "))")
        }

        say("== 4. Bob logs out: his files are deleted and his refresh token revoked at Beta")
        await accounts.logout(bob.identity, reason: .userInitiated)
        let revokes = beta.requestLog.filter { $0.contains("/services/oauth2/revoke") }
        say("beta saw: \(revokes.joined(separator: "; "))")
        say("still logged in: \(accounts.allAccounts.map { $0.userIdentity?.username ?? "?" }.joined(separator: ", "))")

        say("== 5. A relaunch finds Ada's credentials on disk")
        let relaunched = try UserAccountManager(store: FileCredentialStore(root: root, keyRing: keys), transport: transport)
        say("accounts after relaunch: \(relaunched.allAccounts.map { $0.userIdentity?.username ?? "?" }.joined(separator: ", "))")
    }
}
