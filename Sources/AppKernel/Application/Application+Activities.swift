import AppKernelCore

extension Application {
    /// Observes the launch work that pipeline observers do not see step by step: each hook as it
    /// runs (of an application event, or of a phase of the BootLoader's or the SDK manager's
    /// engine), each service start (AppKernelModules), each launch gate the host waits for, and
    /// each failure among them — a hook, a service or a phase that threw, timed out or was
    /// refused, with its error's message. For instrumentation (AppKernelPOSIX's launch timeline);
    /// apps use listeners and hooks.
    ///
    /// The observer runs synchronously on the main actor, where the work starts and ends; read
    /// ``uptime`` for the time. While no observer is registered nothing is reported and nothing
    /// is built: each place that could report reads one flag. Keep the token: cancelling it or
    /// letting it go stops the reports at once.
    ///
    /// ```swift
    /// let token = app.addActivityObserver { event in
    ///     if case .failed(let activity, let message) = event { print(activity.name, message) }
    /// }
    /// ```
    public func addActivityObserver(_ handler: @escaping @MainActor (ActivityEvent) -> Void) -> ListenerToken {
        activities.add(handler)
    }
}
