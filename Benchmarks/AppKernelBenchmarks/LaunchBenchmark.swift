import AppKernel
import AppKernelModules
import AppKernelSDK
import AppKernelTesting
import Foundation

@MainActor
final class LaunchDelegate: ApplicationDelegate {}

/// A whole launch with no real work in it: the kernel's launch, a ContextBootLoader starting
/// 1,000 no-op services (dependencies i−1, i/2, i/3), the SDK manager's five phases (deferred
/// login) and its root controller.
@MainActor
enum LaunchBenchmark {
    struct Launched {
        let app: Application
        let loader: ContextBootLoader
        let manager: SDKManager
    }

    static func launch(services: Int) async throws -> Launched {
        let loader = ContextBootLoader { context in
            for index in 0..<services {
                context.services.register(named: "s\(index)", dependencies: ServiceBenchmarks.dependencies(of: index)) { BenchService() }
            }
        }
        let app = Application(delegate: LaunchDelegate(), bootLoader: loader, clock: TestClock())
        let manager = SDKManager(application: app, bootConfig: BootConfig(remoteAccessConsumerKey: "3MVG9-bench", oauthRedirectURI: "bench://done",
                                                                         oauthScopes: ["api"], shouldAuthenticate: false))
        manager.window = Window()
        manager.rootControllerFactory = { _ in PlaceholderController(message: "root") }
        _ = try app.handle(.launch(LaunchOptions(), inBackground: false))
        try await loader.context?.servicesReady()
        await manager.automaticLaunch?.value
        precondition(manager.launchState == .finished && manager.rootController != nil, "the SDK launch did not complete")
        precondition(loader.context?.services.startOrder.count == services, "not every service started")
        return Launched(app: app, loader: loader, manager: manager)
    }

    /// The time of a launch, round by round, and the memory ten launched apps keep, per app.
    static func measure(rounds: Int, services: Int) async throws -> (seconds: Stats, retainedKB: Double) {
        var samples: [Double] = []
        for _ in 0..<rounds {
            var launched: Launched?
            samples.append(try await Measure.time { launched = try await launch(services: services) })
            if let launched {
                _ = try launched.app.handle(.terminate)
                await launched.loader.context?.shutdown?.value
            }
        }
        let before = Machine.residentKB
        var kept: [Launched] = []
        for _ in 0..<10 { kept.append(try await launch(services: services)) }
        let retained = (Machine.residentKB - before) / Double(kept.count)
        return (Stats(samples), retained)
    }
}
