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

    /// A world with two services it started: "database", and "cache", which uses it; each runs
    /// until its `stop` is finished.
    func startedDatabaseAndCache() -> (ExplorerWorld, database: StartedService, cache: StartedService) {
        let world = ExplorerWorld(configuration: ApplicationConfiguration(usesScenes: false)) { _ in DefaultApplicationDelegate() }
        let (databaseRuns, stopDatabase) = AsyncStream<Void>.makeStream()
        let (cacheRuns, stopCache) = AsyncStream<Void>.makeStream()
        let database = world.startService(named: "database") { for await _ in databaseRuns {} }
        let cache = world.startService(named: "cache", dependencies: ["database"]) { for await _ in cacheRuns {} }
        return (world, (database, stopDatabase), (cache, stopCache))
    }

    typealias StartedService = (task: Task<Void, Never>, stop: AsyncStream<Void>.Continuation)

    /// A service started by the world is seen ending in its own task: by the time anyone awaiting
    /// it resumes, the world knows. So a stop order that waits for the cache before stopping the
    /// database is judged right however late the world's own tasks run (with tracked tasks, a
    /// loaded machine once resumed the world's watchers in the other order than the two ends).
    @Test func aStartedServiceIsSeenEndingAsItEnds() async throws {
        let (world, database, cache) = startedDatabaseAndCache()
        cache.stop.finish()
        await cache.task.value
        // No yield: the world's note was made before `cache.task.value` returned.
        #expect(world.trackedWork.map { "\($0.name) \($0.isDone)" } == ["database false", "cache true"])
        database.stop.finish()
        await database.task.value
        #expect(world.trackedWork.map(\.isDone) == [true, true])
        #expect(world.servicesStoppedEarly == [])
    }

    @Test func aStartedServiceStoppedBeforeItsDependentIsFound() async throws {
        let (world, database, cache) = startedDatabaseAndCache()
        database.stop.finish()
        await database.task.value
        #expect(world.servicesStoppedEarly == ["'database' stopped while 'cache', which depends on it, still ran"])
        cache.stop.finish()
        await cache.task.value
    }
}
