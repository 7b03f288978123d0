/// A piece of launch work that is neither a pipeline step nor a phase's start or end: a hook, a
/// service's start, a launch gate — reported to activity observers
/// (``Application/addActivityObserver(_:)``) for launch timelines and traces.
public struct Activity: Sendable, Hashable {
    /// What kind of work it is.
    public enum Kind: String, Sendable, Hashable {
        /// One hook: of an application event, or of a phase of a phase engine.
        case hook
        /// A service's start (AppKernelModules' `ServiceRegistry`).
        case service
        /// A launch gate the host waits for (``Application/addLaunchGate(named:_:)``).
        case gate
        /// A phase of a phase engine: reported only when it fails (its start and end reach the
        /// pipeline observers as ``PipelineStage/phases(_:)``).
        case phase
    }

    /// What kind of work it is.
    public var kind: Kind
    /// Its name: a hook's `<point>.<stage>:<label or File.swift:line>`
    /// (`didFinishLaunching.before:warmCache`), a service's or gate's name, a phase's
    /// `<engine>.<phase>` (`bootLoader.setupWindow`).
    public var name: String

    /// Creates an activity.
    public init(kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }
}

/// What an activity observer hears: an activity started, ended, or failed (instead of ending).
public enum ActivityEvent: Sendable, Hashable {
    /// The activity started.
    case started(Activity)
    /// The activity ended.
    case ended(Activity)
    /// The activity failed — it threw, timed out or was refused — with its error's message.
    case failed(Activity, message: String)
}

/// The activity observers of one application, held by it and by the hook registries whose hooks
/// run under it. Reporting costs nothing while nobody observes: each place that reports first
/// checks ``isObserved`` (one read), and builds no ``Activity`` (no string, no clock read) when
/// it is `false`.
@MainActor
package final class ActivitySink: Registrar {
    private final class Registration {
        let handler: @MainActor (ActivityEvent) -> Void
        init(_ handler: @escaping @MainActor (ActivityEvent) -> Void) { self.handler = handler }
    }

    private var observers: [Registration] = []
    /// The hook registries that report here, told when the first observer comes and the last goes.
    private var registries: [WeakRegistry] = []
    private struct WeakRegistry { weak var registry: HookRegistry? }

    package init() {}

    /// `registry` reports its hooks here (``HookRegistry/activities``).
    func remember(_ registry: HookRegistry) {
        registries.removeAll { $0.registry == nil || $0.registry === registry }
        registries.append(WeakRegistry(registry: registry))
    }

    /// `registry` no longer reports here.
    func forget(_ registry: HookRegistry) {
        registries.removeAll { $0.registry == nil || $0.registry === registry }
    }

    /// Tells the registries that observers came or went; released after the access ends (a
    /// registry's change may reach this sink again).
    private func observationChanged() {
        let registries = registries
        for entry in registries { entry.registry?.activitiesObservationChanged() }
    }

    /// Whether anyone observes.
    package var isObserved: Bool { !observers.isEmpty }

    /// Tells every observer, in registration order (an observer added meanwhile hears the next).
    package func report(_ event: ActivityEvent) {
        for observer in observers { observer.handler(event) }
    }

    func add(_ handler: @escaping @MainActor (ActivityEvent) -> Void) -> ListenerToken {
        let registration = Registration(handler)
        observers.append(registration)
        if observers.count == 1 { observationChanged() }
        return ListenerToken(registration: registration, registrar: self)
    }

    package func cancelRegistration(_ registration: AnyObject?) {
        let removed = observers   // released after the access to `observers` has ended
        observers.removeAll { $0 === registration }
        if observers.isEmpty && !removed.isEmpty { observationChanged() }
        withExtendedLifetime(removed) {}
    }
}
