/// What a background fetch or a remote notification produced — UIKit's `UIBackgroundFetchResult`.
public enum BackgroundFetchResult: String, Sendable, Hashable, CaseIterable {
    /// New data was downloaded.
    case newData
    /// There was no new data. The default answer when the app does not handle the event.
    case noData
    /// The attempt failed, or the app did not answer before its deadline.
    case failed
}
