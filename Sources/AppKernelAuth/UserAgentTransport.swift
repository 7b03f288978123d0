import Foundation

/// A transport that gives every request the Mobile SDK's `User-Agent` (``UserAgent``) before
/// another transport sends it — as the SDK's network layer sets it on every REST and OAuth
/// request. A request that already names a `User-Agent` (in any case) keeps its own.
///
/// ```swift
/// let transport = UserAgentTransport(SocketTransport(), userAgent: UserAgent(appName: "Accounts", appVersion: "1.2(7)"))
/// ```
public struct UserAgentTransport: HTTPTransport {
    /// The transport that sends the requests.
    public let base: any HTTPTransport
    /// The agent the requests carry.
    public let userAgent: UserAgent
    private let text: String

    /// Creates a transport that sends through `base` with `userAgent`'s text.
    public init(_ base: any HTTPTransport, userAgent: UserAgent) {
        // Wrapping a wrapper replaces the agent rather than stacking two.
        self.base = (base as? UserAgentTransport)?.base ?? base
        self.userAgent = userAgent
        self.text = userAgent.string()
    }

    /// Sends `request` through ``base``, with a `User-Agent` header unless it has one.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await base.send(Self.tagged(request, text))
    }

    /// `request` with the `User-Agent` header `text`, unless it already has one.
    static func tagged(_ request: HTTPRequest, _ text: String) -> HTTPRequest {
        guard !request.headers.keys.contains(where: { $0.caseInsensitiveCompare("User-Agent") == .orderedSame }) else { return request }
        var request = request
        request.headers["User-Agent"] = text
        return request
    }
}
