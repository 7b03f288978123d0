import Foundation
import AppKernelCore
import Testing
import AppKernelAuth

/// The device flow (RFC 8628) on a clock the test drives: no test waits in real time.
@MainActor @Suite(.serialized)
struct DeviceFlowTests {
    /// A presenter that hands the shown authorization to the test.
    final class Shown: Sendable {
        let stream = AsyncStream.makeStream(of: DeviceAuthorization.self)
        var presenter: DeviceCodePresenter {
            let continuation = stream.continuation
            return DeviceCodePresenter { continuation.yield($0) }
        }
        func next() async throws -> DeviceAuthorization {
            var iterator = stream.stream.makeAsyncIterator()
            return try #require(await iterator.next())
        }
    }

    @Test func aDeviceLoginAgainstTheLoginFormServer() async throws {
        var knobs = LoginFormServer.Knobs()
        knobs.devicePollScript = ["authorization_pending", "slow_down"]
        let server = try await LoginFormServer.start(knobs)
        defer { server.stop() }
        let manager = try UserAccountManager(store: InMemoryCredentialStore(), transport: URLSessionTransport(timeout: 10))
        let clock = ManualClock()
        let shown = Shown()
        let login = Task { try await manager.logIn(config: server.oauthConfig, using: .deviceFlow(presenter: shown.presenter, clock: clock)) }
        let authorization = try await shown.next()
        #expect(authorization.verificationURI == server.baseURL.appendingPathComponent("activate"))
        #expect(authorization.interval == .seconds(5))
        #expect(authorization.expiresIn == .seconds(600))
        #expect(!authorization.description.contains("dev-"), "the device code is not shown")
        for _ in 0..<2 {                                      // pending, then slow_down
            await clock.waitForSleepers()
            clock.advance(by: clock.sleeps.last!)
        }
        try await server.approveDevice(at: authorization.verificationURI, userCode: authorization.userCode, user: "ada", password: "secret")
        await clock.waitForSleepers()
        clock.advance(by: clock.sleeps.last!)
        let account = try await login.value
        #expect(account.userIdentity?.username == "ada@example.com")
        #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(10)], "slow_down adds 5 s to every later interval")
        let polls = server.tokenRequests.filter { $0["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" }
        #expect(polls.count == 3)
        #expect(polls.allSatisfy { $0["client_id"] == LoginFormServer.clientID && $0["device_code"]?.hasPrefix("dev-") == true })
    }

    /// A device flow against a scripted token endpoint, in process.
    func scripted(_ answers: [String], deviceAnswer: String? = nil, deviceAuthorizationURL: URL? = URL(string: "https://idp.example.com/device"),
                  clock: ManualClock, requests: Recorder? = nil) -> (LoginSession, OAuthConfig) {
        let remaining = Locked(answers)
        let config = OAuthConfig(clientID: "device-client", redirectURI: URL(string: "http://127.0.0.1/cb")!,
                                 loginHost: URL(string: "https://idp.example.com")!, scopes: ["api"], deviceAuthorizationURL: deviceAuthorizationURL)
        let transport = InProcessTransport { request in
            requests?.requests.withLock { $0.append(request) }
            let form = Dictionary(FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self)) ?? [], uniquingKeysWith: { $1 })
            if request.url.path == "/device" || form["response_type"] == "device_code" {
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data((deviceAnswer ?? #"{"device_code":"DC","user_code":"WDJB-MJHT","verification_uri":"https://idp.example.com/activate","expires_in":30,"interval":5}"#).utf8))
            }
            if request.url.path == "/id/00D/005" {
                return HTTPResponse(status: 200, body: Data(#"{"user_id":"005","organization_id":"00D","username":"dev@example.com"}"#.utf8))
            }
            let next = remaining.withLock { $0.isEmpty ? "ok" : $0.removeFirst() }
            if next == "ok" {
                return HTTPResponse(status: 200, body: Data(#"{"access_token":"AT","token_type":"Bearer","instance_url":"https://idp.example.com","id":"https://idp.example.com/id/00D/005"}"#.utf8))
            }
            return HTTPResponse(status: 400, body: Data(#"{"error":"\#(next)","error_description":"\#(next) said the server","error_uri":"https://idp.example.com/help"}"#.utf8))
        }
        return (LoginSession(config: config, transport: transport), config)
    }

    /// Runs the scripted device login, advancing the clock for each sleep until it ends.
    func run(_ session: LoginSession, clock: ManualClock, steps: Int) async -> Result<(Credentials, UserIdentity), LoginError> {
        let login = Task { try await session.logIn(using: .deviceFlow(presenter: DeviceCodePresenter { _ in }, clock: clock)) }
        for _ in 0..<steps {
            await clock.waitForSleepers()
            clock.advance(by: clock.sleeps.last!)
        }
        return Self.typed(await login.result)
    }

    static func typed(_ result: Result<(Credentials, UserIdentity), any Error>) -> Result<(Credentials, UserIdentity), LoginError> {
        result.mapError { $0 as? LoginError ?? LoginError(step: .identity, error: .transport("not a LoginError: \($0)")) }
    }

    final class Recorder: Sendable {
        let requests = Locked<[HTTPRequest]>([])
    }

    @Test func slowDownAndPendingFollowTheRFC() async throws {
        let clock = ManualClock()
        let (session, _) = scripted(["authorization_pending", "slow_down", "authorization_pending", "slow_down"],
                                    deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://idp.example.com/activate","expires_in":600}"#,
                                    clock: clock)
        let result = await run(session, clock: clock, steps: 5)
        #expect(try result.get().1.username == "dev@example.com")
        #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(10), .seconds(10), .seconds(15)])
    }

    @Test func theServerSayingExpiredTokenEndsTheLogin() async throws {
        let clock = ManualClock()
        let (session, _) = scripted(["authorization_pending", "expired_token"], clock: clock)
        let result = await run(session, clock: clock, steps: 2)
        guard case .failure(let error) = result else { Issue.record("the login succeeded"); return }
        #expect(error == LoginError(step: .devicePolling, error: .serverError(code: "expired_token", description: "expired_token said the server",
                                                                              uri: URL(string: "https://idp.example.com/help"))))
        #expect(error.description.contains("see https://idp.example.com/help"), "error_uri is kept")
    }

    @Test func aCodeWhoseLifetimePassesStopsThePolling() async throws {
        let clock = ManualClock()
        // expires_in 30, interval 5: polls at 5…30 s, then the next would be past the expiry.
        let (session, _) = scripted(Array(repeating: "authorization_pending", count: 10), clock: clock)
        let result = await run(session, clock: clock, steps: 6)
        guard case .failure(let error) = result else { Issue.record("the login succeeded"); return }
        #expect(error == LoginError(step: .devicePolling, error: .deviceCodeExpired))
        #expect(clock.sleeps.count == 6)
    }

    @Test func accessDeniedEndsTheLogin() async throws {
        let clock = ManualClock()
        let (session, _) = scripted(["access_denied"], clock: clock)
        let result = await run(session, clock: clock, steps: 1)
        guard case .failure(let error) = result else { Issue.record("the login succeeded"); return }
        #expect(error.step == .devicePolling)
        if case .serverError(code: "access_denied", _, _) = error.error {} else { Issue.record("\(error)") }
    }

    @Test func cancellingStopsThePolling() async throws {
        let clock = ManualClock()
        let (session, _) = scripted([], clock: clock)
        let login = Task { try await session.logIn(using: .deviceFlow(presenter: DeviceCodePresenter { _ in }, clock: clock)) }
        await clock.waitForSleepers()
        login.cancel()
        guard case .failure(let error) = Self.typed(await login.result) else { Issue.record("the login succeeded"); return }
        #expect(error == LoginError(step: .devicePolling, error: .cancelled))
    }

    @Test func aBadDeviceAnswerNamesTheStepAndTheField() async throws {
        let clock = ManualClock()
        let (session, _) = scripted([], deviceAnswer: #"{"device_code":"DC","verification_uri":"https://idp.example.com/activate","expires_in":30}"#, clock: clock)
        let result = await run(session, clock: clock, steps: 0)
        guard case .failure(let error) = result else { Issue.record("the login succeeded"); return }
        #expect(error == LoginError(step: .deviceAuthorization, error: .missingParameter("user_code")))
        let (rfc, _) = scripted([], deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://idp.example.com/activate"}"#, clock: clock)
        guard case .failure(let missing) = await run(rfc, clock: clock, steps: 0) else { Issue.record("the login succeeded"); return }
        #expect(missing == LoginError(step: .deviceAuthorization, error: .missingParameter("expires_in")), "RFC 8628 §3.2 requires it")
    }

    @Test func salesforcesVariantAsksTheTokenEndpoint() async throws {
        let clock = ManualClock()
        let requests = Recorder()
        let (session, _) = scripted(["authorization_pending"], deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://idp.example.com/activate","interval":5}"#,
                                    deviceAuthorizationURL: nil, clock: clock, requests: requests)
        #expect(try await run(session, clock: clock, steps: 2).get().0.accessToken == "AT")
        let bodies = requests.requests.withLock { $0 }.filter { $0.method == "POST" }.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
        #expect(bodies.first == "response_type=device_code&client_id=device-client&scope=api")
        #expect(bodies.dropFirst().allSatisfy { $0 == "grant_type=device&client_id=device-client&code=DC" })
        #expect(requests.requests.withLock { $0 }.first?.url.absoluteString == "https://idp.example.com/services/oauth2/token")
    }
}
