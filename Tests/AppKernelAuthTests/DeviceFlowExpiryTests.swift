import Foundation
import AppKernelCore
import Testing
@testable import AppKernelAuth

/// The device flow polls for as long as its code is valid, and sends Salesforce's requests by
/// default. Sources: RFC 8628 §3.2 (`expires_in`, `interval`) and §3.5; Salesforce Help "OAuth
/// 2.0 Device Flow for IoT Integration" (the code from the token endpoint with
/// `response_type=device_code`; polls with `grant_type=device` and `code`).
@Suite struct DeviceFlowExpiryTests {
    /// A token endpoint that answers `authorization_pending` to every poll, each answer taking
    /// `answerTime` on the clock (a slow network), and records when each poll was sent.
    final class PendingServer: Sendable {
        let clock: ManualClock
        let answerTime: Duration
        let deviceAnswer: String
        let polls = Locked<[(at: Duration, form: [String: String])]>([])
        let deviceRequests = Locked<[(url: URL, form: [String: String])]>([])

        init(clock: ManualClock, answerTime: Duration, deviceAnswer: String) {
            self.clock = clock
            self.answerTime = answerTime
            self.deviceAnswer = deviceAnswer
        }

        var transport: InProcessTransport {
            InProcessTransport { [self] request in
                let form = Dictionary(FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self)) ?? [], uniquingKeysWith: { $1 })
                if form["grant_type"] == nil {
                    deviceRequests.withLock { $0.append((request.url, form)) }
                    return HTTPResponse(status: 200, body: Data(deviceAnswer.utf8))
                }
                polls.withLock { $0.append((clock.now.offset, form)) }
                clock.advance(by: answerTime)
                return HTTPResponse(status: 400, body: Data(#"{"error":"authorization_pending","error_description":"pending"}"#.utf8))
            }
        }
    }

    /// Runs a device login, moving the clock to the end of each of `steps` sleeps.
    static func run(_ session: LoginSession, clock: ManualClock, steps: Int) async -> LoginError? {
        let login = Task { try await session.logIn(using: .deviceFlow(presenter: DeviceCodePresenter { _ in }, clock: clock)) }
        for _ in 0..<steps {
            await clock.waitForSleepers()
            clock.advance(by: clock.sleeps.last!)
        }
        guard case .failure(let error) = await login.result else { return nil }
        return error as? LoginError
    }

    static let config = OAuthConfig(clientID: "device-client", redirectURI: URL(string: "http://127.0.0.1/cb")!,
                                    loginHost: URL(string: "https://acme.my.salesforce.com")!, scopes: ["api", "refresh_token"])

    /// expires_in 3 and interval 1, each answer taking 300 ms: polls at 1, 2 and 3 s — the code
    /// is valid at each — and only then `deviceCodeExpired` (before the fix the poll at 3 s was
    /// never sent: the next poll was counted from the slow answer, 3.6 s > 3 s, after 2 s).
    @Test func aPollIsSentWheneverTheCodeIsStillValid() async throws {
        let clock = ManualClock()
        let server = PendingServer(clock: clock, answerTime: .milliseconds(300),
                                   deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://acme.my.salesforce.com/setup/connect","expires_in":3,"interval":1}"#)
        let error = await Self.run(LoginSession(config: Self.config, transport: server.transport), clock: clock, steps: 3)
        #expect(error == LoginError(step: .devicePolling, error: .deviceCodeExpired))
        #expect(server.polls.withLock { $0.map(\.at) } == [.seconds(1), .seconds(2), .seconds(3)])
    }

    /// Salesforce's form is the default: the code from the token endpoint, polls with
    /// `grant_type=device` and `code`.
    @Test func salesforcesDeviceRequestsAreTheDefault() async throws {
        let clock = ManualClock()
        let server = PendingServer(clock: clock, answerTime: .zero,
                                   deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://acme.my.salesforce.com/setup/connect","expires_in":2,"interval":1}"#)
        _ = await Self.run(LoginSession(config: Self.config, transport: server.transport), clock: clock, steps: 2)
        let request = try #require(server.deviceRequests.withLock { $0.first })
        #expect(request.url.absoluteString == "https://acme.my.salesforce.com/services/oauth2/token")
        #expect(request.form == ["response_type": "device_code", "client_id": "device-client", "scope": "api refresh_token"])
        let poll = try #require(server.polls.withLock { $0.first?.form })
        #expect(poll == ["grant_type": "device", "client_id": "device-client", "code": "DC"])
    }

    /// RFC 8628's form when the config names a device authorization endpoint.
    @Test func rfc8628sRequestsWithADeviceAuthorizationEndpoint() async throws {
        let clock = ManualClock()
        var config = Self.config
        config.deviceAuthorizationURL = URL(string: "https://acme.my.salesforce.com/device")
        let server = PendingServer(clock: clock, answerTime: .zero,
                                   deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://acme.my.salesforce.com/activate","expires_in":1,"interval":1}"#)
        _ = await Self.run(LoginSession(config: config, transport: server.transport), clock: clock, steps: 1)
        #expect(server.deviceRequests.withLock { $0.first?.url.path } == "/device")
        #expect(server.polls.withLock { $0.first?.form } == ["grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                                             "device_code": "DC", "client_id": "device-client"])
    }

    /// A slow answer past the next poll's time is followed by that poll at once; polls stay
    /// `interval` apart from one send to the next (RFC 8628 §3.5: at least `interval` between).
    @Test func pollsAreScheduledFromTheirSendTimesNotTheirAnswers() async throws {
        let clock = ManualClock()
        let server = PendingServer(clock: clock, answerTime: .milliseconds(1500),
                                   deviceAnswer: #"{"device_code":"DC","user_code":"U","verification_uri":"https://x.example/a","expires_in":4,"interval":1}"#)
        let error = await Self.run(LoginSession(config: Self.config, transport: server.transport), clock: clock, steps: 1)
        #expect(error == LoginError(step: .devicePolling, error: .deviceCodeExpired))
        // Sent at 1 (answer 2.5), 2.5 (next due 2: at once; answer 4), 4 (due 3.5: at once).
        #expect(server.polls.withLock { $0.map(\.at) } == [.seconds(1), .milliseconds(2500), .seconds(4)])
    }
}
