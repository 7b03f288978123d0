public import AppKernel
import AppKernelAuth
public import AppKernelEmbeddedOrg
public import AppKernelREST
public import AppKernelSDK
public import AppKernelTesting
import AppKernelCore
import Foundation

/// An ``SDKWorld`` whose users' REST clients reach an embedded org through a ``HeldTransport``:
/// every data request waits until a network step answers it (`syncPage(ok)`, `syncPage(fail)`,
/// `401(refresh)`, `401(invalid_grant)`), and `network(down)` fails them all. The SDK's
/// `restClientProvider` hands each user a client of their own (made at first use, logged in to
/// the org as the org's user at the same index), whose refresher does what `UserAccountManager`'s
/// does: it asks the org's token endpoint, and a refused refresh token (`invalid_grant`) logs the
/// user out with reason `tokenExpired`.
///
/// ```swift
/// let world = try OrgWorld(expression: "try MyApp.makeWorld()", users: ["005A", "005B"]) { _ in AppDelegate() }
/// try world.launch(); await world.settle()
/// world.startRequest(); await world.settle()     // the user taps refresh: the query waits
/// world.answerWith401(refreshRefused: true); await world.settle()
/// #expect(world.tokenExpiredLogouts == ["005A"])
/// ```
///
/// The `request` step calls ``requestAction`` — the app's own code for a tap on refresh, which
/// sends through `SDKManager.shared.restClientForCurrentUser()` and tracks its task with
/// `ExplorerWorld.track(_:named:)` — or, when the app sets none, sends ``query`` itself.
@MainActor
open class OrgWorld: SDKWorld {
    /// The org the users' requests reach.
    public let org: EmbeddedOrg
    /// The network between the clients and the org: where requests wait for a step.
    public let network: HeldTransport
    /// What the `request` step does: the app's code for a user's tap on refresh. `nil`: the
    /// world sends ``query`` through the current user's client (tracked).
    public var requestAction: (@MainActor (OrgWorld) -> Void)?
    /// The query the `request` step sends when the app sets no ``requestAction``.
    public var query = "SELECT Id, Name FROM Account"
    /// Which user's request each record id the org answered with came back to: whose data it is.
    public private(set) var servedRecords: [String: UserAccountIdentity] = [:]
    /// What each request the `request` step sent itself (no ``requestAction`` set) came to,
    /// oldest first.
    public private(set) var requestResults: [Result<RestResponse, RestClientError>] = []
    /// The users the SDK logged out because their refresh token was refused, oldest first.
    public private(set) var tokenExpiredLogouts: [String] = []
    /// The org's users by world user id (`005A` → the org's first user).
    private let orgUsers: [String: EmbeddedOrg.User]
    /// Each user's client, made at first use, dropped at logout.
    private var clients: [String: RestClient] = [:]
    /// The refresh token each client was logged in with.
    private var refreshTokens: [String: String] = [:]
    private var accountObservation: ListenerToken?

    /// Creates a world whose users' clients reach `org` through a ``HeldTransport``.
    /// - Parameters:
    ///   - expression: The Swift expression that makes the world, for printed tests.
    ///   - manager: The app's subclass of `SDKManager`.
    ///   - users: The users signed in at the start, the first current; the org's users at the same
    ///     index are who they are at the org.
    ///   - org: The org (by default a new `EmbeddedOrg.sample()`: Ada of Acme, Bob of Beta).
    ///   - passcode: A passcode set before the launch.
    ///   - maximumAttempts: Wrong passcodes allowed before every user is logged out.
    ///   - configuration: The configuration the host's applications get.
    ///   - delegate: Makes the app's delegate, once per launch.
    /// - Throws: ``OrgWorldError`` when the org has fewer users than `users`; what
    ///   ``SDKWorld``'s initialiser throws.
    public init(expression: String = "<#world#>", manager: SDKManager.Type = SDKManager.self, users: [String],
                org: EmbeddedOrg = EmbeddedOrg.sample(), passcode: String? = nil, maximumAttempts: Int = 10,
                configuration: ApplicationConfiguration = ApplicationConfiguration(),
                delegate: @escaping @MainActor (ExplorerWorld) -> any ApplicationDelegate) throws {
        guard org.users.count >= users.count else {
            throw OrgWorldError(reason: "the org has \(org.users.count) users for \(users.count) world users: give an org with one user per world user")
        }
        self.org = org
        self.network = HeldTransport(org)
        self.orgUsers = Dictionary(uniqueKeysWithValues: zip(users, org.users))
        try super.init(expression: expression, manager: manager, users: users, passcode: passcode, maximumAttempts: maximumAttempts,
                       configuration: configuration, delegate: delegate)
        network.onAnswer = { [weak self] response, user in self?.noteServed(response, to: user) }
        // A REST client finishes off the main actor (its token state is an actor of its own): under
        // load that takes many main-actor yields, and settling stops early only once quiescent.
        settleYields = Self.settleYieldsForRequests
        installClients()
        host.beforeEachLaunch { [weak self] _ in self?.installClients() }
        accountObservation = accounts.observe { [weak self] event in
            guard let self, case .didLogout(let identity, let reason) = event else { return }
            clients[identity.userID] = nil
            if reason == .tokenExpired { tokenExpiredLogouts.append(identity.userID) }
        }
    }

    /// How many main-actor yields `settle()` may take here: plenty, since it
    /// stops as soon as nothing moves and the world ``isQuiescent``.
    public static let settleYieldsForRequests = 10_000

    /// Hands the current manager the users' clients (a relaunch makes a new manager).
    private func installClients() {
        manager.restClientProvider = { [weak self] account in self?.client(for: account.identity.userID) }
    }

    /// `user`'s client: made at first use (and after a logout), logged in to the org.
    public func client(for user: String) -> RestClient? {
        if let client = clients[user] { return client }
        guard let orgUser = orgUsers[user], let credentials = logIn(orgUser) else { return nil }
        refreshTokens[user] = credentials.refreshToken
        let channel = network.channel(for: user)
        let tokens = TokenClient(config: org.oauthConfig, transport: channel)
        let client = RestClient(credentials: credentials, transport: channel) { [weak self] current in
            do throws(OAuthError) { return try await tokens.refresh(current) } catch {
                // UserAccountManager.refreshCredentials: a refused refresh token logs the user out.
                if case .serverError(code: "invalid_grant", _, _) = error { await self?.refreshRefused(for: user) }
                throw error
            }
        }
        clients[user] = client
        return client
    }

    private func refreshRefused(for user: String) async {
        let identity = FakeAccountManager.account(user).identity
        guard accounts.allAccounts.contains(where: { $0.identity == identity }) else { return }
        await accounts.logout(identity, reason: .tokenExpired)
    }

    /// Logs `user` in to the org at once (the user-agent flow, answered in process).
    private func logIn(_ user: EmbeddedOrg.User) -> Credentials? {
        var components = URLComponents(url: org.oauthConfig.authorizeURL, resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "response_type", value: "token"), URLQueryItem(name: "client_id", value: org.clientID),
                                  URLQueryItem(name: "redirect_uri", value: org.redirectURI.absoluteString),
                                  URLQueryItem(name: "login_hint", value: user.username)]
        guard let url = components?.url, let answer = try? org.respond(to: HTTPRequest(url: url)),
              let location = answer.headers["location"], let fragment = location.split(separator: "#", maxSplits: 1).last,
              let pairs = FormEncoding.decode(String(fragment)) else { return nil }
        let fields = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        guard let access = fields["access_token"], let instance = fields["instance_url"].flatMap(URL.init(string:)),
              let identity = fields["id"].flatMap(URL.init(string:)) else { return nil }
        return Credentials(accessToken: access, refreshToken: fields["refresh_token"], instanceURL: instance, identityURL: identity,
                           userID: user.userID, orgID: user.orgID)
    }

    /// Notes the records of a query answer as `user`'s data.
    private func noteServed(_ response: HTTPResponse, to user: String?) {
        guard let user, (200..<300).contains(response.status),
              let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let records = object["records"] as? [[String: Any]] else { return }
        for case let id as String in records.map({ $0["Id"] }) { servedRecords[id] = FakeAccountManager.account(user).identity }
    }

    // MARK: What the network steps call

    /// Does what the `request` step does: ``requestAction``, or ``query`` sent through the
    /// current user's client.
    public func startRequest() {
        if let requestAction { return requestAction(self) }
        guard let client = manager.restClientForCurrentUser() else { return }
        let request = client.request(forQuery: query, apiVersion: nil)
        track(Task { @MainActor [weak self] in
            let result: Result<RestResponse, RestClientError>
            do throws(RestClientError) { result = .success(try await client.send(request: request)) } catch { result = .failure(error) }
            self?.requestResults.append(result)
        }, named: "request")
    }

    /// Passes the oldest held request on to the org: its page arrives.
    public func deliverPage() { network.pass() }

    /// Fails the oldest held request as a busy server does: 503 `SERVER_UNAVAILABLE`.
    public func failPage() {
        network.answer(with: Self.errorResponse(503, "SERVER_UNAVAILABLE", "the server is busy (a test's syncPage(fail) step)"))
    }

    /// Answers the oldest held request 401 `INVALID_SESSION_ID`, as the org does for an expired
    /// access token: the client refreshes its token at the org and sends the request again (it
    /// waits again). With `refreshRefused`, the org revokes the user's refresh token first, so
    /// the refresh is refused with `invalid_grant` and the user is logged out (`tokenExpired`).
    public func answerWith401(refreshRefused: Bool) {
        guard let first = network.held.first else { return }
        if refreshRefused, let user = first.user, let token = refreshTokens[user] {
            _ = try? org.respond(to: .form(org.oauthConfig.revokeURL, [("token", token), ("token_type_hint", "refresh_token"),
                                                                       ("client_id", org.clientID)]))
        }
        network.answer(with: Self.errorResponse(401, "INVALID_SESSION_ID", "Session expired or invalid"))
    }

    /// Takes the network down (`true`) or brings it back up.
    public func setNetwork(down: Bool) {
        if down { network.down() } else { network.up() }
    }

    /// A Salesforce error answer: `[{"message": …, "errorCode": …}]`.
    static func errorResponse(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        let body = (try? JSONSerialization.data(withJSONObject: [["message": message, "errorCode": code]])) ?? Data()
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json;charset=UTF-8"], body: body)
    }

    // MARK: What the explorer reads

    open override func fingerprint() -> [String] {
        super.fingerprint() + [
            "network \(network.isDown ? "down" : "up") held \(network.held.map { "\($0.user ?? "-") \($0.summary)" }) expired \(tokenExpiredLogouts)",
        ]
    }

    open override var activity: [Int] {
        super.activity + [network.held.count, network.inFlight, network.answeredCount, clients.count]
    }

    /// As ``SDKWorld``'s, and no request on its way: none in flight to the org, and no more
    /// tracked work running than sleeps on the clock or waits on a held request.
    open override var isQuiescent: Bool {
        super.isQuiescent && network.inFlight == 0
            && trackedWork.count(where: { !$0.isDone }) <= clock.sleeperCount + network.held.count
    }

    /// Ends the run as `ExplorerWorld.finish()` does, after every held request timed out (as
    /// a real transport's request does when no answer comes): at the end, every request has
    /// ended.
    open override func finish() async {
        guard !isFinished else { return }
        network.timeOutAll()
        await settle()
        await super.finish()
    }

    /// Fails every held request (nothing waits after the world) and keeps the network down, lets
    /// the work waiting on them end, then ends what ``SDKWorld`` ends.
    open override func tearDown() async {
        network.down()
        await settle()
        await super.tearDown()
    }

    /// Lets go of the app's request code (which may hold its application) and the clients.
    open override func didEnd() {
        network.down()
        requestAction = nil
        manager.restClientProvider = nil
        super.didEnd()
    }
}
