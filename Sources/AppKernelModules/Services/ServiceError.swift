import AppKernelCore

/// Why services could not be registered or started. Names the service, and the path for cycles
/// and chains.
///
/// The errors of a failing start share what they name instead of copying it: a
/// `dependencyFailed` error refers to its ``cause`` (the failed dependency's error), and the
/// chain that needed a service is stored once for its registry, so a failing chain of n services
/// costs O(n) however long it is; ``description`` is built when asked, in time bounded by a
/// constant: a chain of more than ten names is written as its first five and last five with the
/// count of those left out between them (``path`` has them all).
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

    /// What went wrong, where, and the path (a path of more than ten names shortened to its
    /// first five and last five: `a → b → c → d → e → … 90 more … → v → w → x → y → z`).
    public var description: String {
        let chain = if let shared, let link = shared.link { shared.log.chainText(to: link) } else { Self.chainText(ownPath) }
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

    /// How many names of a chain a description writes out at each end when it shortens it.
    static let namesAtEachEnd = 5

    /// `path` joined with arrows, shortened when longer than twice ``namesAtEachEnd``.
    static func chainText(_ path: [String]) -> String {
        let shown = namesAtEachEnd
        guard path.count > 2 * shown else { return path.joined(separator: " → ") }
        return chainText(first: Array(path.prefix(shown)), omitted: path.count - 2 * shown, last: Array(path.suffix(shown)))
    }

    /// A shortened chain: `first → … n more … → last`.
    static func chainText(first: [String], omitted: Int, last: [String]) -> String {
        (first + ["… \(omitted) more …"] + last).joined(separator: " → ")
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
        /// How many names its chain has, from the root down to it.
        let depth: Int
        /// The link at depth ``ServiceError/namesAtEachEnd`` on its chain (itself, when the chain
        /// is no deeper): a shortened description starts from there, without walking the chain.
        let head: Int
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
        var steps = 0
    }

    private let storage = Locked(Storage())

    /// Appends `names` as a chain: the first one's parent is `parent` (`nil`: a root), each next
    /// one's parent the one before it.
    /// - Returns: The index of the first new link; the others follow it.
    func appendChain(_ names: [String], under parent: Int?) -> Int {
        storage.withLock { storage in
            let first = storage.links.count
            var parent = parent ?? -1
            for name in names {
                let index = storage.links.count
                let depth = parent < 0 ? 1 : storage.links[parent].depth + 1
                let head = depth <= ServiceError.namesAtEachEnd ? index : storage.links[parent].head
                storage.links.append(Link(name: name, parent: parent, depth: depth, head: head))
                parent = index
            }
            storage.steps += names.count
            return first
        }
    }

    /// The work the log has done — links appended and walked — for tests that check a
    /// failure's description costs the same however long its chain is.
    var steps: Int { storage.withLock { $0.steps } }

    /// The names from the root of the chain down to `link`.
    func path(to link: Int) -> [String] {
        storage.withLock { storage in Self.names(upFrom: link, count: .max, in: &storage).reversed() }
    }

    /// The chain down to `link` as a description writes it (see ``ServiceError/chainText(_:)``):
    /// at most ten names, found from the link and its chain's head, in O(1).
    func chainText(to link: Int) -> String {
        storage.withLock { storage in
            let shown = ServiceError.namesAtEachEnd
            let depth = storage.links[link].depth
            guard depth > 2 * shown else {
                return Self.names(upFrom: link, count: depth, in: &storage).reversed().joined(separator: " → ")
            }
            let last = Self.names(upFrom: link, count: shown, in: &storage).reversed()
            let first = Self.names(upFrom: storage.links[link].head, count: shown, in: &storage).reversed()
            return ServiceError.chainText(first: Array(first), omitted: depth - 2 * shown, last: Array(last))
        }
    }

    /// Up to `count` names from `link` up towards the root, `link`'s first.
    private static func names(upFrom link: Int, count: Int, in storage: inout Storage) -> [String] {
        var names: [String] = []
        var current = link
        while current >= 0, names.count < count {
            names.append(storage.links[current].name)
            current = storage.links[current].parent
        }
        storage.steps += names.count
        return names
    }

    /// Records a failure named by the chain at `link`, caused by the failure at `cause`.
    /// - Returns: Its index.
    func record(_ code: ServiceError.Code, service: String, detail: String, link: Int?, cause: Int?) -> Int {
        storage.withLock { storage in
            storage.steps += 1
            storage.records.append(Record(code: code, service: service, detail: detail, link: link, cause: cause))
            return storage.records.count - 1
        }
    }

    /// The error of the failure recorded at `index`.
    func error(at index: Int) -> ServiceError {
        let record = storage.withLock { storage in
            storage.steps += 1
            return storage.records[index]
        }
        return ServiceError(code: record.code, service: record.service, detail: record.detail,
                            shared: ServiceError.Shared(log: self, link: record.link, cause: record.cause))
    }
}
