import Testing
import AppKernel
@testable import AppKernelModules
import AppKernelTesting
import TestSupport

/// A service that starts at once, or fails at once.
@MainActor final class InstantService: Service {
    let fails: Bool
    init(fails: Bool = false) { self.fails = fails }
    func start() async throws { if fails { throw StartFailure() } }
}

/// The shapes of the large graphs: a chain (each service needs the one before), or each needing
/// up to three earlier ones spread out (`i−1`, `i/2`, `i/3`, as in the benchmark).
enum GraphShape: String, Sendable, CaseIterable {
    case chain, spread

    func dependencies(of index: Int) -> [String] {
        guard index > 0 else { return [] }
        switch self {
        case .chain: return ["s\(index - 1)"]
        case .spread: return Set([index - 1, index / 2, index / 3]).sorted().map { "s\($0)" }
        }
    }
}

@MainActor
struct ServiceFailureTests {
    let hosts = KeptHosts()
    let log = CallLog()
    let clock = TestClock()

    func registry() throws -> ServiceRegistry {
        try hosts.context(clock: clock).services
    }

    /// Registers `count` services of `shape`, `s0` first; `s0` fails when `rootFails`.
    func register(_ count: Int, _ shape: GraphShape, policy: ServiceFailurePolicy, rootFails: Bool = true, in services: ServiceRegistry) {
        for index in 0..<count {
            services.register(named: "s\(index)", dependencies: shape.dependencies(of: index), failurePolicy: policy) {
                InstantService(fails: rootFails && index == 0)
            }
        }
    }

    @Test func everyFailureNamesTheChainThatNeededItAndItsCause() async throws {
        let services = try registry()
        services.register(named: "storage", failurePolicy: .continueWithout) { LoggingService("storage", log: self.log, failure: StartFailure()) }
        services.register(named: "keys") { LoggingService("keys", log: self.log) }
        services.register(named: "sync", dependencies: ["keys", "storage"], failurePolicy: .continueWithout) { LoggingService("sync", log: self.log) }
        services.register(named: "report", dependencies: ["sync", "storage"], failurePolicy: .continueWithout) { LoggingService("report", log: self.log) }
        services.register(named: "app", dependencies: ["report", "sync"], failurePolicy: .continueWithout) { LoggingService("app", log: self.log) }
        services.register(named: "lazy", dependencies: ["storage"], startMode: .lazy) { LoggingService("lazy", log: self.log) }
        try await services.startServices()
        #expect(services.startOrder == ["keys"])
        let reasons = ["storage", "sync", "report", "app"].map { name -> String in
            if case .failed(let reason)? = services.state(of: name) { reason } else { "\(name) not failed" }
        }
        #expect(reasons == [
            "the service 'storage' failed to start: disk full (needed by app → report → sync → storage)",
            "the service 'sync' could not start because 'storage' failed (app → report → sync)",
            "the service 'report' could not start because 'storage' failed (app → report)",
            "the service 'app' could not start because 'report' failed (app)",
        ])
        // Each dependencyFailed error refers to its cause, down to the start that threw.
        let app = try #require(services.failure(of: "app"))
        #expect(app.cause?.service == "report")
        #expect(app.cause?.cause == services.failure(of: "storage"))
        #expect(app.cause?.cause?.code == .startFailed)
        #expect(app.cause?.cause?.cause == nil)
        #expect(services.failure(of: "keys") == nil)
        #expect(services.state(of: "lazy") == .registered, "not wanted: not failed")
        let lookup = await #expect(throws: ServiceError.self) { _ = try await services.service(named: "lazy") }
        #expect(lookup?.description == "the service 'lazy' could not start because 'storage' failed (lazy)")
        #expect(services.failure(of: "lazy")?.cause?.service == "storage")
    }

    @Test func aFailLaunchFailureFailsLaterBootsAndLookupsAtOnce() async throws {
        let services = try registry()
        services.register(named: "db") { LoggingService("db", log: self.log, failure: StartFailure()) }
        services.register(named: "api", dependencies: ["db"]) { LoggingService("api", log: self.log) }
        services.register(named: "ui", dependencies: ["api"]) { LoggingService("ui", log: self.log) }
        let boot = await #expect(throws: ServiceError.self) { try await services.startServices() }
        #expect(boot?.description == "the service 'db' failed to start: disk full (needed by ui → api → db)")
        #expect(boot?.path == ["ui", "api", "db"])
        let again = "the service 'db' failed to start: the service 'db' failed to start: disk full (needed by ui → api → db) (needed by ui → api → db)"
        let reboot = await #expect(throws: ServiceError.self) { try await services.startServices() }
        #expect(reboot?.description == again)
        let lookup = await #expect(throws: ServiceError.self) { _ = try await services.service(named: "ui") }
        #expect(lookup?.description == again)
        #expect(services.state(of: "ui") == .failed("the service 'ui' could not start because 'api' failed (ui)"))
        #expect(services.failure(of: "api")?.description == "the service 'api' could not start because 'db' failed (ui → api)")
    }

    @Test func aTimedOutServicesDependentsFailWithItAsTheirCause() async throws {
        let services = try registry()
        services.register(named: "slow", failurePolicy: .continueWithout, deadline: .seconds(3)) {
            LoggingService("slow", log: self.log, delay: .seconds(60), clock: self.clock)
        }
        services.register(named: "feed", dependencies: ["slow"], failurePolicy: .continueWithout) { LoggingService("feed", log: self.log) }
        let boot = Task { try await services.startServices() }
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        try await boot.value
        let feed = try #require(services.failure(of: "feed"))
        #expect(feed.description == "the service 'feed' could not start because 'slow' failed (feed)")
        #expect(feed.cause?.code == .timedOut)
        #expect(feed.cause?.description == "the service 'slow' did not start within 3.0 seconds (needed by feed → slow)")
        #expect(!log.lines.contains("feed.start"))
    }

    @Test func errorsThatShareTheirPathsCompareAndHashByWhatTheyName() async throws {
        let services = try registry()
        register(3, .chain, policy: .continueWithout, in: services)
        try await services.startServices()
        var error = try #require(services.failure(of: "s2"))
        let plain = ServiceError(code: .dependencyFailed, service: "s2", path: ["s2"], detail: "s1")
        #expect(error.path == ["s2"])
        #expect(error == services.failure(of: "s2"))
        #expect(error != plain, "the shared one has a cause")
        #expect(Set([error, services.failure(of: "s2")!]).count == 1)
        error.path = ["elsewhere", "s2"]
        #expect(error.path == ["elsewhere", "s2"])
        #expect(error.description == "the service 's2' could not start because 's1' failed (elsewhere → s2)")
        #expect(error.cause == services.failure(of: "s1"), "its cause is kept")
    }

    /// A failing root of a 100,000-long chain: every dependent fails with `dependencyFailed`,
    /// in one pass with no recursion (the recursive pass overflowed the stack at a few thousand
    /// in a debug build, and every error copied the whole chain).
    @Test(arguments: [ServiceFailurePolicy.continueWithout, .failLaunch])
    func aFailingRootOfAHundredThousandLongChainFailsEveryDependent(policy: ServiceFailurePolicy) async throws {
        let count = 100_000
        let services = try registry()
        register(count, .chain, policy: policy, in: services)
        do throws(ServiceError) {
            try await services.startServices()
            #expect(policy == .continueWithout)
        } catch {
            #expect(policy == .failLaunch)
            #expect(error.code == .startFailed)
            #expect(error.service == "s0")
            let path = error.path
            #expect(path.count == count && path.first == "s\(count - 1)" && path.last == "s0", "needed by the whole chain")
        }
        #expect(services.startOrder.isEmpty)
        #expect(services.failure(of: "s0")?.code == .startFailed)
        var wrong: [String] = []
        for index in 1..<count {
            let failure = services.failure(of: "s\(index)")
            if failure?.code != .dependencyFailed || failure?.detail != "s\(index - 1)" { wrong.append("s\(index)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) dependents without dependencyFailed, first \(wrong.prefix(3))")
        let last = try #require(services.failure(of: "s\(count - 1)"))
        #expect(last.description == "the service 's\(count - 1)' could not start because 's\(count - 2)' failed (s\(count - 1))")
        // The causes lead back to the root, each shared, not copied.
        var depth = 0
        var cause = last.cause
        while let next = cause {
            depth += 1
            cause = next.cause
            if cause == nil { #expect(next.code == .startFailed && next.service == "s0") }
        }
        #expect(depth == count - 1)
    }

    /// After a failed chain of 20,000 services, asking each one's state and failure costs the
    /// same however deep it is in the chain: the failure log's steps (links appended and walked,
    /// records read) for all of them stay within a constant per service — the chain a
    /// description names is shortened to its ends, found without walking it.
    @Test func theStatesOfAFailedChainOfTwentyThousandAreListedInLinearWork() async throws {
        let count = 20_000
        let services = try registry()
        register(count, .chain, policy: .continueWithout, in: services)
        try await services.startServices()
        let before = services.failures.steps
        var failed = 0
        for index in 0..<count {
            if case .failed? = services.state(of: "s\(index)") { failed += 1 }
            if services.failure(of: "s\(index)")?.code == (index == 0 ? .startFailed : .dependencyFailed) { failed += 1 }
        }
        let steps = services.failures.steps - before
        #expect(failed == 2 * count)
        #expect(steps <= 20 * count, "\(steps) steps for \(count) services")
        #expect(services.state(of: "s0") == .failed("the service 's0' failed to start: disk full (needed by "
            + "s19999 → s19998 → s19997 → s19996 → s19995 → … 19990 more … → s4 → s3 → s2 → s1 → s0)"))
        #expect(services.state(of: "s19990") == .failed("the service 's19990' could not start because 's19989' failed "
            + "(s19999 → s19998 → s19997 → s19996 → s19995 → s19994 → s19993 → s19992 → s19991 → s19990)"), "ten names: in full")
        #expect(services.failure(of: "s1")?.path.count == count - 1, "the path keeps every name")
    }

    #if DEBUG
    /// The work of booting (registration, closure, Kahn's counters, failures and the chains they
    /// name), counted by the graph, grows linearly: twice the services, about twice the work.
    @Test(arguments: GraphShape.allCases, [true, false])
    func bootWorkGrowsLinearly(shape: GraphShape, rootFails: Bool) async throws {
        func work(_ count: Int) async throws -> Int {
            let services = try registry()
            register(count, shape, policy: .continueWithout, rootFails: rootFails, in: services)
            try await services.startServices()
            #expect(services.startOrder.count == (rootFails ? 0 : count))
            return services.graph.work
        }
        let small = try await work(10_000)
        let large = try await work(20_000)
        figure("boot work (\(shape), root \(rootFails ? "fails" : "starts")): 10,000 → \(small), 20,000 → \(large), ratio \(Double(large) / Double(small))")
        #expect(Double(large) <= 2.2 * Double(small))
    }
    #endif
}
