import Foundation
import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

@MainActor
struct ContextBootLoaderTests {
    let log = CallLog()
    let clock = TestClock()

    func services(_ context: Context) {
        context.registerApplication(named: "Home") { [log] in RecordingApp(name: "Home", trace: log) }
        context.launcherName = "Home"
        context.services.register(named: "keychain") { [log, clock] in LoggingService("keychain", log: log, delay: .seconds(1), clock: clock) }
        context.services.register(named: "network") { [log, clock] in LoggingService("network", log: log, delay: .seconds(2), clock: clock) }
        context.services.register(named: "session", dependencies: ["keychain", "network"]) { [log, clock] in
            LoggingService("session", log: log, delay: .seconds(1), clock: clock)
        }
        context.services.register(named: "feed", dependencies: ["session"], startMode: .group("home")) { [log] in LoggingService("feed", log: log) }
        context.autoStartGroups = ["home"]
    }

    @Test func theBootLoaderStartsServicesThenGroupsThenTheLauncher() async throws {
        let loader = ContextBootLoader { self.services($0) }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        var errors: [HookError] = []
        app.hookErrorHandler = { errors.append($0) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        #expect(loader.phaseNames == ["loadModules", "setupWindow", "startRunOnceServices", "startNonLazyServices", "startAutoStartServiceGroups", "showWindow", "startLauncher"])
        let context = try #require(loader.context)
        try await clock.waitForSleepers(2)
        #expect(loader.state == .running("startNonLazyServices"))
        var ready = false
        let readiness = Task { try await context.servicesReady(); ready = true }
        await clock.advance(by: .seconds(2))
        #expect(!ready, "not before the auto-start groups")
        await clock.advance(by: .seconds(1))
        try await readiness.value
        #expect(ready)
        #expect(loader.state == .finished)
        #expect(context.services.startOrder == ["keychain", "network", "session", "feed"])
        #expect(loader.timeline.map(\.name).suffix(2) == ["showWindow", "startLauncher"])
        #expect(clock.now.offset == .seconds(3), "the critical path: network (2 s) then session (1 s)")
        #expect(context.currentApplication?.name == "Home")
        #expect(errors.isEmpty)
        #expect(app.configuration.usesScenes || app.window?.isHidden == false)
        try app.handle(.terminate)
        await context.shutdown?.value
        #expect(log.lines.suffix(8) == ["feed.shutdown", "feed.destroy", "session.shutdown", "session.destroy",
                                        "network.shutdown", "network.destroy", "keychain.shutdown", "keychain.destroy"])
    }

    @Test func aBadManifestFailsTheLoadModulesPhaseAndARelaunchWorks() async throws {
        let classes = ModuleClassRegistry()
        let bad = ContextBootLoader { context in
            try context.load(try RuntimeManifest(data: Data(#"{"services": [{"name": "s", "class": "Missing"}]}"#.utf8), file: "MobileRuntime.json"),
                             classes: classes)
        }
        let host = SimulatedHost(clock: clock)
        try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: bad)
        #expect(bad.state == .failed("loadModules"))
        #expect(bad.context?.services.registeredNames == [], "nothing half-registered")
        try host.terminate()
        let good = ContextBootLoader { self.services($0) }
        let second = try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: good)
        try await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(3))
        #expect(good.state == .finished)
        #expect(good.context?.currentApplication?.name == "Home")
        #expect(second.state == .active)
    }

    @Test func aFailingServiceFailsItsPhaseNamingItAndTheChain() async throws {
        let loader = ContextBootLoader { context in
            context.services.register(named: "storage") { [log] in LoggingService("storage", log: log, failure: StartFailure()) }
            context.services.register(named: "sync", dependencies: ["storage"]) { [log] in LoggingService("sync", log: log) }
        }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        var errors: [HookError] = []
        app.hookErrorHandler = { errors.append($0) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        for _ in 0..<100 where errors.isEmpty { await Task.yield() }
        #expect(loader.state == .failed("startNonLazyServices"))
        #expect(errors.map(\.hook) == ["startNonLazyServices"])
        #expect(errors.first?.description.contains("the service 'storage' failed to start: disk full (needed by sync → storage)") == true)
        #expect(app.state == .active, "the application stays in its state")
    }

    @Test func aRefusedLauncherFailsItsPhase() async throws {
        let loader = ContextBootLoader { context in
            context.registerApplication(named: "Home") { [log] in
                let app = RecordingApp(name: "Home", trace: log)
                app.shouldStart = false
                return app
            }
            context.launcherName = "Home"
        }
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        var errors: [HookError] = []
        app.hookErrorHandler = { errors.append($0) }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        for _ in 0..<100 where errors.isEmpty { await Task.yield() }
        #expect(loader.state == .failed("startLauncher"))
        #expect((errors.first?.underlyingError as? LauncherError)?.description
                == "the launcher did not start: 'Home' refused to start (applicationShouldStart answered false)")
    }
}
