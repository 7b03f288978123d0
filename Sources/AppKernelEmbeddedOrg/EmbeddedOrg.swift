public import AppKernelCore
public import AppKernelREST
public import AppKernelAuth
public import Foundation

/// An in-process Salesforce org, in a product of its own (as swift-nio's `NIOEmbedded`): the
/// login module and the REST client run against it offline, through their real code.
///
/// It answers as an `HTTPTransport` (pass it wherever a transport goes) and implements, in
/// the shapes Salesforce's REST API documents: authorize (auto-approves the user named by
/// `login_hint`, or the first user; redirects with a fragment or a code), token (code + PKCE,
/// refresh, Salesforce's device flow, client credentials for an integration user), revoke, the identity URL and userinfo (each with its own keys), versions (no token
/// needed) and the resources of a version, limits; query and queryAll with the ``SOQLQuery``
/// subset — parent fields nested under their relationship, child subqueries as nested query
/// results, `nextRecordsUrl` paging, deleted records (`IsDeleted: true`) for queryAll only;
/// search with the ``SOSLSearch`` subset and parameterizedSearch (`{"searchRecords": […]}`);
/// sObject create, retrieve, update, delete, describe and describeGlobal; upsert, retrieve and
/// delete by external id (300 with the matching records' URLs when several match). Errors are
/// Salesforce's arrays and status codes (401 `INVALID_SESSION_ID`; 404 `NOT_FOUND` — also for a
/// version written without its `v` — and `ENTITY_IS_DELETED`; 410 `GONE` for a retired version;
/// 400 `MALFORMED_QUERY` / `MALFORMED_SEARCH` pointing at the row and column, `INVALID_FIELD`,
/// `INVALID_TYPE`, `MALFORMED_ID`, `REQUIRED_FIELD_MISSING`, `STRING_TOO_LONG` (a value over
/// its describe length), `INVALID_FIELD` for `Id` or the external id in an upsert's body,
/// `DELETE_FAILED`; 405
/// `METHOD_NOT_ALLOWED`). Every data answer carries `Sforce-Limit-Info`.
///
/// ```swift
/// let org = EmbeddedOrg.sample()                       // accounts, contacts (some with cases), two users
/// let client = try await org.loggedInClient()           // a real login through LoginSession
/// let page = try await client.send(request: client.request(forQuery: "SELECT Name, Account.Name FROM Contact", apiVersion: nil))
/// // records: [{"attributes": {…}, "Name": "Ada Lovelace", "Account": {"attributes": {…}, "Name": "Acme Corporation"}}, …]
/// org.injectFault(.failNext(1, status: 503))            // faults for tests
/// ```
public final class EmbeddedOrg: HTTPTransport, Sendable {
    /// A user who can log in.
    public struct User: Sendable, Hashable {
        /// The login name.
        public var username: String
        /// The user id.
        public var userID: String
        /// The org id.
        public var orgID: String
        /// The display name.
        public var displayName: String
        /// The connected app's mobile policy the identity URL answers for this user
        /// (`["pin_length": 6, "screen_lock": 5]`), if any.
        public var mobilePolicy: [String: JSONValue]?

        /// Creates a user.
        public init(username: String, userID: String, orgID: String, displayName: String, mobilePolicy: [String: JSONValue]? = nil) {
            self.username = username
            self.userID = userID
            self.orgID = orgID
            self.displayName = displayName
            self.mobilePolicy = mobilePolicy
        }
    }

    /// A failure to inject.
    public enum Fault: Sendable, Hashable {
        /// The next `count` data requests answer `status` with a Salesforce error body.
        case failNext(Int, status: Int, errorCode: String = "SERVER_UNAVAILABLE", message: String = "injected failure")
        /// The next `count` requests get no answer (the transport throws, as a dropped connection).
        case dropNext(Int)
        /// The next request is answered only after `delay` on the org's clock.
        case delayNext(Duration)
        /// The next `count` data requests answer `status` with this body as it is (an HTML error
        /// page, a body that is not Salesforce's error array) and this `Content-Type`.
        case respondNext(Int, status: Int, contentType: String, body: String)
    }

    /// The connection dropped (an injected fault).
    public struct ConnectionDropped: Error, Sendable, CustomStringConvertible {
        /// "the embedded org dropped the connection".
        public var description: String { "the embedded org dropped the connection" }
    }

    /// The org's base URL: instance and login host at once.
    public let baseURL: URL
    /// The connected app's consumer key the org accepts.
    public let clientID: String
    /// The redirect URI the org redirects to.
    public let redirectURI: URL
    /// The users.
    public let users: [User]
    /// How many records a query page holds at most (Salesforce: 2000; a request may ask for
    /// fewer with `Sforce-Query-Options: batchSize=N`).
    public let queryBatchSize: Int
    /// Where record timestamps come from.
    public let recordClock: RecordClock
    let sleep: @Sendable (Duration) async throws -> Void

    struct Record {
        var type: String
        var orgID: String
        var fields: [String: JSONValue]
        var isDeleted = false
        /// When the record was last created, changed or retrieved through the API (a counter):
        /// what `recentItems` and `/recent` order by.
        var referenced = 0
    }

    struct State {
        var records: [String: Record] = [:]
        var order: [String] = []
        var nextNumber = 1
        var codes: [String: (user: User, challenge: String?, redirectURI: String)] = [:]
        var accessTokens: [String: User] = [:]
        var refreshTokens: [String: User] = [:]
        /// Device codes asked for (the device flow), by device code.
        var deviceGrants: [String: DeviceGrant] = [:]
        /// The connected app's consumer secret and run-as user, when the client-credentials flow is on.
        var integration: (secret: String, user: User)?
        /// Logins, oldest first (the org's login history).
        var loginHistory: [LoginEvent] = []
        var cursors: [String: Cursor] = [:]
        var faults: [Fault] = []
        var faultSettings = Faults()
        var log: [String] = []
        /// The timestamp of the write under way: one per request (a transaction), as in Salesforce.
        var transactionTime: String?
        /// The last value given to ``Record/referenced``.
        var referenceCounter = 0
        /// Data requests answered, for `Sforce-Limit-Info` and `/limits`.
        var apiUsage = 0
        /// What the org last restored from or persisted to its folder, as it saw it: the base a
        /// later persist merges against (`EmbeddedOrg+Persistence.swift`).
        var persisted: PersistedSnapshot?
    }

    let state = Locked(State())

    /// The daily API request allowance `/limits` and `Sforce-Limit-Info` report.
    static let dailyAPIRequests = 15000

    /// Creates an empty org.
    /// - Parameters:
    ///   - users: The users who can log in.
    ///   - clientID: The connected app's consumer key the org accepts.
    ///   - redirectURI: The redirect URI the org redirects to.
    ///   - baseURL: Its instance and login host; by default a host of its own
    ///     (`https://org-<random>.embedded.salesforce.test`), so orgs side by side never share one.
    ///   - queryBatchSize: How many records a query page holds at most.
    ///   - clock: Measures injected delays (a `TestClock` in tests).
    ///   - recordClock: Stamps `CreatedDate`, `LastModifiedDate` and `SystemModstamp` (a manual
    ///     ``RecordClock`` in tests).
    public init(users: [User], clientID: String = "3MVG9-embedded", redirectURI: URL = URL(string: "appkernel://oauth/done")!,
                baseURL: URL? = nil, queryBatchSize: Int = 2000, clock: some Clock<Duration> = ContinuousClock(),
                recordClock: RecordClock = .system) {
        self.sleep = { delay in try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil) }
        self.recordClock = recordClock
        self.users = users
        self.clientID = clientID
        self.redirectURI = redirectURI
        let host = "org-" + SecureRandom.bytes(6).hexString + ".embedded.salesforce.test"
        self.baseURL = baseURL ?? URL(string: "https://\(host)")!
        self.queryBatchSize = max(queryBatchSize, 1)
    }

    /// A small seeded org: Acme's users Ada (current) and, in a second org, Bob; accounts; contacts,
    /// some with child cases (deleting those fails with `DELETE_FAILED`, as in a Developer
    /// Edition org).
    public static func sample(queryBatchSize: Int = 2000, clock: some Clock<Duration> = ContinuousClock(),
                              recordClock: RecordClock = .system) -> EmbeddedOrg {
        let acme = "00DACME000000001", beta = "00DBETA000000002"
        let org = EmbeddedOrg(users: [User(username: "ada@acme.com", userID: "005ADA000000001", orgID: acme, displayName: "Ada Lovelace"),
                                      User(username: "bob@beta.com", userID: "005BOB000000002", orgID: beta, displayName: "Bob Beta")],
                              queryBatchSize: queryBatchSize, clock: clock, recordClock: recordClock)
        let acmeCorp = org.insert("Account", ["Name": "Acme Corporation", "Industry": "Manufacturing"], orgID: acme)
        let globex = org.insert("Account", ["Name": "Globex", "Industry": "Energy"], orgID: acme)
        let people: [(String, String, String, Int)] = [("Ada", "Lovelace", acmeCorp, 2), ("Alan", "Turing", acmeCorp, 0),
                                                        ("Grace", "Hopper", globex, 1), ("Linus", "Torvalds", globex, 0),
                                                        ("Margaret", "Hamilton", acmeCorp, 0)]
        for (first, last, account, cases) in people {
            let contact = org.insert("Contact", ["FirstName": .string(first), "LastName": .string(last), "AccountId": .string(account),
                                                 "Email": .string("\(first.lowercased())@example.com")], orgID: acme)
            for number in 0..<cases {
                org.insert("Case", ["Subject": .string("\(first)'s case \(number + 1)"), "Status": "New", "ContactId": .string(contact)], orgID: acme)
            }
        }
        org.insert("Account", ["Name": "Beta Labs", "Industry": "Research"], orgID: beta)
        return org
    }

    /// Adds a record, as if created on the server (stamped with the record clock's time), and
    /// returns its id (the object type's prefix, then a counter).
    @discardableResult
    public func insert(_ type: String, _ fields: [String: JSONValue], orgID: String) -> String {
        state.withLock { state in
            state.transactionTime = nil
            return insert(type, fields, orgID: orgID, into: &state)
        }
    }

    func insert(_ type: String, _ fields: [String: JSONValue], orgID: String, into state: inout State) -> String {
        let prefix = Self.object(type)?.keyPrefix ?? "a00"
        let id = prefix + String(format: "%012d", state.nextNumber) + "AAA"
        state.nextNumber += 1
        var record = fields
        record["Id"] = .string(id)
        let now = stamp(&state)
        for field in ["CreatedDate", "LastModifiedDate", "SystemModstamp"] { record[field] = .string(now) }
        state.records[id] = Record(type: type, orgID: orgID, fields: Self.derivingFields(of: type, record))
        state.order.append(id)
        reference(id, &state)
        return id
    }

    /// The time of the write under way (read from the record clock once per request).
    func stamp(_ state: inout State) -> String {
        if let time = state.transactionTime { return time }
        let time = SalesforceDateTime.string(from: recordClock.now())
        state.transactionTime = time
        return time
    }

    /// Marks a record as just used (created, changed or retrieved), for `recentItems`.
    func reference(_ id: String, _ state: inout State) {
        state.referenceCounter += 1
        state.records[id]?.referenced = state.referenceCounter
    }

    /// The fields with those Salesforce computes filled in (a contact's `Name`).
    static func derivingFields(of type: String, _ fields: [String: JSONValue]) -> [String: JSONValue] {
        guard type == "Contact" else { return fields }
        var fields = fields
        let first = fields["FirstName"]?.stringValue.map { $0 + " " } ?? ""
        fields["Name"] = .string(first + (fields["LastName"]?.stringValue ?? ""))
        return fields
    }

    // MARK: Questions tests ask

    /// Whether other live records refer to the record (cases of a contact, contacts of an account).
    public func hasChildren(recordID: String) -> Bool {
        state.withLock { state in !Self.children(of: recordID, state).isEmpty }
    }

    /// The live records whose lookups point at `id`, in insertion order.
    static func children(of id: String, _ state: State) -> [Record] {
        state.order.compactMap { childID in
            guard let child = state.records[childID], !child.isDeleted, let type = object(child.type),
                  type.fields.contains(where: { $0.referenceTo != nil && child.fields[$0.name]?.stringValue == id }) else { return nil }
            return child
        }
    }

    /// A live record's fields.
    public func record(withID id: String) -> [String: JSONValue]? {
        state.withLock { state in state.records[id].flatMap { $0.isDeleted ? nil : $0.fields } }
    }

    /// The requests the org has answered, as `METHOD /path`.
    public var requestLog: [String] { state.withLock { $0.log } }

    /// Queues a fault for the next requests.
    public func injectFault(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }

    /// Invalidates every access token: the next data request answers 401 `INVALID_SESSION_ID`.
    public func expireAccessTokens() { state.withLock { $0.accessTokens.removeAll() } }

    /// The OAuth settings that log in to this org.
    public var oauthConfig: OAuthConfig {
        OAuthConfig(clientID: clientID, redirectURI: redirectURI, loginHost: baseURL, scopes: ["api", "refresh_token"])
    }

    /// Logs in (web-server flow with PKCE, through `LoginSession`) and returns a client that
    /// refreshes its token through the org's token endpoint.
    public func loggedInClient(username: String? = nil) async throws -> RestClient {
        let (credentials, _) = try await LoginSession(config: oauthConfig, transport: self).logIn(flow: .webServer, loginHint: username)
        let tokens = TokenClient(config: oauthConfig, transport: self)
        return RestClient(credentials: credentials, transport: self) { try await tokens.refresh($0) }
    }
}
