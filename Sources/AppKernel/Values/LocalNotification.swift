/// A notification the app scheduled itself — UIKit's `UILocalNotification` (the API mPaaS's
/// framework interface pre-handles), as a value.
public struct LocalNotification: Sendable, Hashable {
    /// The app's identifier for the notification.
    public var identifier: String
    /// The title shown to the user.
    public var title: String?
    /// The text shown to the user.
    public var body: String?
    /// The category, which decides the actions offered with it.
    public var categoryIdentifier: String?
    /// App-defined information.
    public var userInfo: [String: JSONValue]

    /// Creates a local notification.
    public init(identifier: String, title: String? = nil, body: String? = nil, categoryIdentifier: String? = nil,
                userInfo: [String: JSONValue] = [:]) {
        self.identifier = identifier
        self.title = title
        self.body = body
        self.categoryIdentifier = categoryIdentifier
        self.userInfo = userInfo
    }
}
