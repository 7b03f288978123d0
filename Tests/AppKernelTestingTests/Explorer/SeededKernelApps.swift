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

        func applicationDidEnterBackground(_ application: Application) {
            let task = covered ? application.beginBackgroundTask(name: "upload") : nil
            let clock = world.clock
            world.track(Task { @MainActor in
                try? await clock.sleep(for: .seconds(20))
                if let task { application.endBackgroundTask(task) }
            }, named: "upload")
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
            world.track(Task { @MainActor in
                try? await clock.sleep(for: .seconds(2))
                completionHandler(.newData)
            }, named: "refresh")
        }
    }

    static func makeWorld(answersEarly: Bool) -> ExplorerWorld {
        ExplorerWorld(expression: "DoubleAnswerApp.makeWorld(answersEarly: \(answersEarly))",
                      configuration: ApplicationConfiguration(usesScenes: false)) { world in
            Delegate(world: world, answersEarly: answersEarly)
        }
    }
}
