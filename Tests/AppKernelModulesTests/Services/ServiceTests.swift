import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

/// A service that logs its life and, optionally, waits on the test clock or fails.
@MainActor final class LoggingService: Service {
    let name: String
    let log: CallLog
    var delay: Duration?
    var clock: TestClock?
    var failure: (any Error)?
    init(_ name: String, log: CallLog, delay: Duration? = nil, clock: TestClock? = nil, failure: (any Error)? = nil) {
        self.name = name
        self.log = log
        self.delay = delay
        self.clock = clock
        self.failure = failure
    }
    func didCreate() { log.lines.append("\(name).created") }
    func start() async throws {
        log.lines.append("\(name).start")
        if let delay, let clock { try await clock.sleep(for: delay) }
        if let failure { throw failure }
        log.lines.append("\(name).started")
    }
    func shutdown() async { log.lines.append("\(name).shutdown") }
    func willDestroy() { log.lines.append("\(name).destroy") }
}

struct StartFailure: Error, CustomStringConvertible { var description: String { "disk full" } }

@MainActor
struct ServiceRegistryTests {
    let hosts = KeptHosts()
    let log = CallLog()
    let clock = TestClock()

    func context() throws -> Context {
        try hosts.context(clock: clock)
    }

    @Test func dependenciesStartFirstAndIndependentServicesStartTogether() async throws {
        let context = try context()
        let services = context.services
        services.register(named: "db") { LoggingService("db", log: self.log, delay: .seconds(2), clock: self.clock) }
        services.register(named: "cache") { LoggingService("cache", log: self.log, delay: .seconds(1), clock: self.clock) }
        services.register(named: "api", dependencies: ["db", "cache"]) { LoggingService("api", log: self.log) }
        let boot = Task { try await services.startServices() }
        try await clock.waitForSleepers(2)
        #expect(log.lines.filter { $0.hasSuffix(".start") }.sorted() == ["cache.start", "db.start"], "both at once")
        await clock.advance(by: .seconds(1))
        #expect(!log.lines.contains("api.start"))
        await clock.advance(by: .seconds(1))
        try await boot.value
        #expect(services.startOrder == ["cache", "db", "api"])
        #expect(log.lines.firstIndex(of: "api.start")! > log.lines.firstIndex(of: "db.started")!)
        #expect(clock.now.offset == .seconds(2), "the critical path, not the sum")
        try await context.servicesReady()
    }

    @Test func cyclesAndMissingDependenciesAreReportedWithTheirPathBeforeAnythingStarts() async throws {
        let services = try context().services
        services.register(named: "A", dependencies: ["B"]) { LoggingService("A", log: self.log) }
        services.register(named: "B", dependencies: ["C"]) { LoggingService("B", log: self.log) }
        services.register(named: "C", dependencies: ["A"]) { LoggingService("C", log: self.log) }
        let cycle = await #expect(throws: ServiceError.self) { try await services.startServices() }
        #expect(cycle?.code == .cycle)
        #expect(cycle?.description == "services depend on each other in a cycle: A → B → C → A")
        #expect(log.lines.isEmpty)
        let other = try context().services
        other.register(named: "api", dependencies: ["auth"]) { LoggingService("api", log: self.log) }
        other.register(named: "auth", dependencies: ["keychain"]) { LoggingService("auth", log: self.log) }
        let missing = await #expect(throws: ServiceError.self) { try await other.startServices() }
        #expect(missing?.description == "'auth' depends on 'keychain', which is not registered (api → auth → keychain)")
        #expect(log.lines.isEmpty)
    }

    @Test func aLazyServiceStartsOnceHoweverManyLookupsRace() async throws {
        let services = try context().services
        var made = 0
        services.register(named: "geo", startMode: .lazy) {
            made += 1
            return LoggingService("geo", log: self.log, delay: .seconds(1), clock: self.clock)
        }
        try await services.startServices()
        #expect(services.state(of: "geo") == .registered, "lazy: not started at boot")
        #expect(made == 0)
        #expect(services.findService(named: "geo") != nil, "the first use makes it (and begins its start)")
        let lookups = (0..<5).map { _ in
            Task { @MainActor in ObjectIdentifier(try await services.service(named: "geo")) }
        }
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        var found: [ObjectIdentifier] = []
        for lookup in lookups { found.append(try await lookup.value) }
        #expect(made == 1)
        #expect(log.lines.filter { $0 == "geo.start" }.count == 1)
        #expect(Set(found).count == 1)
        let started = try #require(services.findService(named: "geo"))
        #expect(ObjectIdentifier(started) == found[0])
    }

    @Test func groupsStartWhenAskedInOrder() async throws {
        let services = try context().services
        services.register(named: "core") { LoggingService("core", log: self.log) }
        services.register(named: "feed", startMode: .group("home")) { LoggingService("feed", log: self.log) }
        services.register(named: "ads", startMode: .group("later")) { LoggingService("ads", log: self.log) }
        try await services.startServices(groups: ["home"])
        #expect(services.startOrder == ["core", "feed"])
        #expect(services.state(of: "ads") == .registered)
        try await services.startServices(groups: ["later"])
        #expect(services.startOrder == ["core", "feed", "ads"])
    }

    @Test func aFailLaunchServiceFailsTheBootNamingTheChain() async throws {
        let services = try context().services
        services.register(named: "storage") { LoggingService("storage", log: self.log, failure: StartFailure()) }
        services.register(named: "sync", dependencies: ["storage"]) { LoggingService("sync", log: self.log) }
        let error = await #expect(throws: ServiceError.self) { try await services.startServices() }
        #expect(error?.code == .startFailed)
        #expect(error?.service == "storage")
        #expect(error?.description == "the service 'storage' failed to start: disk full (needed by sync → storage)")
        if case .failed? = services.state(of: "sync") {} else { Issue.record("\(String(describing: services.state(of: "sync")))") }
        await #expect(throws: ServiceError.self) { try await services.servicesReady() }
    }

    @Test func aContinueWithoutServiceIsMarkedFailedAndTheBootGoesOn() async throws {
        let services = try context().services
        services.register(named: "analytics", failurePolicy: .continueWithout) { LoggingService("analytics", log: self.log, failure: StartFailure()) }
        services.register(named: "reports", dependencies: ["analytics"], failurePolicy: .continueWithout) { LoggingService("reports", log: self.log) }
        services.register(named: "core") { LoggingService("core", log: self.log) }
        try await services.startServices()
        #expect(services.startOrder == ["core"])
        if case .failed(let reason)? = services.state(of: "analytics") { #expect(reason.contains("disk full")) } else { Issue.record("not failed") }
        if case .failed(let reason)? = services.state(of: "reports") { #expect(reason.contains("because 'analytics' failed")) } else { Issue.record("not failed") }
        #expect(!log.lines.contains("reports.start"))
    }

    @Test func startDeadlinesRunOnTheVirtualClock() async throws {
        let services = try context().services
        services.register(named: "slow", deadline: .seconds(3)) { LoggingService("slow", log: self.log, delay: .seconds(60), clock: self.clock) }
        let boot = Task { try await services.startServices() }
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        let result = await boot.result
        guard case .failure(let error as ServiceError) = result else { Issue.record("\(result)"); return }
        #expect(error.code == .timedOut)
        #expect(error.description == "the service 'slow' did not start within 3.0 seconds (needed by slow)")
        let other = try context().services
        other.defaultStartDeadline = nil
        other.bootDeadline = .seconds(10)
        other.register(named: "forever") { LoggingService("forever", log: self.log, delay: .seconds(3_600), clock: self.clock) }
        let second = Task { try await other.startServices() }
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(10))
        let secondResult = await second.result
        guard case .failure(let bootError as ServiceError) = secondResult else { Issue.record("\(secondResult)"); return }
        #expect(bootError.description == "the services did not all start within 10.0 seconds; still starting: forever")
        // The boot's deadline does not cancel the start; let it end, or its task would sleep on the
        // clock forever, keeping the registry (and what its factories captured) with it.
        await clock.advance(by: .seconds(3_600))
        _ = try await other.service(named: "forever")
        #expect(other.state(of: "forever") == .started)
    }

    @Test func shutdownRunsInReverseStartOrderAndDestroysOnce() async throws {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let context = Context(application: app)
        context.services.register(named: "db") { LoggingService("db", log: self.log) }
        context.services.register(named: "api", dependencies: ["db"]) { LoggingService("api", log: self.log) }
        context.services.register(named: "ui", dependencies: ["api"]) { LoggingService("ui", log: self.log) }
        try await context.services.startServices()
        log.lines.removeAll()
        try host.terminate()
        await context.shutdown?.value
        #expect(log.lines == ["ui.shutdown", "ui.destroy", "api.shutdown", "api.destroy", "db.shutdown", "db.destroy"])
        await context.services.shutdown()
        #expect(log.lines.count == 6, "each willDestroy once")
        // A relaunch makes and starts new instances, dependencies first.
        log.lines.removeAll()
        try await context.services.startServices()
        #expect(context.services.startOrder == ["db", "api", "ui"])
        #expect(log.lines == ["db.created", "db.start", "db.started", "api.created", "api.start", "api.started",
                              "ui.created", "ui.start", "ui.started"])
    }

    @Test func dependenciesMayBeRegisteredLaterAndUnregisteringOneIsSeenByTheNextStart() async throws {
        let services = try context().services
        services.register(named: "api", dependencies: ["db", "db"]) { LoggingService("api", log: self.log) }
        services.register(named: "db") { LoggingService("db", log: self.log) }
        services.unregisterService(named: "db")
        let missing = await #expect(throws: ServiceError.self) { try await services.startServices() }
        #expect(missing?.description == "'api' depends on 'db', which is not registered (api → db)")
        services.register(named: "db") { LoggingService("db", log: self.log) }
        try await services.startServices()
        #expect(services.startOrder == ["db", "api"], "a dependency named twice counts once")
    }

    @Test func findServiceStartsALazyServiceAndFindsItOnceStarted() async throws {
        let services = try context().services
        services.register(named: "keychain") { LoggingService("keychain", log: self.log) }
        services.register(named: "geo", dependencies: ["keychain"], startMode: .lazy) {
            LoggingService("geo", log: self.log, delay: .seconds(1), clock: self.clock)
        }
        #expect(services.findService(named: "geo") == nil, "what it needs has not started: the lookup starts them and it")
        try await clock.waitForSleepers(1)
        #expect(log.lines == ["keychain.created", "keychain.start", "keychain.started", "geo.created", "geo.start"])
        let starting = try #require(services.findService(named: "geo"), "made and starting: found, no second start")
        await clock.advance(by: .seconds(1))
        #expect(services.findService(named: "geo") === starting)
        #expect(log.lines.filter { $0 == "geo.start" }.count == 1)
    }

    @Test func registrationRulesAndLookups() throws {
        let context = try context()
        let service = LoggingService("push", log: log)
        #expect(context.registerService(service, forName: "push"))
        #expect(!context.registerService(service, forName: "push"))
        #expect(context.services.lastRegistrationError?.description == "a service named 'push' is already registered")
        #expect(context.application?.diagnostics.map(\.description) == ["[moduleRefused] services: a service named 'push' is already registered"])
        #expect(context.findService(named: "push") === service, "an instance the app registered is found at once")
        #expect(context.findService(named: "nope") == nil)
        context.unregisterService(forName: "push")
        #expect(context.services.registeredNames.isEmpty)
    }
}

@MainActor
struct ServiceRegistryChangeTests {
    let hosts = KeptHosts()
    let log = CallLog()
    let clock = TestClock()

    @Test func unregisteringAServiceThatIsStartingCancelsItAndFailsTheLookupsWaitingForIt() async throws {
        let services = try hosts.context(clock: clock).services
        services.register(named: "slow", startMode: .lazy) { LoggingService("slow", log: self.log, delay: .seconds(5), clock: self.clock) }
        let lookup = Task { _ = try await services.service(named: "slow") }
        try await clock.waitForSleepers(1)
        services.unregisterService(named: "slow")
        let error = await #expect(throws: ServiceError.self) { try await lookup.value }
        #expect(error?.description == "no service named 'slow' is registered")
        await clock.advance(by: .seconds(5))
        #expect(log.lines == ["slow.created", "slow.start", "slow.destroy"], "cancelled: never started, destroyed once")
        #expect(services.state(of: "slow") == nil)
        #expect(services.startOrder.isEmpty)
    }

    @Test func servicesReRegisteredUnderTheSameNameAreLinkedAgainInRegistrationOrder() async throws {
        let services = try hosts.context(clock: clock).services
        for round in 0..<3 {
            services.register(named: "db") { LoggingService("db\(round)", log: self.log) }
            services.register(named: "api", dependencies: ["db"]) { LoggingService("api\(round)", log: self.log) }
            services.register(named: "ui", dependencies: ["api", "db"]) { LoggingService("ui\(round)", log: self.log) }
            #expect(services.registeredNames == ["db", "api", "ui"])
            services.unregisterService(named: "api")
            services.unregisterService(named: "ui")
            services.unregisterService(named: "db")
            #expect(services.registeredNames.isEmpty)
        }
        // Dependents first, dependencies later, out of order.
        services.register(named: "ui", dependencies: ["api", "db"]) { LoggingService("ui", log: self.log) }
        services.register(named: "api", dependencies: ["db"]) { LoggingService("api", log: self.log) }
        services.unregisterService(named: "api")
        services.register(named: "db") { LoggingService("db", log: self.log) }
        services.register(named: "api", dependencies: ["db"]) { LoggingService("api", log: self.log) }
        #expect(services.registeredNames == ["ui", "db", "api"])
        try await services.startServices()
        #expect(services.startOrder == ["db", "api", "ui"])
        #expect(log.lines == ["db.created", "db.start", "db.started", "api.created", "api.start", "api.started",
                              "ui.created", "ui.start", "ui.started"], "only the last round's services were made")
    }
}
