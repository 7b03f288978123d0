import Foundation
import AppKernel

extension URL {
    /// A URL from a literal known to be valid.
    static func literal(_ string: String) -> URL {
        guard let url = URL(string: string) else { preconditionFailure("invalid URL literal \(string)") }
        return url
    }
}

let sampleURL = URL.literal("myapp://item/42")
let sampleActivity = UserActivity(activityType: "com.example.view")
let sampleShortcut = ShortcutItem(type: "com.example.new", localizedTitle: "New")
let samplePayload: [String: JSONValue] = ["aps": ["content-available": 1]]
let sampleLocalNotification = LocalNotification(identifier: "n1", title: "Reminder", body: "Call Ada")
