import AppKernel
import AppKernelTesting
import Testing

/// `servicesStopAfterDependents` compares a service with the services that depended on it when
/// they were tracked: a relaunch that tracks services of the same names is not their dependent.
/// Found as a flaky `findsAServiceStoppedBeforeTheServiceUsingIt` on a busy main actor: the first
/// launch's database stopped (correctly, after its cache) only once the relaunch had begun, and
/// was judged against the relaunch's cache.
@MainActor
struct ServiceGenerationsTests {
    @Test func aRelaunchsServicesAreNotTheDependentsOfTheFirstLaunchs() async throws {
        let world = ExplorerWorld(configuration: ApplicationConfiguration(usesScenes: false)) { _ in DefaultApplicationDelegate() }
        let (firstDatabase, stopFirstDatabase) = AsyncStream<Void>.makeStream()
        let (firstCache, stopFirstCache) = AsyncStream<Void>.makeStream()
        let database = Task { @MainActor in for await _ in firstDatabase {} }
        let cache = Task { @MainActor in for await _ in firstCache {} }
        world.trackService(database, named: "database")
        world.trackService(cache, named: "cache", dependencies: ["database"])
        // The relaunch's services, under the same names, before the first launch's have stopped.
        let (later, _) = AsyncStream<Void>.makeStream()
        let laterDatabase = Task { @MainActor in for await _ in later {} }
        let laterCache = Task { @MainActor in for await _ in later {} }
        world.trackService(laterDatabase, named: "database")
        world.trackService(laterCache, named: "cache", dependencies: ["database"])
        stopFirstCache.finish()
        await cache.value
        for _ in 0..<10 { await Task.yield() }
        stopFirstDatabase.finish()
        await database.value
        for _ in 0..<10 { await Task.yield() }
        #expect(world.servicesStoppedEarly == [])
        laterDatabase.cancel(); laterCache.cancel()
    }

    @Test func aServiceStoppedBeforeItsOwnDependentIsStillFound() async throws {
        let world = ExplorerWorld(configuration: ApplicationConfiguration(usesScenes: false)) { _ in DefaultApplicationDelegate() }
        let (databaseRuns, stopDatabase) = AsyncStream<Void>.makeStream()
        let (cacheRuns, stopCache) = AsyncStream<Void>.makeStream()
        let database = Task { @MainActor in for await _ in databaseRuns {} }
        let cache = Task { @MainActor in for await _ in cacheRuns {} }
        world.trackService(database, named: "database")
        world.trackService(cache, named: "cache", dependencies: ["database"])
        stopDatabase.finish()
        await database.value
        for _ in 0..<10 { await Task.yield() }
        #expect(world.servicesStoppedEarly == ["'database' stopped while 'cache', which depends on it, still ran"])
        stopCache.finish()
        await cache.value
    }
}
