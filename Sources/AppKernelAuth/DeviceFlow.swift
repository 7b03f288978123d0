public import Foundation

/// What the user needs to approve a device login (RFC 8628 §3.2): a code to type at an
/// address. The device code itself is a credential and is not shown.
public struct DeviceAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// The code the user types (`WDJB-MJHT`).
    public var userCode: String
    /// Where the user types it.
    public var verificationURI: URL
    /// The address with the code already in it, when the server gives one (for a QR code).
    public var verificationURIComplete: URL?
    /// How long the codes are valid; `nil` when the server did not say.
    public var expiresIn: Duration?
    /// How long to wait between polls (5 s when the server did not say).
    public var interval: Duration
    /// The device code the polls send.
    let deviceCode: String

    /// Creates an authorization (for presenters' tests).
    public init(userCode: String, verificationURI: URL, verificationURIComplete: URL? = nil, expiresIn: Duration? = nil,
                interval: Duration = .seconds(5)) {
        self.init(userCode: userCode, verificationURI: verificationURI, verificationURIComplete: verificationURIComplete,
                  expiresIn: expiresIn, interval: interval, deviceCode: "")
    }

    init(userCode: String, verificationURI: URL, verificationURIComplete: URL?, expiresIn: Duration?, interval: Duration, deviceCode: String) {
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
        self.deviceCode = deviceCode
    }

    /// "open <verification URI> and enter <user code>".
    public var description: String { "open \(verificationURI.absoluteString) and enter \(userCode)" }
}

/// Shows a device login's user code and address to the user.
public struct DeviceCodePresenter: Sendable {
    private let handler: @Sendable (DeviceAuthorization) async -> Void

    /// Creates a presenter that calls `present` once, before polling starts.
    public init(_ present: @escaping @Sendable (DeviceAuthorization) async -> Void) { handler = present }

    /// Shows `authorization`.
    public func present(_ authorization: DeviceAuthorization) async { await handler(authorization) }

    /// Prints the code and the address on standard error.
    public static var console: DeviceCodePresenter {
        DeviceCodePresenter { authorization in
            var text = "To log in, open \(authorization.verificationURI.absoluteString) and enter the code \(authorization.userCode)\n"
            if let complete = authorization.verificationURIComplete { text += "(or open \(complete.absoluteString))\n" }
            FileHandle.standardError.write(Data(text.utf8))
        }
    }
}

/// The device authorization grant (RFC 8628) against `config`: the RFC's own requests when the
/// config names a ``OAuthConfig/deviceAuthorizationURL``, Salesforce's variant otherwise (the
/// device code is asked of the token endpoint with `response_type=device_code`, and polled with
/// `grant_type=device` and `code`).
struct DeviceFlowClient: Sendable {
    let config: OAuthConfig
    let transport: any HTTPTransport

    private var tokens: TokenClient { TokenClient(config: config, transport: transport) }

    /// Asks for a device code (RFC 8628 §3.1–3.2).
    func requestAuthorization() async throws(OAuthError) -> DeviceAuthorization {
        var parameters = [("client_id", config.clientID)]
        if !config.scopes.isEmpty { parameters.append(("scope", config.scopes.joined(separator: " "))) }
        let url: URL
        if let endpoint = config.deviceAuthorizationURL {
            url = endpoint
        } else {
            url = config.tokenURL
            parameters.insert(("response_type", "device_code"), at: 0)
        }
        let fields = try await tokens.post(url, parameters)
        func required(_ name: String) throws(OAuthError) -> String {
            guard let value = fields[name], !value.isEmpty else { throw .missingParameter(name) }
            return value
        }
        func seconds(_ name: String) throws(OAuthError) -> Duration? {
            guard let text = fields[name] else { return nil }
            guard let value = Double(text), value >= 0, value.isFinite else { throw .malformedParameter(name, reason: "not a number of seconds") }
            return .milliseconds(Int64(value * 1000))
        }
        let deviceCode = try required("device_code")
        let userCode = try required("user_code")
        // RFC 8628 names it verification_uri; some servers still send the draft's verification_url.
        guard let verificationText = fields["verification_uri"] ?? fields["verification_url"] else { throw .missingParameter("verification_uri") }
        guard let verification = URL(string: verificationText), verification.scheme != nil else {
            throw .malformedParameter("verification_uri", reason: "not a URL")
        }
        let expiresIn = try seconds("expires_in")
        if config.deviceAuthorizationURL != nil, expiresIn == nil { throw .missingParameter("expires_in") }
        return DeviceAuthorization(userCode: userCode, verificationURI: verification,
                                   verificationURIComplete: fields["verification_uri_complete"].flatMap(URL.init(string:)),
                                   expiresIn: expiresIn, interval: try seconds("interval") ?? .seconds(5), deviceCode: deviceCode)
    }

    /// Polls the token endpoint until the user approves (RFC 8628 §3.4–3.5), as long as the
    /// code is valid: every poll whose time is not past the code's expiry is sent.
    ///
    /// Polls are scheduled from the previous poll's scheduled time (`interval` apart, longer
    /// after `slow_down` or a connection failure), not from when its answer arrived: the time
    /// answers take does not push the later polls out of the code's lifetime. An answer that
    /// arrives after the next poll's time is followed by that poll at once, and a poll sent a
    /// whole interval late starts the schedule again from its own time. No poll is sent after
    /// the code's expiry.
    /// - Parameters:
    ///   - authorization: The device code and its lifetime.
    ///   - clock: The clock the polls wait on.
    ///   - issuedAt: When the device code was asked for: its lifetime runs from there (the
    ///     server's runs from a moment later, so no poll is sent to an expired code); the
    ///     clock's present time when `nil`.
    /// - Throws: ``OAuthError/serverError(code:description:uri:)`` for `access_denied`,
    ///   `expired_token` and any other refusal; ``OAuthError/deviceCodeExpired`` when no poll
    ///   is left before the code's `expires_in` passes; ``OAuthError/cancelled``.
    func poll<C: Clock>(_ authorization: DeviceAuthorization, clock: C, issuedAt: C.Instant? = nil) async throws(OAuthError) -> Credentials
    where C.Duration == Duration {
        let parameters: [(String, String)] = config.deviceAuthorizationURL == nil
            ? [("grant_type", "device"), ("client_id", config.clientID), ("code", authorization.deviceCode)]
            : [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", authorization.deviceCode), ("client_id", config.clientID)]
        var interval = authorization.interval
        let start = issuedAt ?? clock.now
        let expiry = authorization.expiresIn.map { start.advanced(by: $0) }
        var next = clock.now.advanced(by: interval)
        while true {
            if let expiry, next > expiry { throw .deviceCodeExpired }
            do { try await clock.sleep(until: next, tolerance: nil) } catch { throw .cancelled }
            let now = clock.now
            if let expiry, now > expiry { throw .deviceCodeExpired }
            // On its time (a clock's jitter, an answer a little late): the next is counted from
            // the time it was due, so lateness does not add up. Late by a whole interval (a
            // slow answer): from now.
            let sent = now < next.advanced(by: interval) ? next : now
            do {
                let fields = try await tokens.post(config.tokenURL, parameters)
                return try Credentials(oauthParameters: fields)
            } catch {
                switch error {
                case .serverError(code: "authorization_pending", _, _):
                    break
                case .serverError(code: "slow_down", _, _):
                    interval += .seconds(5)
                case .transport, .timedOut:
                    interval *= 2   // §3.5: back off after a connection failure
                default:
                    throw error
                }
            }
            next = sent.advanced(by: interval)
        }
    }
}
