import AppKernel
import AppKernelModules
import AppKernelTesting
import Testing

/// The loader holds the context, the context holds the application, the application holds the
/// loader: the loader lets the context go when the application terminates, so a terminated
/// application is freed with its context and services.
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
}
