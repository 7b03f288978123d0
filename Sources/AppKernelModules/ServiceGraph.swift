/// The services' dependency graph as plain values — no tasks, no clock, no actor: the names and
/// their dependencies, the dependency closure of a start (with cycle and missing-name checks), and
/// Kahn's counters. ``ServiceRegistry`` drives it; every operation returns what it made ready or
/// failed, so the registry only schedules.
///
/// What the passes over all services read lives in flat arrays indexed by slot (registration
/// number), split by how they are touched so that the ones read per edge in random order stay
/// small enough for the cache: `nodes` (state, flags, Kahn's counter and where the service's
/// dependents are in the index, 8 bytes), `marks` (DFS mark and "needed by" link, 8 bytes),
/// `dependencySlots` (each service's dependencies resolved to 4-byte slots, `-1` while one is
/// not registered, in one run per service, found through `dependencyOffsets`, 4 bytes per
/// service: runs are appended in slot order) and `dependentEdges` (each service's dependents as
/// a linked list of 12-byte links, reused through a free list), plus an index of the dependents
/// lists in CSR form (one targets array, each node holding where its run starts) built when a
/// start or shutdown covers enough of the graph to pay for it, so walking a service's
/// dependents reads one contiguous run instead of one link per dependent. A pass whose order
/// is known ahead (the registry's workers) can have what it will touch read a few batches
/// early (``readAhead(_:withDependencies:)``). Slots are never reused — an unregistered service
/// leaves a tombstone — so no link moves. Every pass is iterative (explicit stacks, no
/// recursion), and each visits an edge a bounded number of times.
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

    /// The scheduling state of one service that Kahn's passes read and write per edge, in random
    /// order, kept with every other service's in one contiguous array of 8-byte entries (800 KB
    /// for 100,000 services): the state in bits 0–2 of a word, the two flags in bits 3 and 4,
    /// Kahn's counter in bits 5–31 (a service has fewer than 2²⁶ dependencies: checked at
    /// registration), and where its run of dependents starts in the index — so that a started
    /// service's own state and where its dependents are come in one read.
    private struct Node: Sendable {
        private var bits: UInt32
        /// Where its run of dependents starts in `dependentTargets` (valid while the index is;
        /// the run ends where the next service's starts).
        var firstIndexedDependent: Int32 = 0

        init(startsEagerly: Bool) { bits = startsEagerly ? 1 << 4 : 0 }

        var state: State {
            get { State(rawValue: UInt8(truncatingIfNeeded: bits & 7)) ?? .unregistered }
            set { bits = (bits & ~7) | UInt32(newValue.rawValue) }
        }
        /// Whether every dependency is registered (no `-1` among its dependency slots).
        var isResolved: Bool {
            get { bits & 8 != 0 }
            set { bits = newValue ? bits | 8 : bits & ~8 }
        }
        /// Whether it starts with the eager services (``ServiceStartMode/eager``).
        var startsEagerly: Bool { bits & 16 != 0 }
        /// How many resolved dependencies have not started: at zero (and with every dependency
        /// resolved) the service may start — checked without touching the dependencies.
        var unstartedDependencies: Int32 {
            get { Int32(bitPattern: bits) >> 5 }
            set { bits = (bits & 31) | (UInt32(bitPattern: newValue) << 5) }
        }
    }

    /// What the closure pass reads per edge: its mark and the "needed by" link, 8 bytes.
    private struct Mark: Sendable {
        /// The closure pass that last visited it (`visiting` or `visited` of that pass).
        var mark: UInt32 = 0
        /// The dependent whose start first needed this one (for error chains); `-1`: none.
        var neededBy: Int32 = -1
    }

    /// What a service's failure and its list of dependents need, read once per service, not per
    /// edge (and not by a start or shutdown once the dependents are indexed).
    private struct Links: Sendable {
        /// The head of its list of dependents in `dependentEdges`; `-1`: none.
        var firstDependent = -1
        /// How many resolved dependencies have failed (a dependent of a failed one fails, too).
        var failedDependencies = 0
    }

    /// One link in a service's list of dependents, in 12 bytes (building the index streams
    /// through all of them).
    private struct DependentEdge: Sendable {
        private var dependentSlot: Int32
        private var dependencySlot: Int32
        private var nextLink: Int32

        init(dependent: Slot, dependency: Slot, next: Int) {
            dependentSlot = Int32(dependent)
            dependencySlot = Int32(dependency)
            nextLink = Int32(next)
        }

        var dependent: Slot { Slot(dependentSlot) }
        /// The service whose list it is in (the dependency); `-1` while the link is free.
        var dependency: Slot {
            get { Slot(dependencySlot) }
            set { dependencySlot = Int32(newValue) }
        }
        /// The next link in the list (or in the free list); `-1`: none.
        var next: Int {
            get { Int(nextLink) }
            set { nextLink = Int32(newValue) }
        }
    }

    private var nodes: [Node] = []
    private var marks: [Mark] = []
    private var links: [Links] = []
    private var names: [String] = []
    /// Every service's dependency slots, each service's in one run, in declaration order.
    private var dependencySlots: [Int32] = []
    /// Where each service's run of `dependencySlots` starts, and (one more) where the last one
    /// ends: the run of `slot` is at `dependencyOffsets[slot] ..< dependencyOffsets[slot + 1]`.
    private var dependencyOffsets: [Int32] = [0]
    /// The dependencies' names, in the same places as `dependencySlots`.
    private var dependencyNames: [String] = []
    /// The dependents lists' links; freed links are reused through `freeEdge`.
    private var dependentEdges: [DependentEdge] = []
    private var freeEdge = -1
    /// How many links are in use.
    private var edgeCount = 0
    /// Whether a freed link was ever reused: the links' order in `dependentEdges` is then no longer
    /// the order they were made in, and the index is built by walking the lists.
    private var edgesReordered = false
    /// The dependents lists in CSR form, valid while `dependentsIndexed`: the dependents of `slot`
    /// are `dependentTargets[indexedDependents(of: slot)]` — from its node's
    /// `firstIndexedDependent` to the next node's (or `dependentTargets.count`) — in the order of
    /// its list (the latest linked first). Any link made or freed invalidates it.
    private var dependentTargets: [Int32] = []
    private var dependentsIndexed = false
    /// The slot of each registered name.
    private var slots: [String: Slot] = [:]
    /// The registered services that name a dependency not registered, by that name, in slot
    /// order — linked when a service of that name registers.
    private var unresolved: [String: [Slot]] = [:]
    private var markGeneration: UInt32 = 0
    /// Changes whenever a "needed by" chain may have changed (a new link, an unregistration):
    /// what was built from the chains before is stale.
    private(set) var chainVersion = 0
    #if DEBUG
    /// The work done so far: edges, dependencies and "needed by" links visited. For tests that
    /// check the passes stay linear in the graph's size (DEBUG builds only).
    private(set) var work = 0
    /// How many times the dependents index was built (DEBUG builds only).
    private(set) var indexBuilds = 0
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
    /// Each name is hashed once (twice for `name`, and once more when something waits for it).
    /// - Returns: Its slot; `nil` if the name is registered.
    mutating func register(_ name: String, dependencies: [String], startsEagerly: Bool = true) -> Slot? {
        let slot = nodes.count
        guard Self.claim(&slots[name, default: -1], for: slot) else { return nil }
        let first = dependencySlots.count
        for (index, dependency) in dependencies.enumerated() where !Self.isRepeat(index, in: dependencies) {
            dependencySlots.append(-1)
            dependencyNames.append(dependency)
        }
        let end = dependencySlots.count
        // Slots and dependency positions are kept in 4 bytes: billions of them would not fit in
        // memory anyway.
        precondition(end < Int(Int32.max) && slot < Int(Int32.max) - 1 && end - first < 1 << 26, "too many services or dependencies")
        nodes.append(Node(startsEagerly: startsEagerly))
        marks.append(Mark())
        links.append(Links())
        dependencyOffsets.append(Int32(end))
        names.append(name)
        // A service linked to nothing keeps the index valid: it has no dependents yet.
        if dependentsIndexed { nodes[slot].firstIndexedDependent = Int32(dependentTargets.count) }
        var resolved = true, unstarted: Int32 = 0
        for position in first ..< end {
            count()
            let dependencyName = dependencyNames[position]
            guard let dependency = slots[dependencyName] else {
                resolved = false
                unresolved[dependencyName, default: []].append(slot)
                continue
            }
            dependencySlots[position] = Int32(dependency)
            addDependent(slot, to: dependency)
            if nodes[dependency].state != .started { unstarted += 1 }
            if nodes[dependency].state == .failed { links[slot].failedDependencies += 1 }
        }
        nodes[slot].isResolved = resolved
        nodes[slot].unstartedDependencies = unstarted
        if !unresolved.isEmpty, let waiting = unresolved.removeValue(forKey: name) {
            for dependent in waiting where dependent != slot { resolve(dependent) }
        }
        return slot
    }

    /// Stores `slot` in a new dictionary value (`-1`); `false` if the name already had one.
    private static func claim(_ value: inout Slot, for slot: Slot) -> Bool {
        guard value < 0 else { return false }
        value = slot
        return true
    }

    /// Whether `names[index]` appeared earlier in `names` (a short list is scanned; a long one
    /// would need a set, and gets one).
    private static func isRepeat(_ index: Int, in names: [String]) -> Bool {
        guard index > 0 else { return false }
        if names.count <= 16 { return names[..<index].contains(names[index]) }
        return Set(names[..<index]).contains(names[index])
    }

    /// Removes the service `name`: its links are freed, its dependents no longer resolve it, its
    /// slot becomes a tombstone.
    /// - Returns: Its slot and the state it was in; `nil` if the name is not registered.
    mutating func unregister(_ name: String) -> (slot: Slot, state: State)? {
        guard let slot = slots.removeValue(forKey: name) else { return nil }
        let node = nodes[slot]
        for position in dependencyRange(of: slot) {
            count()
            let linked = Slot(dependencySlots[position])
            if linked >= 0 {
                removeDependent(slot, from: linked)
            } else {
                unresolved[dependencyNames[position]]?.removeAll { $0 == slot }
                if unresolved[dependencyNames[position]]?.isEmpty == true { unresolved[dependencyNames[position]] = nil }
            }
        }
        let dependents = dependents(of: slot)
        for dependent in dependents {
            for position in dependencyRange(of: dependent) where dependencySlots[position] == Int32(slot) {
                dependencySlots[position] = -1
            }
            removeDependent(dependent, from: slot)
            recount(dependent)
        }
        // They wait for the name again, in slot order (the order a registration links them in).
        if !dependents.isEmpty { unresolved[name, default: []] = dependents.sorted() }
        nodes[slot].state = .unregistered
        chainVersion += 1
        return (slot, node.state)
    }

    /// Links `slot`'s unresolved dependencies to the registered services, then recounts.
    private mutating func resolve(_ slot: Slot) {
        for position in dependencyRange(of: slot) where dependencySlots[position] < 0 {
            count()
            guard let dependency = slots[dependencyNames[position]] else { continue }
            dependencySlots[position] = Int32(dependency)
            addDependent(slot, to: dependency)
        }
        recount(slot)
    }

    /// Recounts `slot`'s unresolved, unstarted and failed dependencies.
    private mutating func recount(_ slot: Slot) {
        var resolved = true, unstarted: Int32 = 0, failed = 0
        let range = dependencyRange(of: slot)
        for dependency in dependencySlots[range] {
            guard dependency >= 0 else { resolved = false; continue }
            if nodes[Int(dependency)].state != .started { unstarted += 1 }
            if nodes[Int(dependency)].state == .failed { failed += 1 }
        }
        count(range.count)
        nodes[slot].isResolved = resolved
        nodes[slot].unstartedDependencies = unstarted
        links[slot].failedDependencies = failed
    }

    private mutating func addDependent(_ dependent: Slot, to dependency: Slot) {
        let link = DependentEdge(dependent: dependent, dependency: dependency, next: links[dependency].firstDependent)
        edgeCount += 1
        dependentsIndexed = false
        if freeEdge >= 0 {
            let reused = freeEdge
            freeEdge = dependentEdges[reused].next
            dependentEdges[reused] = link
            links[dependency].firstDependent = reused
            edgesReordered = true
        } else {
            precondition(dependentEdges.count < Int(Int32.max), "too many dependencies")
            dependentEdges.append(link)
            links[dependency].firstDependent = dependentEdges.count - 1
        }
    }

    private mutating func removeDependent(_ dependent: Slot, from dependency: Slot) {
        var previous = -1, edge = links[dependency].firstDependent
        while edge >= 0, dependentEdges[edge].dependent != dependent {
            count()
            previous = edge
            edge = dependentEdges[edge].next
        }
        guard edge >= 0 else { return }
        if previous >= 0 { dependentEdges[previous].next = dependentEdges[edge].next } else { links[dependency].firstDependent = dependentEdges[edge].next }
        dependentEdges[edge].next = freeEdge
        dependentEdges[edge].dependency = -1
        freeEdge = edge
        edgeCount -= 1
        dependentsIndexed = false
    }

    // MARK: The dependents index

    /// Walks one service's dependents, from the index when it is valid, else along its list.
    private struct DependentCursor {
        /// Index mode: the next position in `dependentTargets` and the end; list mode: `end` is
        /// `-1` and `position` is the next link (`-1`: done).
        var position: Int
        let end: Int

        /// The next dependent, or `nil`.
        @inline(__always)
        mutating func next(in graph: ServiceGraph) -> Slot? {
            if end >= 0 {
                guard position < end else { return nil }
                defer { position += 1 }
                return Slot(graph.dependentTargets[position])
            }
            guard position >= 0 else { return nil }
            let edge = graph.dependentEdges[position]
            position = edge.next
            return edge.dependent
        }
    }

    /// A cursor over `slot`'s dependents, the latest linked first.
    @inline(__always)
    private func dependentCursor(of slot: Slot) -> DependentCursor {
        if dependentsIndexed {
            let run = indexedDependents(of: slot)
            return DependentCursor(position: run.lowerBound, end: run.upperBound)
        }
        return DependentCursor(position: links[slot].firstDependent, end: -1)
    }

    /// Builds the dependents index if it is stale and a pass about to walk `covered` services'
    /// lists pays for it (it covers at least a quarter of the graph): O(services + links). Smaller
    /// passes (a lazy lookup after each registration) walk the lists, so neither is quadratic.
    mutating func indexDependents(covering covered: Int) {
        guard !dependentsIndexed, covered * 4 >= nodes.count, nodes.count < Int(Int32.max), dependentEdges.count < Int(Int32.max) else { return }
        #if DEBUG
        indexBuilds += 1
        #endif
        count(nodes.count + edgeCount)
        var offsets = [Int32](repeating: 0, count: nodes.count + 1)
        var targets = [Int32](repeating: 0, count: edgeCount)
        if edgesReordered {
            // Links were reused: walk each list (random access per link, but rare).
            var position = 0
            for slot in nodes.indices {
                offsets[slot] = Int32(position)
                var edge = links[slot].firstDependent
                while edge >= 0 {
                    targets[position] = Int32(dependentEdges[edge].dependent)
                    position += 1
                    edge = dependentEdges[edge].next
                }
            }
            offsets[nodes.count] = Int32(position)
        } else {
            // Links sit in `dependentEdges` in the order they were made, so each list is its
            // links in reverse order of position: a counting sort by dependency, in two
            // sequential passes over the links — counts, then (after the runs' ends are summed
            // up) each link placed from the end of its run back, oldest first, so each run ends
            // up newest first and each offset at its run's start.
            for edge in dependentEdges where edge.dependency >= 0 { offsets[edge.dependency] += 1 }
            var end: Int32 = 0
            for slot in nodes.indices {
                end += offsets[slot]
                offsets[slot] = end
            }
            offsets[nodes.count] = end
            for edge in dependentEdges where edge.dependency >= 0 {
                offsets[edge.dependency] -= 1
                targets[Int(offsets[edge.dependency])] = Int32(edge.dependent)
            }
        }
        for slot in nodes.indices { nodes[slot].firstIndexedDependent = offsets[slot] }
        dependentTargets = targets
        dependentsIndexed = true
    }

    /// Where `slot`'s dependents are in `dependentTargets` (while the index is valid).
    @inline(__always)
    private func indexedDependents(of slot: Slot) -> Range<Int> {
        Int(nodes[slot].firstIndexedDependent) ..< (slot + 1 < nodes.count ? Int(nodes[slot + 1].firstIndexedDependent) : dependentTargets.count)
    }

    // MARK: Queries
    // The registry keeps the graph in a stored property: a query it calls that is not inlined gets
    // a copy of the whole graph (a retain and a release per array), so the queries are inlined.

    /// The slot of a registered name.
    @inline(__always)
    func slot(named name: String) -> Slot? { slots[name] }
    /// The name `slot` was registered with.
    @inline(__always)
    func name(of slot: Slot) -> String { names[slot] }
    /// Where the service in `slot` is.
    @inline(__always)
    func state(of slot: Slot) -> State { nodes[slot].state }
    /// How many slots there are, tombstones included.
    var slotCount: Int { nodes.count }
    /// The registered services' slots, in registration order.
    var registeredSlots: [Slot] { nodes.indices.filter { nodes[$0].state != .unregistered } }
    /// The registered services that start eagerly, in registration order.
    var eagerSlots: [Slot] { nodes.indices.filter { nodes[$0].startsEagerly && nodes[$0].state != .unregistered } }
    /// How many dependents' links are allocated, free ones included (links are reused).
    var edgeCapacity: Int { dependentEdges.count }

    /// Where `slot`'s dependencies are in `dependencySlots`.
    @inline(__always)
    private func dependencyRange(of slot: Slot) -> Range<Int> {
        Int(dependencyOffsets[slot]) ..< Int(dependencyOffsets[slot + 1])
    }

    /// Calls `body` with each resolved dependency of `slot`, in declaration order.
    @inline(__always)
    func forEachDependency(of slot: Slot, _ body: (Slot) -> Void) {
        for dependency in dependencySlots[dependencyRange(of: slot)] where dependency >= 0 { body(Slot(dependency)) }
    }

    /// Calls `body` with each dependent of `slot`, the latest linked first.
    @inline(__always)
    func forEachDependent(of slot: Slot, _ body: (Slot) -> Void) {
        var cursor = dependentCursor(of: slot)
        while let dependent = cursor.next(in: self) { body(dependent) }
    }

    /// The slots of `slot`'s dependents, the latest linked first.
    func dependents(of slot: Slot) -> [Slot] {
        var result: [Slot] = []
        forEachDependent(of: slot) { result.append($0) }
        return result
    }

    /// The services a read-ahead covers, by how far it has got with them (see
    /// ``readAhead(_:withDependencies:)``).
    struct ReadAhead: Sendable {
        /// The batch handed in this time: read now are their nodes (and, for shutdowns that
        /// overlap, where their runs of dependencies are).
        var first: [Slot] = []
        /// The batch handed in last time: read now are their runs (of dependents and, for
        /// shutdowns that overlap, dependencies).
        var second: [Slot] = []
        /// The dependents found in those runs last time: read now are their nodes.
        var dependents: [Int32] = []
        /// The dependents whose nodes were read last time.
        var counted: [Int32] = []
        /// Of `counted`, those that wait for at most one more dependency: the ones likely to be
        /// made ready soon (a start prepares them).
        var ready: [Slot] = []
        /// The resolved dependencies found in the runs read this time, when asked for.
        var dependencies: [Int32] = []
        /// What was read, summed, so that the reads are not optimised away.
        var sink = 0

        /// The batch handed in this time becomes the batch of last time; `first` is emptied for
        /// the next one.
        mutating func handOn() {
            swap(&first, &second)
            first.removeAll(keepingCapacity: true)
        }
    }

    /// Reads ahead of a pass that will start (or shut down) services in a known order, one step
    /// further for each batch on each call: the nodes of the batch handed in this time (which
    /// say where their runs of dependents are); the runs of the batch handed in last time (their
    /// dependents, and with `withDependencies` their dependencies, replace `stages.dependents`
    /// and `stages.dependencies`); the nodes of the dependents found last time; and, from the
    /// nodes read last time, which of those are likely to be made ready soon
    /// (`stages.ready`). Each step reads only what an earlier call brought into the cache, and
    /// no branch waits on a read that may miss, so the reads of all the steps miss together
    /// instead of one after the other. Only with the dependents index.
    mutating func readAhead(_ stages: inout ReadAhead, withDependencies: Bool) {
        guard dependentsIndexed else { return }
        var sink = stages.sink
        stages.ready.removeAll(keepingCapacity: true)
        for dependent in stages.counted where nodes[Int(dependent)].unstartedDependencies <= 1 { stages.ready.append(Slot(dependent)) }
        for dependent in stages.dependents { sink &+= Int(nodes[Int(dependent)].unstartedDependencies) }
        swap(&stages.counted, &stages.dependents)
        for slot in stages.first {
            sink &+= Int(nodes[slot].firstIndexedDependent) &+ Int(nodes[slot].unstartedDependencies)
            if withDependencies { sink &+= Int(dependencyOffsets[slot]) }
        }
        stages.dependents.removeAll(keepingCapacity: true)
        stages.dependencies.removeAll(keepingCapacity: true)
        for slot in stages.second {
            stages.dependents.append(contentsOf: dependentTargets[indexedDependents(of: slot)])
            if withDependencies { stages.dependencies.append(contentsOf: dependencySlots[dependencyRange(of: slot)]) }
        }
        stages.sink = sink
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
        if markGeneration >= UInt32.max - 2 {
            // Wrapping around: forget every mark (once per two billion passes).
            for slot in marks.indices { marks[slot].mark = 0 }
            markGeneration = 0
        }
        markGeneration += 2
        let visiting = markGeneration, visited = markGeneration + 1
        var ordered: [Slot] = []
        var stack: [(slot: Slot, next: Int)] = []
        for root in roots where marks[root].mark < visiting {
            marks[root].mark = visiting
            stack.append((root, 0))
            while let (slot, next) = stack.last {
                count()
                let range = dependencyRange(of: slot)
                if next == 0, !nodes[slot].isResolved {
                    let missing = range.first { dependencySlots[$0] < 0 }.map { dependencyNames[$0] } ?? ""
                    throw ServiceError(code: .missingDependency, service: names[slot], path: stack.map { names[$0.slot] } + [missing], detail: missing)
                }
                guard next < range.count else {
                    marks[slot].mark = visited
                    ordered.append(slot)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let dependency = Slot(dependencySlots[range.lowerBound + next])
                let mark = marks[dependency]
                if recordingChains && mark.neededBy < 0 {
                    marks[dependency].neededBy = Int32(slot)
                    chainVersion += 1
                }
                if mark.mark == visiting {
                    let path = stack.map(\.slot)
                    let start = path.firstIndex(of: dependency) ?? 0
                    throw ServiceError(code: .cycle, service: names[dependency], path: path[start...].map { names[$0] } + [names[dependency]])
                }
                guard mark.mark != visited else { continue }
                marks[dependency].mark = visiting
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
            let parent = Slot(marks[current].neededBy)
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
    @inline(__always)
    func readiness(of slot: Slot) -> Readiness {
        let node = nodes[slot]
        guard node.state == .registered || node.state == .destroyed, node.isResolved else { return .idle }
        guard node.unstartedDependencies > 0 else { return .ready }
        guard links[slot].failedDependencies > 0 else { return .waiting }
        let failed = dependencySlots[dependencyRange(of: slot)].first { nodes[Int($0)].state == .failed }.map(Slot.init) ?? slot
        return .dependencyFailed(failed)
    }

    /// The service in `slot` is starting (it must be ``Readiness/ready``).
    mutating func markStarting(_ slot: Slot) {
        nodes[slot].state = .starting
    }

    /// Marks the service in `slot` starting if it is ``Readiness/ready``.
    /// - Returns: Its readiness before.
    mutating func markStartingIfReady(_ slot: Slot) -> Readiness {
        let readiness = readiness(of: slot)
        if readiness == .ready { nodes[slot].state = .starting }
        return readiness
    }

    /// The service in `slot` has started.
    /// - Returns: The dependents whose last unstarted dependency it was and that are now
    ///   ``Readiness/ready``, in the order of its dependents list.
    mutating func markStarted(_ slot: Slot) -> [Slot] {
        var ready: [Slot] = []
        markStarted(slot, appendingReadyTo: &ready)
        return ready
    }

    /// The service in `slot` has started: appends to `ready` the dependents whose last unstarted
    /// dependency it was and that are now ``Readiness/ready``, in the order of its dependents
    /// list (the caller reuses one array for every start).
    mutating func markStarted(_ slot: Slot, appendingReadyTo ready: inout [Slot]) {
        nodes[slot].state = .started
        var cursor = dependentCursor(of: slot)
        while let dependent = cursor.next(in: self) {
            count()
            nodes[dependent].unstartedDependencies -= 1
            if nodes[dependent].unstartedDependencies == 0, readiness(of: dependent) == .ready { ready.append(dependent) }
        }
    }

    /// The service in `slot` failed. Every dependent that `isWanted` accepts and that can no
    /// longer start fails in turn, and theirs, transitively — depth first, in the order of each
    /// dependents list, with an explicit stack: each edge is visited twice, with no recursion.
    /// - Returns: The dependents that failed, in the order they failed, each with the dependency
    ///   (its first failed one, in declaration order) that failed it.
    mutating func markFailed(_ slot: Slot, isWanted: (Slot) -> Bool) -> [Failure] {
        var failures: [Failure] = []
        // Each entry: a failed service and where its dependents list goes on.
        var stack: [(slot: Slot, cursor: DependentCursor)] = [(slot, setFailed(slot))]
        while !stack.isEmpty {
            guard let dependent = stack[stack.count - 1].cursor.next(in: self) else {
                stack.removeLast()
                continue
            }
            count()
            guard isWanted(dependent), case .dependencyFailed(let dependency) = readiness(of: dependent) else { continue }
            count(dependencyRange(of: dependent).count)
            failures.append(Failure(slot: dependent, dependency: dependency))
            stack.append((dependent, setFailed(dependent)))
        }
        return failures
    }

    /// Marks `slot` failed and counts the failure in each of its dependents.
    /// - Returns: A cursor over its dependents.
    private mutating func setFailed(_ slot: Slot) -> DependentCursor {
        nodes[slot].state = .failed
        var cursor = dependentCursor(of: slot)
        while let dependent = cursor.next(in: self) {
            count()
            links[dependent].failedDependencies += 1
        }
        return dependentCursor(of: slot)
    }

    /// The service in `slot` was shut down: a started one's dependents wait for it again. An
    /// unregistered one stays a tombstone.
    mutating func markDestroyed(_ slot: Slot) {
        switch nodes[slot].state {
        case .unregistered: return
        case .started:
            var cursor = dependentCursor(of: slot)
            while let dependent = cursor.next(in: self) {
                count()
                nodes[dependent].unstartedDependencies += 1
            }
        default: break
        }
        nodes[slot].state = .destroyed
    }
}
