/// A home-screen quick action — UIKit's `UIApplicationShortcutItem`.
public struct ShortcutItem: Sendable, Hashable {
    /// The app-defined action type, e.g. `"com.example.new-message"`.
    public var type: String
    /// The title shown to the user.
    public var localizedTitle: String
    /// The subtitle shown to the user, if any.
    public var localizedSubtitle: String?
    /// App-defined information.
    public var userInfo: [String: JSONValue]

    /// Creates a shortcut item.
    public init(type: String, localizedTitle: String, localizedSubtitle: String? = nil,
                userInfo: [String: JSONValue] = [:]) {
        self.type = type
        self.localizedTitle = localizedTitle
        self.localizedSubtitle = localizedSubtitle
        self.userInfo = userInfo
    }
}
