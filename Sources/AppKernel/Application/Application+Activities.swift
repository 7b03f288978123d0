/// Something that took time on the application's clock — a service's start, a launch gate's wait
/// — told to whoever draws a timeline of the launch (a process host's `LaunchTimeline`). Phases
/// and the pipeline's steps are told through ``Application/addPipelineObserver(_:)``; this is for
/// work the pipeline does not see.
public struct Activity: Sendable, Hashable {
    /// What ran (the service's or the gate's name).
    public var name: String
    /// What kind of work it was (`service`, `gate`; `failure` for a phase that failed — named
    /// `<engine>.<phase>`, at the moment it failed).
    public var category: String
    /// When it started, on the application's clock.
    public var start: Duration
    /// When it ended.
    public var end: Duration
    /// Why it failed, or `nil` when it did not.
    public var failure: String?

    /// Creates an activity.
    public init(name: String, category: String, start: Duration, end: Duration, failure: String? = nil) {
        self.name = name
        self.category = category
        self.start = start
        self.end = end
        self.failure = failure
    }
}

extension Application {
    /// Adds an observer of ``Activity``s. Work that reports them reads the clock only while one
    /// is registered, so an app nobody draws pays nothing.
    /// - Returns: The token; cancelling or dropping it removes the observer.
    public func addActivityObserver(_ handler: @escaping @MainActor (Activity) -> Void) -> ListenerToken {
        activityObservers.add(handler)
    }

    /// Whether anyone hears ``Activity``s: read it before timing work, to time nothing otherwise.
    public var observesActivities: Bool { activityObservers.count > 0 }

    /// Tells every activity observer that `activity` took place (modules built on the kernel — the
    /// services of AppKernelModules — report their work here).
    public func reportActivity(_ activity: Activity) {
        activityObservers.notify(activity)
    }
}
