/// The services' dependency graph as plain values — no tasks, no clock, no actor: the names and
/// their dependencies, the dependency closure of a start (with cycle and missing-name checks), and
/// Kahn's counters. ``ServiceRegistry`` drives it; every operation returns what it made ready or
/// failed, so the registry only schedules.
///
/// What the passes over all services read lives in flat arrays indexed by slot (registration
/// number): `nodes` (state in one byte, counters, DFS mark), `dependencySlots` (each service's
/// dependencies resolved to slots, `-1` while one is not registered) and `dependentEdges` (each
/// service's dependents as a linked list, links reused through a free list). Slots are never
/// reused — an unregistered service leaves a tombstone — so no link moves. Every pass is
/// iterative (explicit stacks, no recursion), and each visits an edge a bounded number of times.
struct ServiceGraph: Sendable {
    /// A service's registration number: its index in the graph's arrays.
    typealias Slot = Int

    /// Where a service is, in one byte (``ServiceState`` without the failure reason).
    enum State: UInt8, Sendable {
        case registered, starting, started, failed, destroyed
        /// Unregistered: the slot is a tombstone (slots are never reused, so indices stay valid).
        case unregistered
    }

    /// Whether a service can start now, as far as the graph knows (the registry also asks
    /// whether anything wants it).
    enum Readiness: Hashable, Sendable {
        /// It cannot be started: it is starting, started, failed or unregistered, or one of its
        /// dependencies is not registered.
        case idle
        /// A dependency has not started yet.
        case waiting
        /// Every dependency has started.
        case ready
        /// This dependency (the first failed one, in declaration order) failed: it cannot start.
        case dependencyFailed(Slot)
    }

    /// A dependent that failed because its dependency `dependency` had failed.
    struct Failure: Hashable, Sendable {
        var slot: Slot
        var dependency: Slot
    }

    /// A walk up the "needed by" links from a service (see ``neededByWalk(from:until:)``).
    struct NeededByWalk: Hashable, Sendable {
        /// The services walked, the starting one first.
        var slots: [Slot] = []
        /// Where the walk stopped because `until` accepted the service; `nil` otherwise.
        var known: Slot?
        /// Whether the walk stopped because it came back to a service it had passed.
        var closesLoop = false
    }

    /// The scheduling state of one service, kept with every other service's in one contiguous
    /// array, so the passes over thousands of services read a few dozen bytes each.
    private struct Node: Sendable {
        var state = State.registered
        /// Whether every dependency is registered (no `-1` among its dependency slots).
        var isResolved = false
        /// Whether it starts with the eager services (``ServiceStartMode/eager``).
        let startsEagerly: Bool
        /// The closure pass that last visited it (`visiting` or `visited` of that pass).
        var mark = 0
        /// How many resolved dependencies have not started: at zero (and with every dependency
        /// resolved) the service may start — checked without touching the dependencies.
        var unstartedDependencies = 0
        /// How many resolved dependencies have failed (a dependent of a failed one fails, too).
        var failedDependencies = 0
        /// The dependent whose start first needed this one (for error chains); `-1`: none.
        var neededBy = -1
        /// Its dependencies: `dependencySlots[firstDependency ..< firstDependency + dependencyCount]`.
        let firstDependency: Int
        let dependencyCount: Int
        /// The head of its list of dependents in `dependentEdges`; `-1`: none.
        var firstDependent = -1

        var dependencyRange: Range<Int> { firstDependency ..< firstDependency + dependencyCount }
    }

    /// One link in a service's list of dependents.
    private struct DependentEdge: Sendable {
        var dependent: Slot
        var next: Int
    }

    private var nodes: [Node] = []
    private var names: [String] = []
    /// Every service's dependency slots, each service's in one run, in declaration order.
    private var dependencySlots: [Slot] = []
    /// The dependencies' names, in the same places as `dependencySlots`.
    private var dependencyNames: [String] = []
    /// The dependents lists' links; freed links are reused through `freeEdge`.
    private var dependentEdges: [DependentEdge] = []
    private var freeEdge = -1
    /// The slot of each registered name.
    private var slots: [String: Slot] = [:]
    /// The services that name each dependency (registered or not yet), by slot.
    private var dependentsByName: [String: [Slot]] = [:]
    private var markGeneration = 0
    /// Changes whenever a "needed by" chain may have changed (a new link, an unregistration):
    /// what was built from the chains before is stale.
    private(set) var chainVersion = 0
    #if DEBUG
    /// The work done so far: edges, dependencies and "needed by" links visited. For tests that
    /// check the passes stay linear in the graph's size (DEBUG builds only).
    private(set) var work = 0
    #endif

    /// Counts `amount` units of work (DEBUG builds only).
    @inline(__always)
    private mutating func count(_ amount: Int = 1) {
        #if DEBUG
        work += amount
        #endif
    }

    // MARK: Registration

    /// Adds the service `name` needing `dependencies` (a name given twice counts once; names not
    /// registered yet are linked when they are). Its dependents registered earlier are linked to it.
    /// - Returns: Its slot; `nil` if the name is registered.
    mutating func register(_ name: String, dependencies: [String], startsEagerly: Bool = true) -> Slot? {
        guard slots[name] == nil else { return nil }
        var seen: Set<String> = []
        let unique = dependencies.filter { seen.insert($0).inserted }
        let slot = nodes.count
        nodes.append(Node(startsEagerly: startsEagerly, firstDependency: dependencySlots.count, dependencyCount: unique.count))
        names.append(name)
        slots[name] = slot
        for dependency in unique {
            dependencySlots.append(-1)
            dependencyNames.append(dependency)
            dependentsByName[dependency, default: []].append(slot)
        }
        resolve(slot)
        for dependent in dependentsByName[name] ?? [] where dependent != slot { resolve(dependent) }
        return slot
    }

    /// Removes the service `name`: its links are freed, its dependents no longer resolve it, its
    /// slot becomes a tombstone.
    /// - Returns: Its slot and the state it was in; `nil` if the name is not registered.
    mutating func unregister(_ name: String) -> (slot: Slot, state: State)? {
        guard let slot = slots.removeValue(forKey: name) else { return nil }
        let node = nodes[slot]
        for position in node.dependencyRange {
            count()
            dependentsByName[dependencyNames[position]]?.removeAll { $0 == slot }
            let linked = dependencySlots[position]
            if linked >= 0 { removeDependent(slot, from: linked) }
        }
        for dependent in dependents(of: slot) {
            for position in nodes[dependent].dependencyRange where dependencySlots[position] == slot {
                dependencySlots[position] = -1
            }
            removeDependent(dependent, from: slot)
            recount(dependent)
        }
        nodes[slot].state = .unregistered
        chainVersion += 1
        return (slot, node.state)
    }

    /// Links `slot`'s unresolved dependencies to the registered services, then recounts.
    private mutating func resolve(_ slot: Slot) {
        for position in nodes[slot].dependencyRange where dependencySlots[position] < 0 {
            count()
            guard let dependency = slots[dependencyNames[position]] else { continue }
            dependencySlots[position] = dependency
            addDependent(slot, to: dependency)
        }
        recount(slot)
    }

    /// Recounts `slot`'s unresolved, unstarted and failed dependencies.
    private mutating func recount(_ slot: Slot) {
        var resolved = true, unstarted = 0, failed = 0
        for dependency in dependencySlots[nodes[slot].dependencyRange] {
            guard dependency >= 0 else { resolved = false; continue }
            if nodes[dependency].state != .started { unstarted += 1 }
            if nodes[dependency].state == .failed { failed += 1 }
        }
        count(nodes[slot].dependencyCount)
        nodes[slot].isResolved = resolved
        nodes[slot].unstartedDependencies = unstarted
        nodes[slot].failedDependencies = failed
    }

    private mutating func addDependent(_ dependent: Slot, to dependency: Slot) {
        let link = DependentEdge(dependent: dependent, next: nodes[dependency].firstDependent)
        if freeEdge >= 0 {
            let reused = freeEdge
            freeEdge = dependentEdges[reused].next
            dependentEdges[reused] = link
            nodes[dependency].firstDependent = reused
        } else {
            dependentEdges.append(link)
            nodes[dependency].firstDependent = dependentEdges.count - 1
        }
    }

    private mutating func removeDependent(_ dependent: Slot, from dependency: Slot) {
        var previous = -1, edge = nodes[dependency].firstDependent
        while edge >= 0, dependentEdges[edge].dependent != dependent {
            count()
            previous = edge
            edge = dependentEdges[edge].next
        }
        guard edge >= 0 else { return }
        if previous >= 0 { dependentEdges[previous].next = dependentEdges[edge].next } else { nodes[dependency].firstDependent = dependentEdges[edge].next }
        dependentEdges[edge].next = freeEdge
        freeEdge = edge
    }

    // MARK: Queries

    /// The slot of a registered name.
    func slot(named name: String) -> Slot? { slots[name] }
    /// The name `slot` was registered with.
    func name(of slot: Slot) -> String { names[slot] }
    /// Where the service in `slot` is.
    func state(of slot: Slot) -> State { nodes[slot].state }
    /// The registered services' slots, in registration order.
    var registeredSlots: [Slot] { nodes.indices.filter { nodes[$0].state != .unregistered } }
    /// The registered services that start eagerly, in registration order.
    var eagerSlots: [Slot] { nodes.indices.filter { nodes[$0].startsEagerly && nodes[$0].state != .unregistered } }
    /// How many dependents' links are allocated, free ones included (links are reused).
    var edgeCapacity: Int { dependentEdges.count }

    /// Calls `body` with each resolved dependency of `slot`, in declaration order.
    func forEachDependency(of slot: Slot, _ body: (Slot) -> Void) {
        for position in nodes[slot].dependencyRange where dependencySlots[position] >= 0 { body(dependencySlots[position]) }
    }

    /// Calls `body` with each dependent of `slot`, the latest linked first.
    func forEachDependent(of slot: Slot, _ body: (Slot) -> Void) {
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            body(dependentEdges[edge].dependent)
            edge = dependentEdges[edge].next
        }
    }

    /// The slots of `slot`'s dependents, the latest linked first.
    func dependents(of slot: Slot) -> [Slot] {
        var result: [Slot] = []
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            result.append(dependentEdges[edge].dependent)
            edge = dependentEdges[edge].next
        }
        return result
    }

    // MARK: Closure

    /// The services `roots` need, dependencies before dependents; checks for missing
    /// dependencies and cycles (iteratively: chains may be long). Marks on the nodes replace a
    /// visited set; the walk follows the dependency slots, so it hashes nothing.
    /// - Parameter recordingChains: Note who first needed each service, for error chains (a
    ///   start does; a mere check does not).
    /// - Throws: ``ServiceError/Code/missingDependency`` or ``ServiceError/Code/cycle``, with the
    ///   path (`A → B → C → A`).
    mutating func closure(of roots: [Slot], recordingChains: Bool = true) throws(ServiceError) -> [Slot] {
        markGeneration += 2
        let visiting = markGeneration, visited = markGeneration + 1
        var ordered: [Slot] = []
        var stack: [(slot: Slot, next: Int)] = []
        for root in roots where nodes[root].mark < visiting {
            nodes[root].mark = visiting
            stack.append((root, 0))
            while let (slot, next) = stack.last {
                count()
                let range = nodes[slot].dependencyRange
                if next == 0, !nodes[slot].isResolved {
                    let missing = range.first { dependencySlots[$0] < 0 }.map { dependencyNames[$0] } ?? ""
                    throw ServiceError(code: .missingDependency, service: names[slot], path: stack.map { names[$0.slot] } + [missing], detail: missing)
                }
                guard next < range.count else {
                    nodes[slot].mark = visited
                    ordered.append(slot)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let dependency = dependencySlots[range.lowerBound + next]
                if recordingChains && nodes[dependency].neededBy < 0 {
                    nodes[dependency].neededBy = slot
                    chainVersion += 1
                }
                if nodes[dependency].mark == visiting {
                    let path = stack.map(\.slot)
                    let start = path.firstIndex(of: dependency) ?? 0
                    throw ServiceError(code: .cycle, service: names[dependency], path: path[start...].map { names[$0] } + [names[dependency]])
                }
                guard nodes[dependency].mark != visited else { continue }
                nodes[dependency].mark = visiting
                stack.append((dependency, 0))
            }
        }
        return ordered
    }

    /// Walks up the "needed by" links from `slot` (the dependent whose start first needed it, and
    /// so on), stopping before the first service `until` accepts, at one nothing needed, at an
    /// unregistered one, or where the walk comes back to a service it passed.
    mutating func neededByWalk(from slot: Slot, until isKnown: (Slot) -> Bool) -> NeededByWalk {
        var walk = NeededByWalk()
        var seen: Set<Slot> = []
        var current = slot
        while true {
            count()
            if isKnown(current) {
                walk.known = current
                break
            }
            walk.slots.append(current)
            seen.insert(current)
            let parent = nodes[current].neededBy
            guard parent >= 0, nodes[parent].state != .unregistered else { break }
            guard !seen.contains(parent) else {
                walk.closesLoop = true
                break
            }
            current = parent
        }
        return walk
    }

    /// Who needed the service in `slot`, back to the root: `root`, …, `slot`.
    mutating func chain(to slot: Slot) -> [Slot] {
        neededByWalk(from: slot) { _ in false }.slots.reversed()
    }

    // MARK: Kahn's counters

    /// Whether the service in `slot` can start now.
    func readiness(of slot: Slot) -> Readiness {
        let node = nodes[slot]
        guard node.state == .registered || node.state == .destroyed, node.isResolved else { return .idle }
        guard node.unstartedDependencies > 0 else { return .ready }
        guard node.failedDependencies > 0 else { return .waiting }
        let failed = dependencySlots[node.dependencyRange].first { nodes[$0].state == .failed } ?? slot
        return .dependencyFailed(failed)
    }

    /// The service in `slot` is starting (it must be ``Readiness/ready``).
    mutating func markStarting(_ slot: Slot) {
        nodes[slot].state = .starting
    }

    /// The service in `slot` has started.
    /// - Returns: The dependents whose last unstarted dependency it was and that are now
    ///   ``Readiness/ready``, in the order of its dependents list.
    mutating func markStarted(_ slot: Slot) -> [Slot] {
        nodes[slot].state = .started
        var ready: [Slot] = []
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            count()
            let dependent = dependentEdges[edge].dependent
            edge = dependentEdges[edge].next
            nodes[dependent].unstartedDependencies -= 1
            if nodes[dependent].unstartedDependencies == 0, readiness(of: dependent) == .ready { ready.append(dependent) }
        }
        return ready
    }

    /// The service in `slot` failed. Every dependent that `isWanted` accepts and that can no
    /// longer start fails in turn, and theirs, transitively — depth first, in the order of each
    /// dependents list, with an explicit stack: each edge is visited twice, with no recursion.
    /// - Returns: The dependents that failed, in the order they failed, each with the dependency
    ///   (its first failed one, in declaration order) that failed it.
    mutating func markFailed(_ slot: Slot, isWanted: (Slot) -> Bool) -> [Failure] {
        var failures: [Failure] = []
        // Each entry: a failed service and the next link of its dependents list to look at.
        var stack: [(slot: Slot, edge: Int)] = [(slot, setFailed(slot))]
        while let edge = stack.last?.edge {
            guard edge >= 0 else {
                stack.removeLast()
                continue
            }
            count()
            stack[stack.count - 1].edge = dependentEdges[edge].next
            let dependent = dependentEdges[edge].dependent
            guard isWanted(dependent), case .dependencyFailed(let dependency) = readiness(of: dependent) else { continue }
            count(nodes[dependent].dependencyCount)
            failures.append(Failure(slot: dependent, dependency: dependency))
            stack.append((dependent, setFailed(dependent)))
        }
        return failures
    }

    /// Marks `slot` failed and counts the failure in each of its dependents.
    /// - Returns: The head of its dependents list.
    private mutating func setFailed(_ slot: Slot) -> Int {
        nodes[slot].state = .failed
        addOne(to: \.failedDependencies, ofDependentsOf: slot)
        return nodes[slot].firstDependent
    }

    /// The service in `slot` was shut down: a started one's dependents wait for it again. An
    /// unregistered one stays a tombstone.
    mutating func markDestroyed(_ slot: Slot) {
        switch nodes[slot].state {
        case .unregistered: return
        case .started: addOne(to: \.unstartedDependencies, ofDependentsOf: slot)
        default: break
        }
        nodes[slot].state = .destroyed
    }

    /// Adds one to `counter` of each of `slot`'s dependents.
    private mutating func addOne(to counter: WritableKeyPath<Node, Int>, ofDependentsOf slot: Slot) {
        var edge = nodes[slot].firstDependent
        while edge >= 0 {
            count()
            nodes[dependentEdges[edge].dependent][keyPath: counter] += 1
            edge = dependentEdges[edge].next
        }
    }
}
