public import Foundation

/// An activity handed over from elsewhere (Handoff, a universal link, a search result) —
/// Foundation's `NSUserActivity`, as a value.
public struct UserActivity: Sendable, Hashable {
    /// The activity type, e.g. `"NSUserActivityTypeBrowsingWeb"` or an app-defined reverse-DNS name.
    public var activityType: String
    /// The web page to continue, for browsing activities and universal links.
    public var webpageURL: URL?
    /// A title for the activity.
    public var title: String?
    /// App-defined information.
    public var userInfo: [String: JSONValue]

    /// The activity type of web-browsing activities (universal links).
    public static let browsingWebActivityType = "NSUserActivityTypeBrowsingWeb"

    /// Creates an activity.
    public init(activityType: String, webpageURL: URL? = nil, title: String? = nil,
                userInfo: [String: JSONValue] = [:]) {
        self.activityType = activityType
        self.webpageURL = webpageURL
        self.title = title
        self.userInfo = userInfo
    }
}
