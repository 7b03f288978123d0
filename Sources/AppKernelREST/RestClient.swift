import AppKernelCore
public import AppKernelAuth
import Foundation

/// Sends Salesforce REST requests for one user — the Mobile SDK's `RestClient`.
///
/// ```swift
/// let client = RestClient(credentials: account.credentials, transport: SocketTransport(),
///                         refresher: { try await accounts.refreshCredentials(for: account.identity).credentials })
/// let request = client.request(forQuery: "SELECT Name, Id FROM Contact", apiVersion: nil)
/// let records = try await client.send(request: request).asJSON()["records"]
/// ```
///
/// A 401 (or a 403 `Bad_OAuth_Token`) starts ONE token refresh, shared by every request that
/// fails while it runs; each is then replayed once with the new token. If the refresh fails,
/// they all fail with its error (an `invalid_grant` refresher — `UserAccountManager` — logs the
/// user out). Nothing retries more than once.
public final class RestClient: Sendable {
    /// The API version used when a builder is given `nil`.
    public static let defaultAPIVersion = "v62.0"

    /// The default of ``maximumResponseBytes``: 64 MiB.
    public static let defaultMaximumResponseBytes = 64 << 20

    /// The API version this client's builders use by default.
    public let apiVersion: String
    /// How requests are sent.
    public let transport: any HTTPTransport
    /// The most an answer's body may hold, after decompression: a larger one is refused as it
    /// arrives (or before, when its `Content-Length` says so) with
    /// ``RestClientError/responseTooLarge(_:)``. `SocketTransport` (the default) enforces it as
    /// the body arrives; the client checks the size of what any other transport returns too.
    public let maximumResponseBytes: Int
    private let tokens: TokenState

    /// Creates a client whose builders default to ``defaultAPIVersion``.
    /// - Parameters:
    ///   - credentials: The user's tokens and instance.
    ///   - transport: How requests are sent: a `SocketTransport` (bounded in memory and time) unless given.
    ///   - maximumResponseBytes: The most an answer's body may hold (64 MiB unless given).
    ///   - refresher: Gets fresh credentials after a 401; `nil` makes a 401 final.
    public init(credentials: Credentials, transport: any HTTPTransport = SocketTransport(), maximumResponseBytes: Int = RestClient.defaultMaximumResponseBytes,
                refresher: (@Sendable (Credentials) async throws -> Credentials)? = nil) {
        self.apiVersion = Self.defaultAPIVersion
        self.transport = transport
        self.maximumResponseBytes = maximumResponseBytes
        self.tokens = TokenState(credentials: credentials, refresher: refresher)
    }

    /// Creates a client whose builders default to `apiVersion`.
    /// - Parameters:
    ///   - credentials: The user's tokens and instance.
    ///   - transport: How requests are sent.
    ///   - apiVersion: The default API version, written as in paths: `v62.0`.
    ///   - maximumResponseBytes: The most an answer's body may hold (64 MiB unless given).
    ///   - refresher: Gets fresh credentials after a 401; `nil` makes a 401 final.
    /// - Throws: ``RestClientError/invalidAPIVersion(_:reason:)`` naming a malformed version
    ///   (`60.0`, `v60`, `vabc`): a real org would answer every call with 404.
    public init(credentials: Credentials, transport: any HTTPTransport = SocketTransport(), apiVersion: String,
                maximumResponseBytes: Int = RestClient.defaultMaximumResponseBytes,
                refresher: (@Sendable (Credentials) async throws -> Credentials)? = nil) throws(RestClientError) {
        self.apiVersion = try APIVersion(apiVersion).description
        self.transport = transport
        self.maximumResponseBytes = maximumResponseBytes
        self.tokens = TokenState(credentials: credentials, refresher: refresher)
    }

    /// A client for the current user of `accounts`, refreshing through it (so a refused refresh
    /// token logs the user out) — the SDK's `RestClient.shared`. Its requests carry the
    /// manager's `User-Agent` (`UserAccountManager.userAgent`), as the SDK's do.
    /// - Returns: `nil` when nobody is logged in.
    @MainActor
    public static func forCurrentUser(of accounts: UserAccountManager, transport: any HTTPTransport) -> RestClient? {
        guard let account = accounts.currentAccount else { return nil }
        let identity = account.identity
        return RestClient(credentials: account.credentials, transport: UserAgentTransport(transport, userAgent: accounts.userAgent)) { _ in
            try await accounts.refreshCredentials(for: identity).credentials
        }
    }

    // MARK: The shared client

    /// What ``shared`` serves: the account manager and transport, and the client it made last.
    @MainActor
    final class SharedState {
        var setup: (accounts: UserAccountManager, transport: any HTTPTransport)?
        var client: (identity: UserAccountIdentity, client: RestClient)?
    }

    /// The process's shared-client state (outside any `SharedScope`).
    @MainActor private static let processSharedState = SharedState()
    /// A scope's shared-client state.
    private static let sharedStateKey = SharedScope.Key<SharedState>("RestClient.shared")

    /// The current `SharedScope`'s state (emptied when the scope finishes), or the process's.
    @MainActor private static var sharedState: SharedState {
        SharedScope.resolve(sharedStateKey, make: { SharedState() }, process: { processSharedState })
    }

    /// Makes ``shared`` serve the current user of `accounts` — in the current `SharedScope` (a
    /// test's) only, inside one; for the process outside any.
    @MainActor
    public static func configureShared(accounts: UserAccountManager, transport: any HTTPTransport) {
        let state = sharedState
        state.setup = (accounts, transport)
        state.client = nil
    }

    /// The client of the current user of the configured account manager — the SDK's
    /// `RestClient.shared`. A new user gets a new client; `nil` when nobody is logged in or
    /// ``configureShared(accounts:transport:)`` was not called (in the current `SharedScope`,
    /// inside one: each scope has its own).
    @MainActor
    public static var shared: RestClient? {
        let state = sharedState
        guard let setup = state.setup, let identity = setup.accounts.currentIdentity else { return nil }
        if let cached = state.client, cached.identity == identity { return cached.client }
        guard let client = forCurrentUser(of: setup.accounts, transport: setup.transport) else { return nil }
        state.client = (identity, client)
        return client
    }

    /// The credentials in use now (after any refresh).
    public var credentials: Credentials {
        get async { await tokens.credentials }
    }

    /// How many token refreshes this client has made.
    public var refreshCount: Int {
        get async { await tokens.refreshCount }
    }

    // MARK: Sending

    /// Sends a request.
    /// - Throws: ``RestClientError``: `apiFailed` with the status and the server's body (its
    ///   error array decoded, whatever else summarised) for a non-2xx answer; `network` when no
    ///   answer came; `cancelled`; `responseTooLarge` for a body over ``maximumResponseBytes``;
    ///   `invalidAPIVersion`, before anything is sent, for a request a builder made with a
    ///   malformed version.
    public func send(request: RestRequest) async throws(RestClientError) -> RestResponse {
        if let version = request.malformedAPIVersion { _ = try APIVersion(version) }
        let first = await tokens.credentials
        let response = try await transmit(request, with: first)
        guard Self.needsRefresh(response) else { return try Self.result(response, for: request) }
        let fresh: Credentials
        do { fresh = try await tokens.refresh(after: first.accessToken) } catch {
            throw .apiFailed(response: nil, underlyingError: error, urlResponse: response)
        }
        return try Self.result(try await transmit(request, with: fresh), for: request)
    }

    /// Sends a request and delivers the result on the main actor, exactly once.
    public func send(request: RestRequest, _ completion: @escaping @MainActor @Sendable (Result<RestResponse, RestClientError>) -> Void) {
        Task {
            let result: Result<RestResponse, RestClientError>
            do throws(RestClientError) { result = .success(try await send(request: request)) } catch { result = .failure(error) }
            await MainActor.run { completion(result) }
        }
    }

    private func transmit(_ request: RestRequest, with credentials: Credentials) async throws(RestClientError) -> HTTPResponse {
        if Task.isCancelled { throw .cancelled }
        var http = request.httpRequest(instanceURL: credentials.instanceURL, accessToken: credentials.accessToken)
        let limit = HTTPRequest.ResponseLimit(bytes: maximumResponseBytes, setting: "RestClient(maximumResponseBytes:)")
        http.responseLimit = limit
        do {
            let response = try await transport.send(http)
            // A transport that does not bound what it reads (InProcessTransport, a custom one)
            // is checked here: too late to save memory, but the answer is refused all the same.
            if response.body.count > limit.bytes {
                throw ResponseTooLarge(method: http.method, url: http.url, limit: limit.bytes, setting: limit.setting, evidence: .received(response.body.count))
            }
            return response
        } catch let error as ResponseTooLarge {
            throw .responseTooLarge(error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw .network(underlyingError: error)
        }
    }

    /// A 401, or a 403 whose body says the token is bad.
    private static func needsRefresh(_ response: HTTPResponse) -> Bool {
        response.status == 401 || (response.status == 403 && response.text.contains("Bad_OAuth_Token"))
    }

    private static func result(_ response: HTTPResponse, for request: RestRequest) throws(RestClientError) -> RestResponse {
        let rest = RestResponse(status: response.status, headers: response.headers, data: response.body, requestID: request.id)
        guard (200..<300).contains(response.status) else {
            throw .apiFailed(response: rest, underlyingError: nil, urlResponse: response)
        }
        return rest
    }
}

/// The client's credentials and its one in-flight refresh.
private actor TokenState {
    private(set) var credentials: Credentials
    private(set) var refreshCount = 0
    private let refresher: (@Sendable (Credentials) async throws -> Credentials)?
    private var inFlight: Task<Credentials, any Error>?

    init(credentials: Credentials, refresher: (@Sendable (Credentials) async throws -> Credentials)?) {
        self.credentials = credentials
        self.refresher = refresher
    }

    /// New credentials after `failedToken` was refused: the current ones if someone already
    /// refreshed past it, the running refresh's, or a new refresh's.
    func refresh(after failedToken: String) async throws -> Credentials {
        if credentials.accessToken != failedToken { return credentials }
        if let inFlight { return try await inFlight.value }
        guard let refresher else { throw RestClientError.invalidRequest("the token was refused and the client has no refresher") }
        let current = credentials
        let task = Task { try await refresher(current) }
        inFlight = task
        defer { inFlight = nil }
        let fresh = try await task.value
        credentials = fresh
        refreshCount += 1
        return fresh
    }
}
