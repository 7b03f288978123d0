import Testing
@testable import AppKernelModules

/// Builds a graph from a spec such as `"db; cache; api: db cache"` — each service with the
/// services it depends on, registered in that order.
func makeGraph(_ spec: String) -> ServiceGraph {
    var graph = ServiceGraph()
    for service in spec.split(separator: ";") {
        let parts = service.split(separator: ":", maxSplits: 1)
        let name = String(parts[0].split(separator: " ")[0])
        let dependencies = parts.count > 1 ? parts[1].split(separator: " ").map(String.init) : []
        #expect(graph.register(name, dependencies: dependencies) != nil, "\(name) registered once")
    }
    return graph
}

extension ServiceGraph {
    func slots(_ names: [String]) -> [Slot] { names.map { slot(named: $0)! } }
    func names(_ slots: [Slot]) -> [String] { slots.map(name(of:)) }
    func names(_ failures: [Failure]) -> [String] { failures.map { "\(name(of: $0.slot))<-\(name(of: $0.dependency))" } }
}

/// One row of a table: a graph, what is done to it, and what should come of it.
struct GraphCase: Sendable, CustomTestStringConvertible {
    var graph: String
    var names: [String] = []
    var unwanted: [String] = []
    var expected: [String]
    var testDescription: String { "\(graph) | \(names)" }
}

struct ServiceGraphTests {
    static let closures: [GraphCase] = [
        GraphCase(graph: "a: b; b: c; c", names: ["a"], expected: ["c", "b", "a"]),
        GraphCase(graph: "a: b c; b: d; c: d; d", names: ["a"], expected: ["d", "b", "c", "a"]),
        GraphCase(graph: "x; a: b; b", names: ["a", "x"], expected: ["b", "a", "x"]),
        GraphCase(graph: "api: db db; db", names: ["api"], expected: ["db", "api"]),
        GraphCase(graph: "a: b; b; c: b", names: ["a", "c"], expected: ["b", "a", "c"]),
        GraphCase(graph: "A: B; B: C; C: A", names: ["A"], expected: ["services depend on each other in a cycle: A → B → C → A"]),
        GraphCase(graph: "A: A", names: ["A"], expected: ["services depend on each other in a cycle: A → A"]),
        GraphCase(graph: "X: A; A: B; B: A", names: ["X"], expected: ["services depend on each other in a cycle: A → B → A"]),
        GraphCase(graph: "api: auth; auth: keychain", names: ["api"],
                  expected: ["'auth' depends on 'keychain', which is not registered (api → auth → keychain)"]),
    ]

    /// The closure lists dependencies first, or throws the cycle or missing name with its path.
    @Test(arguments: closures) func closure(_ row: GraphCase) {
        var graph = makeGraph(row.graph)
        do throws(ServiceError) {
            #expect(graph.names(try graph.closure(of: graph.slots(row.names))) == row.expected)
        } catch {
            #expect([error.description] == row.expected)
        }
    }

    static let readiness: [GraphCase] = [
        GraphCase(graph: "api: db; db", expected: ["api waiting", "db ready"]),
        GraphCase(graph: "api: db", expected: ["api idle"]),
        GraphCase(graph: "api: db db; db", expected: ["api waiting", "db ready"]),
        GraphCase(graph: "a; b: a x; c: b", expected: ["a ready", "b idle", "c waiting"]),
    ]

    /// Dependencies registered later are linked; a missing one leaves its dependent idle.
    @Test(arguments: readiness) func readinessAfterRegistration(_ row: GraphCase) {
        let graph = makeGraph(row.graph)
        let states = graph.registeredSlots.map { slot in
            let readiness: String = switch graph.readiness(of: slot) {
            case .idle: "idle"
            case .waiting: "waiting"
            case .ready: "ready"
            case .dependencyFailed(let dependency): "failed by \(graph.name(of: dependency))"
            }
            return "\(graph.name(of: slot)) \(readiness)"
        }
        #expect(states.sorted() == row.expected)
    }

    static let starts: [GraphCase] = [
        // `names`: the services started, in order; `expected`: what each made ready.
        GraphCase(graph: "db; cache; api: db cache", names: ["db", "cache"], expected: ["", "api"]),
        GraphCase(graph: "a: b c; b: d; c: d; d", names: ["d", "b", "c"], expected: ["c b", "", "a"]),
        GraphCase(graph: "db; api: db x; ui: db", names: ["db"], expected: ["ui"]),
        GraphCase(graph: "a; b: a; c: b; d: c", names: ["a", "b", "c"], expected: ["b", "c", "d"]),
    ]

    /// Starting a service returns the dependents whose last unstarted dependency it was.
    @Test(arguments: starts) func markStartedReturnsWhatBecameReady(_ row: GraphCase) {
        var graph = makeGraph(row.graph)
        let ready = row.names.map { name in
            let slot = graph.slot(named: name)!
            graph.markStarting(slot)
            return graph.names(graph.markStarted(slot)).joined(separator: " ")
        }
        #expect(ready == row.expected)
    }

    static let failures: [GraphCase] = [
        // `names`: the service that fails; `expected`: the dependents that fail in turn, `slot<-cause`.
        GraphCase(graph: "storage; keys; sync: keys storage; report: sync storage; app: report sync; lazy: storage",
                  names: ["storage"], unwanted: ["lazy"], expected: ["report<-storage", "app<-report", "sync<-storage"]),
        GraphCase(graph: "a; b: a; c: b; d: c", names: ["a"], expected: ["b<-a", "c<-b", "d<-c"]),
        GraphCase(graph: "a; b: a; c: b; d: c", names: ["a"], unwanted: ["b"], expected: []),
        GraphCase(graph: "a; b: a; c: a b", names: ["a"], unwanted: ["b"], expected: ["c<-a"]),
        GraphCase(graph: "a; b: a x", names: ["a"], expected: []),
        GraphCase(graph: "a; b; c: b a; d: c", names: ["a"], expected: ["c<-a", "d<-c"]),
    ]

    /// A failure fails every wanted dependent that can no longer start, depth first, each with
    /// the dependency that failed it.
    @Test(arguments: failures) func markFailedReturnsTheDependentsThatFail(_ row: GraphCase) {
        var graph = makeGraph(row.graph)
        let unwanted = Set(graph.slots(row.unwanted))
        let failed = graph.markFailed(graph.slot(named: row.names[0])!) { !unwanted.contains($0) }
        #expect(graph.names(failed) == row.expected)
        for failure in failed { #expect(graph.state(of: failure.slot) == .failed) }
        for slot in unwanted { #expect(graph.state(of: slot) == .registered) }
    }

    /// A dependent not wanted when its dependency failed fails when it is asked for later.
    @Test func aDependentAskedForAfterItsDependencyFailedIsToldWhichFailed() {
        var graph = makeGraph("a; b; c: b a")
        _ = graph.markFailed(graph.slot(named: "a")!) { _ in false }
        #expect(graph.readiness(of: graph.slot(named: "c")!) == .dependencyFailed(graph.slot(named: "a")!))
    }

    /// Unregistering drops a service's links (none is left behind) and leaves its dependents idle
    /// until it is registered again.
    @Test func unregisteringFreesLinksAndUnresolvesDependents() {
        var graph = makeGraph("db; api: db; ui: api db")
        let links = graph.linkCount
        for _ in 0..<3 {
            #expect(graph.unregister("api")?.state == .registered)
            #expect(graph.readiness(of: graph.slot(named: "ui")!) == .idle)
            #expect(graph.register("api", dependencies: ["db"]) != nil)
            #expect(graph.readiness(of: graph.slot(named: "ui")!) == .waiting)
        }
        #expect(graph.linkCount == links, "no link is left behind")
        #expect(graph.unregister("nope") == nil)
        #expect(graph.register("db", dependencies: []) == nil, "a name is registered once")
        #expect(graph.names(graph.registeredSlots) == ["db", "ui", "api"])
    }

    /// The closure records who first needed each service; the chain walks it back to the root.
    @Test func theNeededByChainWalksBackToTheRoot() throws {
        var graph = makeGraph("db; api: db; ui: api")
        let (db, api) = (graph.slot(named: "db")!, graph.slot(named: "api")!)
        _ = try graph.closure(of: graph.slots(["ui"]))
        #expect(graph.names(graph.chain(to: db)) == ["ui", "api", "db"])
        let walk = graph.neededByWalk(from: db) { $0 == api }
        #expect(walk == ServiceGraph.NeededByWalk(slots: [db], known: api))
        let version = graph.chainVersion
        _ = graph.unregister("api")
        #expect(graph.chainVersion != version, "chains built before are stale")
        #expect(graph.names(graph.chain(to: db)) == ["db"], "the walk stops at an unregistered service")
    }

    /// A walk that comes back to a service it passed (a cycle's "needed by" links) says so.
    @Test func aWalkThatClosesALoopSaysSo() {
        var graph = makeGraph("A: B; B: A")
        _ = try? graph.closure(of: graph.slots(["A"]))
        let walk = graph.neededByWalk(from: graph.slot(named: "A")!) { _ in false }
        #expect(walk.closesLoop)
        #expect(graph.names(walk.slots) == ["A", "B"])
    }

    /// A destroyed service may start again; its dependents wait for it again.
    @Test func aDestroyedServiceIsWaitedForAgain() {
        var graph = makeGraph("db; api: db")
        let (db, api) = (graph.slot(named: "db")!, graph.slot(named: "api")!)
        graph.markStarting(db)
        #expect(graph.markStarted(db) == [api])
        graph.markStarting(api)
        #expect(graph.markStarted(api) == [])
        graph.markDestroyed(api)
        graph.markDestroyed(db)
        #expect(graph.readiness(of: db) == .ready)
        #expect(graph.readiness(of: api) == .waiting)
        _ = graph.unregister("api")
        graph.markDestroyed(api)
        #expect(graph.state(of: api) == .unregistered, "a tombstone stays one")
    }

    /// Each service's dependents are listed the latest linked first, also after an
    /// unregistration and registrations that link them again.
    @Test func eachDependentsListKeepsItsOrder() {
        var graph = makeGraph("db; cache; api: db cache; ui: api db; jobs: cache db; late: missing")
        func lists() -> [[String]] { graph.registeredSlots.map { graph.names(graph.dependents(of: $0)) } }
        #expect(lists() == [["jobs", "ui", "api"], ["jobs", "api"], ["ui"], [], [], []])
        #expect(graph.names(graph.markStarted(graph.slot(named: "db")!)) == [])
        // Forward references, an unregistration and a registration that reuses freed links.
        _ = graph.unregister("api")
        #expect(graph.register("missing", dependencies: ["cache"]) != nil)
        #expect(graph.register("api", dependencies: ["cache", "db"]) != nil)
        let relinked = lists()
        #expect(relinked == [["api", "jobs", "ui"], ["api", "missing", "jobs"], [], [], [], ["late"], ["ui"]])
    }
}
