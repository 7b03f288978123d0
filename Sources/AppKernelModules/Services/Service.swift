import AppKernel

/// A UI-less, stateful part of the app that lives for the whole process once started and can be
/// found by name — mPaaS's `DTService`. Only ``start()`` is required; it may be async.
@MainActor
public protocol Service: AnyObject {
    /// Starts the service (after the framework is initialised; apps may be started only after it).
    func start() async throws
    /// The service was created (before it starts).
    func didCreate()
    /// The process is terminating: release what must be released. Awaited, in reverse start order.
    func shutdown() async
    /// The service is about to be destroyed (after ``shutdown()``; once).
    func willDestroy()
}

extension Service {
    /// Does nothing.
    public func didCreate() {}
    /// Does nothing.
    public func shutdown() async {}
    /// Does nothing.
    public func willDestroy() {}
}

/// When a service starts.
public enum ServiceStartMode: Sendable, Hashable {
    /// At boot (`startServices`).
    case eager
    /// On the first lookup (``ServiceRegistry/service(named:)``), or when something that needs it starts.
    case lazy
    /// With its auto-start group, when the group is started.
    case group(String)
}

/// What a failing service does to the boot.
public enum ServiceFailurePolicy: Sendable, Hashable {
    /// The boot fails with an error naming the service and the chain that needed it.
    case failLaunch
    /// The boot goes on without it; it (and what needs it) is marked failed.
    case continueWithout
}

/// Where a service is.
public enum ServiceState: Sendable, Hashable {
    /// Registered, not started.
    case registered
    /// Starting.
    case starting
    /// Started.
    case started
    /// Failed to start (or a dependency failed); the reason.
    case failed(String)
    /// Shut down and destroyed.
    case destroyed
}
