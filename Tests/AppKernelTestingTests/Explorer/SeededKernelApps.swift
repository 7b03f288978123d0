import AppKernel
import AppKernelTesting

// Deliberately wrong apps for the lifecycle explorer (issue 32's "seeded bugs"), each with its fix.

/// Starts an upload (20 s of work) when it enters the background. The bug: no background task,
/// so the app is suspended 5 s later with the upload half done (UIKit's
/// `beginBackgroundTask(withName:expirationHandler:)` documentation: "call this method as early
/// as possible before starting your task"). The fix holds a background task until the upload ends.
@MainActor
enum UploadOnBackgroundApp {
    final class Delegate: ApplicationDelegate {
        let world: ExplorerWorld
        let covered: Bool
        init(world: ExplorerWorld, covered: Bool) {
            self.world = world
            self.covered = covered
        }

        var uploads: [Task<Void, Never>] = []

        func applicationDidEnterBackground(_ application: Application) {
            let task = covered ? application.beginBackgroundTask(name: "upload") : nil
            let clock = world.clock
            let upload = Task { @MainActor in
                try? await clock.sleep(for: .seconds(20))
                if let task { application.endBackgroundTask(task) }
            }
            uploads.append(upload)
            world.track(upload, named: "upload")
        }

        func applicationWillTerminate(_ application: Application) {
            for upload in uploads { upload.cancel() }
        }
    }

    static func makeWorld(covered: Bool) -> ExplorerWorld {
        ExplorerWorld(expression: "UploadOnBackgroundApp.makeWorld(covered: \(covered))",
                      configuration: ApplicationConfiguration(usesScenes: false)) { world in
            Delegate(world: world, covered: covered)
        }
    }
}

/// Answers a silent push at once with `.noData`, then again when its refresh ends. The bug: the
/// completion handler is called twice (UIKit: "call the handler … as soon as possible", once).
/// The fix answers once, when the refresh ends.
@MainActor
enum DoubleAnswerApp {
    final class Delegate: ApplicationDelegate {
        let world: ExplorerWorld
        let answersEarly: Bool
        init(world: ExplorerWorld, answersEarly: Bool) {
            self.world = world
            self.answersEarly = answersEarly
        }

        func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                         fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
            if answersEarly { completionHandler(.noData) }
            let clock = world.clock
            let refresh = Task { @MainActor in
                try? await clock.sleep(for: .seconds(2))
                completionHandler(.newData)
            }
            refreshes.append(refresh)
            world.track(refresh, named: "refresh")
        }

        var refreshes: [Task<Void, Never>] = []

        func applicationWillTerminate(_ application: Application) {
            for refresh in refreshes { refresh.cancel() }
        }
    }

    static func makeWorld(answersEarly: Bool) -> ExplorerWorld {
        ExplorerWorld(expression: "DoubleAnswerApp.makeWorld(answersEarly: \(answersEarly))",
                      configuration: ApplicationConfiguration(usesScenes: false)) { world in
            Delegate(world: world, answersEarly: answersEarly)
        }
    }
}

/// Starts a sync service at launch: a loop that syncs every minute. The bug: nothing stops it, so
/// it outlives the app's termination (UIKit: `applicationWillTerminate(_:)` is where an app
/// stops its work). The fix cancels it there.
@MainActor
enum SyncServiceApp {
    final class Delegate: ApplicationDelegate {
        let world: ExplorerWorld
        let stopsOnTerminate: Bool
        var service: Task<Void, Never>?
        init(world: ExplorerWorld, stopsOnTerminate: Bool) {
            self.world = world
            self.stopsOnTerminate = stopsOnTerminate
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            let clock = world.clock
            let service = Task { @MainActor in
                while !Task.isCancelled { try? await clock.sleep(for: .seconds(60)) }
            }
            self.service = service
            world.trackService(service, named: "sync service")
            return true
        }

        func applicationWillTerminate(_ application: Application) {
            if stopsOnTerminate { service?.cancel() }
        }
    }

    static func makeWorld(stopsOnTerminate: Bool) -> ExplorerWorld {
        ExplorerWorld(expression: "SyncServiceApp.makeWorld(stopsOnTerminate: \(stopsOnTerminate))",
                      configuration: ApplicationConfiguration(usesScenes: false)) { world in
            Delegate(world: world, stopsOnTerminate: stopsOnTerminate)
        }
    }
}

/// Runs two services — a database and a cache that uses it — stopped at termination. The bug:
/// it stops them in start order, so the database closes while the cache still writes to it
/// (swift-service-lifecycle and mPaaS's service registry stop in reverse). The fix stops the
/// cache first and the database once the cache has stopped.
@MainActor
enum TwoServicesApp {
    final class Delegate: ApplicationDelegate {
        let world: ExplorerWorld
        let stopsDependentsFirst: Bool
        var database: Task<Void, Never>?
        var cache: Task<Void, Never>?
        init(world: ExplorerWorld, stopsDependentsFirst: Bool) {
            self.world = world
            self.stopsDependentsFirst = stopsDependentsFirst
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            let clock = world.clock
            database = world.startService(named: "database") { while !Task.isCancelled { try? await clock.sleep(for: .seconds(60)) } }
            cache = world.startService(named: "cache", dependencies: ["database"]) {
                while !Task.isCancelled { try? await clock.sleep(for: .seconds(60)) }
            }
            return true
        }

        func applicationWillTerminate(_ application: Application) {
            guard stopsDependentsFirst else {
                // Start order: the database, and once it has stopped, the cache.
                database?.cancel()
                let cache = cache
                Task { @MainActor [database] in
                    await database?.value
                    cache?.cancel()
                }
                return
            }
            cache?.cancel()
            let database = database
            Task { @MainActor [cache] in
                await cache?.value
                database?.cancel()
            }
        }
    }

    static func makeWorld(stopsDependentsFirst: Bool) -> ExplorerWorld {
        ExplorerWorld(expression: "TwoServicesApp.makeWorld(stopsDependentsFirst: \(stopsDependentsFirst))",
                      configuration: ApplicationConfiguration(usesScenes: false)) { world in
            Delegate(world: world, stopsDependentsFirst: stopsDependentsFirst)
        }
    }
}
