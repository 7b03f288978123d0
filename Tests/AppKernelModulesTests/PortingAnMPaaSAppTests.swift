// The porting guide's code (Sources/AppKernelModules/AppKernelModules.docc/PortingAnMPaaSApp.md),
// as written, and a test that runs it with the guide's own runtime file.
import AppKernel
import AppKernelModules
import Foundation
import Testing
import AppKernelTesting

/// The app's `DTFrameworkInterface` category.
@MainActor
final class AppFrameworkInterface: FrameworkInterface {
    private(set) var steps: [String] = []

    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {
        steps.append("before: set up the app's own SDKs")
    }

    func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult {
        .continue
    }

    func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions) {
        steps.append("after: register for push")
    }

    func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                     sourceApplication: String?, annotation: JSONValue?) -> HookResult {
        url.scheme == "myapp" ? .continue : .returnNo
    }

    func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                     reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) -> HookResult {
        guard userInfo["request"] == "unreadCount" else { return .continue }   // the delegate and listeners take it
        reply(["unread": 3])                                                    // handled here: nothing after runs
        return .return
    }
}

/// The launcher's `DTMicroApplicationDelegate`.
@MainActor
final class HomeDelegate: MicroApplicationDelegate {
    func rootController(in application: MicroApplication) -> any RootController {
        PlaceholderController(message: "Home")
    }
}

/// The services' `DTService` classes.
@MainActor
final class KeychainServiceImpl: Service {
    private(set) var isUnlocked = false
    func start() async throws { isUnlocked = true }
}

@MainActor
final class GeoServiceImpl: Service {
    func start() async throws {}
}

@MainActor
final class MigrationServiceImpl: Service {
    func start() async throws {}
}

/// The framework's boot: the BootLoader with the classes `MobileRuntime.plist` names.
@MainActor
func makeBootLoader(runtime: URL) -> ContextBootLoader {
    var classes = ModuleClassRegistry()
    classes.registerApplication("HomeDelegate") { HomeDelegate() }
    classes.registerService("KeychainServiceImpl") { KeychainServiceImpl() }
    classes.registerService("GeoServiceImpl") { GeoServiceImpl() }
    classes.registerService("MigrationServiceImpl") { MigrationServiceImpl() }
    return ContextBootLoader { context in try context.loadManifest(at: runtime, classes: classes) }
}

/// The guide's launch block, as written; a namespace here so its name stays the guide's.
private struct PortingAnMPaaSAppLaunch {
    /// Launches the port, `resources` holding its `MobileRuntime.plist`.
    @MainActor func launchThePort(on host: SimulatedHost, resources: URL) async throws
        -> (app: Application, interface: AppFrameworkInterface, loader: ContextBootLoader, keychain: KeychainServiceImpl?) {
        let loader = makeBootLoader(runtime: resources.appendingPathComponent("MobileRuntime.plist"))
        let interface = AppFrameworkInterface()
        let app = try host.launch(delegate: DefaultApplicationDelegate(), interface: interface, bootLoader: loader)
        let context = try #require(loader.context)
        try await context.servicesReady()
        let keychain = context.findService(named: "KeychainService") as? KeychainServiceImpl
        return (app, interface, loader, keychain)
    }
}

@MainActor
final class PortingAnMPaaSAppTests {
    let resources: URL
    let host = SimulatedHost()

    init() throws {
        resources = FileManager.default.temporaryDirectory.appendingPathComponent("mpaas-port-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        // The guide's own MobileRuntime.plist.
        let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/AppKernelModules/AppKernelModules.docc/PortingAnMPaaSApp.md")
        let text = try String(contentsOf: guide, encoding: .utf8)
        let plist = try #require(text.components(separatedBy: "```xml\n").dropFirst().first?.components(separatedBy: "```").first)
        try Data(plist.utf8).write(to: resources.appendingPathComponent("MobileRuntime.plist"))
    }

    deinit { try? FileManager.default.removeItem(at: resources) }

    @Test func theGuidesPortBootsAsMPaaSWould() async throws {
        let (app, interface, loader, keychain) = try await PortingAnMPaaSAppLaunch().launchThePort(on: host, resources: resources)
        let context = try #require(loader.context)
        #expect(keychain?.isUnlocked == true)
        #expect(interface.steps == ["before: set up the app's own SDKs", "after: register for push"])
        #expect(context.services.startOrder == ["MigrationService", "KeychainService"], "the run-once group first")
        #expect(context.services.state(of: "GeoService") == .registered, "lazy: not started at boot")
        #expect(context.currentApplication?.name == "Home")
        #expect(loader.state == .finished)
        #expect(try !host.open(URL(string: "other://x")!), "another scheme is answered NO by the interface")
        #expect(try host.open(URL(string: "myapp://home")!) == false, "the delegate (the default) declines it")
        #expect(app.hookErrors.isEmpty)
    }

    /// The seed's DTFrameworkInterface (../shared/seeds/003, lines 132–137): Return means the
    /// app handled the watch message fully and the framework stops; Continue broadcasts it to the
    /// global listeners (UIApplicationWatchKitExtensionRequestNotifications) and the default
    /// handling goes on — here the delegate, whose default replies with an empty dictionary.
    @Test func theGuidesWatchKitPreHandlerRepliesOrLetsTheRequestGoOn() async throws {
        let loader = makeBootLoader(runtime: resources.appendingPathComponent("MobileRuntime.plist"))
        let app = try host.launch(delegate: DefaultApplicationDelegate(), interface: AppFrameworkInterface(), bootLoader: loader)
        var heard: [[String: JSONValue]] = []
        let token = app.addListener(for: .handleWatchKitExtensionRequest) { heard.append($0.userInfo) }
        #expect(try await host.handleWatchKitExtensionRequest(["request": "unreadCount"]) == ["unread": 3])
        #expect(heard.isEmpty, "Return: the framework stops, nothing is broadcast")
        #expect(try await host.handleWatchKitExtensionRequest(["request": "compose"]) == [:], "the delegate's default reply")
        #expect(heard == [["request": "compose"]], "Continue: broadcast to the global listeners")
        #expect(app.diagnostics.isEmpty)
        token.cancel()
    }
}
