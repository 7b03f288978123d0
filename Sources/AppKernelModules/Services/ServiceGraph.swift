/// The services' dependency graph as a plain value: names, dependencies, the closure of a start and Kahn's
/// counters; ``ServiceRegistry`` schedules what it returns as ready or failed. Each service is a ``Node`` at
/// its slot (never reused: unregistering leaves a tombstone). Every pass is iterative, O(services + edges).
struct ServiceGraph: Sendable {
    /// A service's registration number: its index in ``nodes``.
    typealias Slot = Int
    /// Where a service is (``ServiceState`` without the failure reason; `unregistered`: a tombstone).
    enum State: Sendable { case registered, starting, started, failed, destroyed, unregistered }
    /// Whether a service can start now, as far as the graph knows: `idle` (starting, started, failed, unregistered,
    /// or a dependency is not registered), `waiting`, `ready`, or `dependencyFailed` (its first failed dependency).
    enum Readiness: Hashable, Sendable { case idle, waiting, ready, dependencyFailed(Slot) }
    /// A dependent that failed because its dependency `dependency` had failed.
    struct Failure: Hashable, Sendable { var slot, dependency: Slot }

    /// A walk up the "needed by" links (see ``neededByWalk(from:until:)``): the services walked, the
    /// first one first; where `until` stopped it; whether it stopped on coming back to a service.
    struct NeededByWalk: Hashable, Sendable {
        var slots: [Slot] = []
        var known: Slot?
        var closesLoop = false
    }

    /// One service: its dependencies' names (each once) and slots (`nil`: not registered); its
    /// dependents in link order; Kahn's counters of its dependencies not registered, not started and
    /// failed; the dependent whose start first needed it (for error chains); the last closure mark.
    struct Node: Sendable {
        let name: String
        let startsEagerly: Bool
        var state = State.registered
        let dependencyNames: [String]
        var dependencies: [Slot?]
        var dependents: [Slot] = []
        var unresolved = 0, unstarted = 0, failed = 0
        var neededBy: Slot?
        var mark = 0
    }

    /// Every service ever registered, by slot.
    private(set) var nodes: [Node] = []
    private var slots: [String: Slot] = [:]
    /// The services that name a dependency not registered, by that name, in slot order.
    private var waitingForName: [String: [Slot]] = [:]
    private var lastMark = 0
    /// Changes whenever a "needed by" chain may have changed: what was built from them is stale.
    private(set) var chainVersion = 0
    /// Edges, dependencies and "needed by" links visited, for tests that check the passes are linear.
    private(set) var work = 0

    // MARK: Registration

    /// Adds `name` needing `dependencies` (each once; one not registered yet is linked when it is).
    /// - Returns: Its slot; `nil` if the name is registered.
    mutating func register(_ name: String, dependencies: [String], startsEagerly: Bool = true) -> Slot? {
        guard slots[name] == nil else { return nil }
        let slot = nodes.count
        slots[name] = slot
        var seen: Set<String> = []
        let unique = dependencies.count < 2 ? dependencies : dependencies.filter { seen.insert($0).inserted }
        nodes.append(Node(name: name, startsEagerly: startsEagerly, dependencyNames: unique,
                          dependencies: Array(repeating: nil, count: unique.count)))
        for (index, dependency) in unique.enumerated() {
            work += 1
            if let target = slots[dependency] {
                link(slot, at: index, to: target)
            } else {
                nodes[slot].unresolved += 1
                waitingForName[dependency, default: []].append(slot)
            }
        }
        for dependent in waitingForName.removeValue(forKey: name) ?? [] {
            guard let index = nodes[dependent].dependencyNames.firstIndex(of: name) else { continue }
            link(dependent, at: index, to: slot)
            nodes[dependent].unresolved -= 1
        }
        return slot
    }

    /// Links `dependent`'s dependency at `index` to the service in `dependency`.
    private mutating func link(_ dependent: Slot, at index: Int, to dependency: Slot) {
        nodes[dependent].dependencies[index] = dependency
        nodes[dependency].dependents.append(dependent)
        let state = nodes[dependency].state
        if state != .started { nodes[dependent].unstarted += 1 }
        if state == .failed { nodes[dependent].failed += 1 }
    }

    /// Removes `name`: its dependents wait for the name again; its tombstone keeps its dependencies (for a shutdown).
    /// - Returns: Its slot and the state it was in; `nil` if the name is not registered.
    mutating func unregister(_ name: String) -> (slot: Slot, state: State)? {
        guard let slot = slots.removeValue(forKey: name) else { return nil }
        let node = nodes[slot]
        for (index, dependency) in node.dependencies.enumerated() {
            work += 1
            if let dependency {
                nodes[dependency].dependents.removeAll { $0 == slot }   // listed once: names are unique
            } else {
                let dependencyName = node.dependencyNames[index]
                waitingForName[dependencyName]?.removeAll { $0 == slot }
                if waitingForName[dependencyName]?.isEmpty == true { waitingForName[dependencyName] = nil }
            }
        }
        for dependent in node.dependents {
            if let index = nodes[dependent].dependencies.firstIndex(of: slot) { nodes[dependent].dependencies[index] = nil }
            recount(dependent)
        }
        // In slot order, the order a registration links them in.
        if !node.dependents.isEmpty { waitingForName[name] = node.dependents.sorted() }
        nodes[slot].dependents = []
        nodes[slot].state = .unregistered
        chainVersion += 1
        return (slot, node.state)
    }

    /// Recounts `slot`'s unresolved, unstarted and failed dependencies.
    private mutating func recount(_ slot: Slot) {
        let dependencies = nodes[slot].dependencies
        work += dependencies.count
        nodes[slot].unresolved = dependencies.count { $0 == nil }
        nodes[slot].unstarted = dependencies.count { $0.map { nodes[$0].state != .started } ?? false }
        nodes[slot].failed = dependencies.count { $0.map { nodes[$0].state == .failed } ?? false }
    }

    // MARK: Queries

    func slot(named name: String) -> Slot? { slots[name] }
    func name(of slot: Slot) -> String { nodes[slot].name }
    func state(of slot: Slot) -> State { nodes[slot].state }
    var slotCount: Int { nodes.count }   // tombstones included
    /// The registered services (all, or the eager ones), in registration order.
    var registeredSlots: [Slot] { nodes.indices.filter { nodes[$0].state != .unregistered } }
    var eagerSlots: [Slot] { nodes.indices.filter { nodes[$0].startsEagerly && nodes[$0].state != .unregistered } }
    /// How many dependency links there are between registered services.
    var linkCount: Int { nodes.reduce(0) { $0 + $1.dependents.count } }
    /// The registered dependencies of `slot`, in declaration order.
    func dependencies(of slot: Slot) -> [Slot] { nodes[slot].dependencies.compactMap { $0 } }
    /// The dependents of `slot`, the latest linked first.
    func dependents(of slot: Slot) -> [Slot] { nodes[slot].dependents.reversed() }

    // MARK: Closure

    /// The services `roots` need, dependencies before dependents, checked for missing names and cycles.
    /// - Parameter recordingChains: Note who first needed each service, for error chains (a start does).
    /// - Throws: ``ServiceError/Code/missingDependency`` or ``ServiceError/Code/cycle``, with its path (`A → B → A`).
    mutating func closure(of roots: [Slot], recordingChains: Bool = true) throws(ServiceError) -> [Slot] {
        let visiting = lastMark + 1, visited = lastMark + 2
        lastMark = visited
        var ordered: [Slot] = []
        var stack: [(slot: Slot, next: Int)] = []
        for root in roots where nodes[root].mark < visiting {
            nodes[root].mark = visiting
            stack.append((root, 0))
            while let (slot, next) = stack.last {
                work += 1
                if next == 0, nodes[slot].unresolved > 0 {
                    let node = nodes[slot]
                    let missing = zip(node.dependencyNames, node.dependencies).first { $0.1 == nil }?.0 ?? ""
                    throw ServiceError(code: .missingDependency, service: node.name,
                                       path: stack.map { name(of: $0.slot) } + [missing], detail: missing)
                }
                guard next < nodes[slot].dependencies.count, let dependency = nodes[slot].dependencies[next] else {
                    nodes[slot].mark = visited
                    ordered.append(slot)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                if recordingChains && nodes[dependency].neededBy == nil {
                    nodes[dependency].neededBy = slot
                    chainVersion += 1
                }
                if nodes[dependency].mark == visiting {
                    let path = stack.map(\.slot)
                    let start = path.firstIndex(of: dependency) ?? 0
                    throw ServiceError(code: .cycle, service: name(of: dependency),
                                       path: path[start...].map(name(of:)) + [name(of: dependency)])
                }
                guard nodes[dependency].mark != visited else { continue }
                nodes[dependency].mark = visiting
                stack.append((dependency, 0))
            }
        }
        return ordered
    }

    /// Walks up the "needed by" links from `slot`, stopping before the first service `until` accepts,
    /// at one nothing needed, at an unregistered one, or on coming back to a service it passed.
    mutating func neededByWalk(from slot: Slot, until isKnown: (Slot) -> Bool) -> NeededByWalk {
        var walk = NeededByWalk()
        var seen: Set<Slot> = [slot]
        var current = slot
        while true {
            work += 1
            if isKnown(current) {
                walk.known = current
                break
            }
            walk.slots.append(current)
            guard let parent = nodes[current].neededBy, nodes[parent].state != .unregistered else { break }
            guard seen.insert(parent).inserted else {
                walk.closesLoop = true
                break
            }
            current = parent
        }
        return walk
    }

    /// Who needed the service in `slot`, back to the root: `root`, …, `slot`.
    mutating func chain(to slot: Slot) -> [Slot] { neededByWalk(from: slot) { _ in false }.slots.reversed() }

    // MARK: Kahn's counters

    /// Whether the service in `slot` can start now.
    func readiness(of slot: Slot) -> Readiness {
        let state = nodes[slot].state
        guard state == .registered || state == .destroyed, nodes[slot].unresolved == 0 else { return .idle }
        guard nodes[slot].unstarted > 0 else { return .ready }
        guard nodes[slot].failed > 0 else { return .waiting }
        let failed = nodes[slot].dependencies.lazy.compactMap { $0 }.first { nodes[$0].state == .failed }
        return .dependencyFailed(failed ?? slot)
    }

    /// The service in `slot` is starting (it must be ``Readiness/ready``).
    mutating func markStarting(_ slot: Slot) { nodes[slot].state = .starting }

    /// The service in `slot` has started.
    /// - Returns: The dependents it made ``Readiness/ready`` (their last unstarted dependency), the latest linked first.
    mutating func markStarted(_ slot: Slot) -> [Slot] {
        nodes[slot].state = .started
        var ready: [Slot] = []
        for dependent in nodes[slot].dependents.reversed() {
            work += 1
            nodes[dependent].unstarted -= 1
            if nodes[dependent].unstarted == 0, readiness(of: dependent) == .ready { ready.append(dependent) }
        }
        return ready
    }

    /// The service in `slot` failed, and so does, transitively, every dependent `isWanted` accepts
    /// that can no longer start: depth first, the latest linked first, each edge visited twice.
    /// - Returns: The dependents that failed, in order, each with its first failed dependency.
    mutating func markFailed(_ slot: Slot, isWanted: (Slot) -> Bool) -> [Failure] {
        var failures: [Failure] = []
        setFailed(slot)
        // A failed service and how many of its dependents have been looked at.
        var stack: [(slot: Slot, done: Int)] = [(slot, 0)]
        while let (current, done) = stack.last {
            let dependents = nodes[current].dependents
            guard done < dependents.count else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].done += 1
            let dependent = dependents[dependents.count - 1 - done]
            work += 1
            guard isWanted(dependent), case .dependencyFailed(let dependency) = readiness(of: dependent) else { continue }
            failures.append(Failure(slot: dependent, dependency: dependency))
            setFailed(dependent)
            stack.append((dependent, 0))
        }
        return failures
    }

    /// Marks `slot` failed and counts the failure in each of its dependents.
    private mutating func setFailed(_ slot: Slot) {
        nodes[slot].state = .failed
        for dependent in nodes[slot].dependents {
            work += 1
            nodes[dependent].failed += 1
        }
    }

    /// The service in `slot` was shut down: a started one's dependents wait for it again (a tombstone stays).
    mutating func markDestroyed(_ slot: Slot) {
        guard nodes[slot].state != .unregistered else { return }
        if nodes[slot].state == .started {
            for dependent in nodes[slot].dependents {
                work += 1
                nodes[dependent].unstarted += 1
            }
        }
        nodes[slot].state = .destroyed
    }
}
