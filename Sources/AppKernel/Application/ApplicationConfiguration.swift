/// Settings that UIKit reads from Info.plist or fixes by policy, made explicit.
///
/// ```swift
/// let app = Application(delegate: AppDelegate(), clock: clock,
///                       configuration: ApplicationConfiguration(usesScenes: false))
/// ```
public struct ApplicationConfiguration: Sendable, Hashable {
    /// Whether the app uses scenes (UIKit: an `UIApplicationSceneManifest` in Info.plist).
    /// Without scenes, the application delegate gets the foreground/background callbacks and the
    /// URL, activity and shortcut-item callbacks. Default `true`.
    public var usesScenes: Bool
    /// Whether more than one scene may be connected at once (`UIApplicationSupportsMultipleScenes`).
    /// Default `true`.
    public var supportsMultipleScenes: Bool
    /// How long background tasks may run once the app is in the background before their
    /// expiration handlers run. iOS gives about 30 seconds. Default 30 s.
    public var backgroundTaskAllowance: Duration
    /// How long a backgrounded app with no background task keeps running before it is suspended.
    /// iOS gives about 5 seconds. Default 5 s.
    public var suspensionGracePeriod: Duration
    /// How long the app has to call the completion handler of a remote notification, a
    /// background fetch, a quick action or a watch app's request. After it the system answers for
    /// the app (`.failed`, `false`, an empty reply) and ignores a later call. iOS gives 30
    /// seconds. Default 30 s.
    public var completionDeadline: Duration
    /// A synchronous hook or BootLoader phase that runs longer than this is reported as a
    /// ``Diagnostic`` (`slowHook`) with its name and duration; `nil` turns the check off.
    /// Default 100 ms. This is the starting value of the application's
    /// ``HookRegistry/slowHookBudget`` (`app.hooks.slowHookBudget`), which can change it later.
    public var slowHookBudget: Duration?

    /// Creates a configuration; every value defaults to what iOS does.
    public init(usesScenes: Bool = true, supportsMultipleScenes: Bool = true,
                backgroundTaskAllowance: Duration = .seconds(30),
                suspensionGracePeriod: Duration = .seconds(5),
                completionDeadline: Duration = .seconds(30),
                slowHookBudget: Duration? = .milliseconds(100)) {
        self.slowHookBudget = slowHookBudget
        self.usesScenes = usesScenes
        self.supportsMultipleScenes = supportsMultipleScenes
        self.backgroundTaskAllowance = backgroundTaskAllowance
        self.suspensionGracePeriod = suspensionGracePeriod
        self.completionDeadline = completionDeadline
    }
}
