import Synchronization

/// Why services could not be registered or started. Names the service, and the path for cycles
/// and chains.
///
/// The errors of a failing start share what they name instead of copying it: a
/// `dependencyFailed` error refers to its ``cause`` (the failed dependency's error), and the
/// chain that needed a service is stored once for its registry, so a failing chain of n services
/// costs O(n) however long it is; ``description`` is built when asked.
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

    /// Where a registry's error finds its shared parts.
    struct Shared: Sendable {
        let log: ServiceFailureLog
        /// The chain that needed the service, in `log`; `nil`: the error's own path.
        var link: Int?
        /// The failure that caused this one, in `log`.
        let cause: Int?
    }

    /// What kind of problem.
    public var code: Code
    /// The service concerned.
    public var service: String
    /// The path: the cycle (`A → B → C → A`), or the chain that needed the service (`App → B → A`).
    public var path: [String] {
        get {
            guard let shared, let link = shared.link else { return ownPath }
            return shared.log.path(to: link)
        }
        set {
            ownPath = newValue
            shared?.link = nil
        }
    }
    /// The detail (the underlying error's text, the deadline; the failed dependency's name).
    public var detail: String
    /// For ``Code/dependencyFailed``: the failed dependency's error (itself `dependencyFailed`
    /// or the failure of the service that broke the chain); `nil` otherwise.
    public var cause: ServiceError? {
        guard let shared, let cause = shared.cause else { return nil }
        return shared.log.error(at: cause)
    }

    private var ownPath: [String]
    private var shared: Shared?

    /// Creates an error.
    public init(code: Code, service: String, path: [String] = [], detail: String = "") {
        self.code = code
        self.service = service
        self.ownPath = path
        self.detail = detail
    }

    /// Creates an error whose path and cause are kept in `shared`.
    init(code: Code, service: String, detail: String, shared: Shared) {
        self.init(code: code, service: service, detail: detail)
        self.shared = shared
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

    /// Equal code, service, path and detail, and equal causes (compared down the chain of
    /// causes in a loop; shared parts compare by identity).
    public static func == (lhs: ServiceError, rhs: ServiceError) -> Bool {
        var (left, right) = (lhs, rhs)
        while true {
            guard left.code == right.code, left.service == right.service, left.detail == right.detail, left.hasPath(of: right) else { return false }
            if let one = left.shared, let other = right.shared, one.log === other.log, one.cause == other.cause { return true }
            switch (left.cause, right.cause) {
            case (nil, nil): return true
            case let (one?, other?): (left, right) = (one, other)
            default: return false
            }
        }
    }

    /// Hashes the code, service, path and detail.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(service)
        hasher.combine(path)
        hasher.combine(detail)
    }

    private func hasPath(of other: ServiceError) -> Bool {
        if let one = shared, let other = other.shared, one.log === other.log, let link = one.link, link == other.link { return true }
        return path == other.path
    }
}

/// The failures of one ``ServiceRegistry`` and the chains that needed the failed services, each
/// stored once and shared by the ``ServiceError``s that name them: a failing chain of n services
/// keeps n links and n records, not n chains of names. Errors may be read on any thread, so the
/// log is guarded by a mutex.
final class ServiceFailureLog: Sendable {
    /// One service in a "needed by" chain; its parent is the service that needed it.
    private struct Link {
        let name: String
        let parent: Int
    }

    /// One failure.
    private struct Record {
        let code: ServiceError.Code
        let service: String
        let detail: String
        let link: Int?
        let cause: Int?
    }

    private struct Storage {
        var links: [Link] = []
        var records: [Record] = []
    }

    private let storage = Mutex(Storage())

    /// Appends `names` as a chain: the first one's parent is `parent` (`nil`: a root), each next
    /// one's parent the one before it.
    /// - Returns: The index of the first new link; the others follow it.
    func appendChain(_ names: [String], under parent: Int?) -> Int {
        storage.withLock { storage in
            let first = storage.links.count
            var parent = parent ?? -1
            for name in names {
                storage.links.append(Link(name: name, parent: parent))
                parent = storage.links.count - 1
            }
            return first
        }
    }

    /// The names from the root of the chain down to `link`.
    func path(to link: Int) -> [String] {
        storage.withLock { storage in
            var names: [String] = []
            var current = link
            while current >= 0 {
                names.append(storage.links[current].name)
                current = storage.links[current].parent
            }
            return names.reversed()
        }
    }

    /// Records a failure named by the chain at `link`, caused by the failure at `cause`.
    /// - Returns: Its index.
    func record(_ code: ServiceError.Code, service: String, detail: String, link: Int?, cause: Int?) -> Int {
        storage.withLock { storage in
            storage.records.append(Record(code: code, service: service, detail: detail, link: link, cause: cause))
            return storage.records.count - 1
        }
    }

    /// The error of the failure recorded at `index`.
    func error(at index: Int) -> ServiceError {
        let record = storage.withLock { $0.records[index] }
        return ServiceError(code: record.code, service: record.service, detail: record.detail,
                            shared: ServiceError.Shared(log: self, link: record.link, cause: record.cause))
    }
}
