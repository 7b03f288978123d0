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

/// Why services could not be registered or started. Names the service, and the path for cycles
/// and chains.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// A name is registered twice.
        case duplicate
        /// No service has this name.
        case unknown
        /// A dependency is not registered.
        case missingDependency
        /// Services depend on each other in a circle.
        case cycle
        /// A service's start threw.
        case startFailed
        /// A service did not start within its deadline.
        case timedOut
        /// The whole boot did not finish within its deadline.
        case bootTimedOut
        /// A dependency failed, so the service could not start.
        case dependencyFailed
    }

    /// What kind of problem.
    public var code: Code
    /// The service concerned.
    public var service: String
    /// The path: the cycle (`A → B → C → A`), or the chain that needed the service (`App → B → A`).
    public var path: [String]
    /// The detail (the underlying error's text, the deadline).
    public var detail: String

    /// Creates an error.
    public init(code: Code, service: String, path: [String] = [], detail: String = "") {
        self.code = code
        self.service = service
        self.path = path
        self.detail = detail
    }

    /// What went wrong, where, and the path.
    public var description: String {
        let chain = path.joined(separator: " → ")
        switch code {
        case .duplicate: return "a service named '\(service)' is already registered"
        case .unknown: return "no service named '\(service)' is registered"
        case .missingDependency: return "'\(service)' depends on '\(detail)', which is not registered (\(chain))"
        case .cycle: return "services depend on each other in a cycle: \(chain)"
        case .startFailed: return "the service '\(service)' failed to start: \(detail) (needed by \(chain))"
        case .timedOut: return "the service '\(service)' did not start within \(detail) (needed by \(chain))"
        case .bootTimedOut: return "the services did not all start within \(detail); still starting: \(service)"
        case .dependencyFailed: return "the service '\(service)' could not start because '\(detail)' failed (\(chain))"
        }
    }
}
