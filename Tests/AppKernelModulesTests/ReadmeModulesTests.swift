// The README's micro-apps and services snippet, as written, against a real manifest file.
import Foundation
import Testing
import AppKernel
import AppKernelModules
import AppKernelTesting

/// The README's block, as written; a namespace here so its names stay the README's.
private struct ReadmeModules {
    @MainActor final class AppDelegate: ApplicationDelegate {}

    @MainActor final class HomeApp: MicroApplicationDelegate {
        func rootController(in application: MicroApplication) -> any RootController { PlaceholderController(message: "Home") }
    }

    @MainActor final class TransferApp: MicroApplicationDelegate {
        var options: [String: String] = [:]
        func rootController(in application: MicroApplication) -> any RootController { PlaceholderController(message: "Transfer") }
        func application(_ application: MicroApplication, willStartLaunchingWithOptions options: [String: String]) { self.options = options }
    }

    @MainActor final class KeychainService: Service { func start() async throws {} }
    @MainActor final class SessionService: Service { func start() async throws {} }

    /// Launches the app with the micro-apps and services its `MobileRuntime.json` lists, then opens Transfer.
    @MainActor func launchWithModules(on host: SimulatedHost, manifestURL: URL) async throws -> (Application, ContextBootLoader) {
        var classes = ModuleClassRegistry()
        classes.registerApplication("HomeDelegate") { HomeApp() }
        classes.registerApplication("TransferDelegate") { TransferApp() }
        classes.registerService("KeychainService") { KeychainService() }
        classes.registerService("SessionService") { SessionService() }

        // MobileRuntime.json: {"launcher": "Home",
        //   "applications": [{"name": "Home", "delegate": "HomeDelegate"},
        //                    {"name": "Transfer", "delegate": "TransferDelegate"}],
        //   "services": [{"name": "keychain", "class": "KeychainService"},
        //                {"name": "session", "class": "SessionService", "dependencies": ["keychain"]}]}
        let loader = ContextBootLoader { context in
            try context.loadManifest(at: manifestURL, classes: classes)   // errors name file and key path
        }
        let app = try host.launch(delegate: AppDelegate(), bootLoader: loader)
        try await loader.context?.servicesReady()      // keychain, then session; then Home is on top
        loader.context?.startApplication("Transfer", params: ["amount": "10"], launchMode: .present)
        return (app, loader)
    }
}

@MainActor
struct ReadmeModulesTests {
    @Test func theReadmeSnippetBootsTheManifestAndStartsAMicroApp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-modules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifestURL = directory.appendingPathComponent("MobileRuntime.json")
        try Data("""
        {"launcher": "Home",
          "applications": [{"name": "Home", "delegate": "HomeDelegate"},
                           {"name": "Transfer", "delegate": "TransferDelegate"}],
          "services": [{"name": "keychain", "class": "KeychainService"},
                       {"name": "session", "class": "SessionService", "dependencies": ["keychain"]}]}
        """.utf8).write(to: manifestURL)
        let host = SimulatedHost()

        let (app, loader) = try await ReadmeModules().launchWithModules(on: host, manifestURL: manifestURL)

        let context = try #require(loader.context)
        #expect(app.isFullyLoaded)
        #expect(context.services.startOrder == ["keychain", "session"])
        #expect(context.applicationStack.map(\.name) == ["Home", "Transfer"])
        #expect((context.currentApplication?.delegate as? ReadmeModules.TransferApp)?.options == ["amount": "10"])
    }
}
