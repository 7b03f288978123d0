import AppKernel
import AppKernelModules
import AppKernelTesting
import Testing

/// The application owns its BootLoader, the loader owns the context, the context owns its
/// services; the context and the registry only point back at the application (weakly). So an
/// application is freed with its context and services once nobody holds it — terminated or not.
@MainActor
struct ContextBootLoaderLeakTests {
    @Test func aTerminatedApplicationIsFreedWithItsContext() async throws {
        weak var weakApp: Application?
        weak var weakContext: Context?
        weak var weakLoader: ContextBootLoader?
        do {
            let host = SimulatedHost()
            let loader = ContextBootLoader { context in
                context.services.register(named: "quiet") { LoggingService("quiet", log: CallLog()) }
            }
            weakLoader = loader
            let app = try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
            weakApp = app
            let context = try #require(loader.context)
            weakContext = context
            try await context.servicesReady()
            #expect(loader.state == .finished)
            try host.terminate()
            await context.shutdown?.value
            #expect(loader.context === context, "still reachable while someone holds it")
        }
        #expect(weakApp == nil, "the application was kept alive after it terminated")
        #expect(weakContext == nil)
        #expect(weakLoader == nil)
    }

    /// Before: `Context.application` and `ServiceRegistry.application` (and the registry's
    /// deadline queue) held the application strongly — application → loader → context →
    /// application — so an application that was never terminated was never freed.
    @Test func aNeverTerminatedApplicationIsFreedWithItsContextAndServices() async throws {
        weak var weakApp: Application?
        weak var weakContext: Context?
        weak var weakRegistry: ServiceRegistry?
        weak var weakLoader: ContextBootLoader?
        weak var weakHome: MicroApplication?
        let log = CallLog()
        do {
            let host = SimulatedHost()
            let loader = ContextBootLoader { context in
                context.registerApplication(named: "Home") { RecordingApp(name: "Home", trace: log) }
                context.launcherName = "Home"
                context.services.register(named: "keychain") { LoggingService("keychain", log: log) }
                context.services.register(named: "session", dependencies: ["keychain"]) { LoggingService("session", log: log) }
                context.services.register(named: "geo", startMode: .lazy) { LoggingService("geo", log: log) }
                context.services.register(named: "feed", dependencies: ["session"], startMode: .group("home")) { LoggingService("feed", log: log) }
                context.autoStartGroups = ["home"]
            }
            weakLoader = loader
            let app = try host.launch(delegate: DefaultApplicationDelegate(), bootLoader: loader)
            weakApp = app
            let context = try #require(loader.context)
            weakContext = context
            weakRegistry = context.services
            try await context.servicesReady()
            _ = try await context.services.service(named: "geo")
            #expect(loader.state == .finished)
            #expect(context.services.startOrder == ["keychain", "session", "feed", "geo"])
            weakHome = context.currentApplication
            #expect(weakHome?.name == "Home")
            try host.moveToBackground()
            try host.moveToForeground()
            #expect(app.state == .active)
        }
        #expect(weakApp == nil, "an application that was never terminated was kept alive by its context")
        #expect(weakLoader == nil)
        #expect(weakContext == nil)
        #expect(weakRegistry == nil)
        #expect(weakHome == nil)
        #expect(!log.lines.contains("keychain.shutdown"), "freeing is not terminating: the services were not told to shut down")
    }

    /// A context made by hand (`Context(application:)`) does not keep its application either.
    @Test func aContextMadeByHandDoesNotKeepItsApplication() throws {
        weak var weakApp: Application?
        let context: Context
        do {
            let host = SimulatedHost()
            let app = try host.launch(delegate: DefaultApplicationDelegate())
            weakApp = app
            context = Context(application: app)
            context.services.register(named: "keychain") { LoggingService("keychain", log: CallLog()) }
            #expect(context.application === app)
            #expect(context.services.application === app)
        }
        #expect(weakApp == nil, "the context kept its application alive")
        #expect(context.application == nil)
        #expect(context.services.application == nil)
    }
}
