/// A paired watch app's request on its way through the pipeline — what UIKit hands
/// `application(_:handleWatchKitExtensionRequest:reply:)`. A `handle` hook that takes it over
/// (any stop) answers through ``reply``; on `.continue` listeners hear it and the delegate
/// answers (its default replies with an empty dictionary). If nobody answers within
/// ``ApplicationConfiguration/completionDeadline`` the system replies with an empty dictionary
/// and records a ``Diagnostic``.
@MainActor
public final class WatchKitExtensionRequest {
    /// What the watch app sent.
    public let userInfo: [String: JSONValue]
    /// Sends the answer to the watch app; the first call counts, later ones are ignored and reported.
    public let reply: @MainActor @Sendable ([String: JSONValue]) -> Void

    /// Creates a request.
    public init(userInfo: [String: JSONValue], reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) {
        self.userInfo = userInfo
        self.reply = reply
    }
}
