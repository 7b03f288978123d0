// The AppKernel catalog's "Getting started" article (Sources/AppKernel/AppKernel.docc/GettingStarted.md),
// as written. Its `@main` block is the README's, run as a child process by AppKernelPOSIXTests
// (Tests/Helpers/ReadmeServer).
import Foundation
import Testing
import TestSupport
import AppKernel
import AppKernelTesting

/// The article's delegates and its test, in a suite of their own so their names stay theirs.
@MainActor
struct GettingStartedArticle {
    @MainActor
    final class AppDelegate: ApplicationDelegate {
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            true
        }

        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
        }
    }

    @MainActor
    final class SceneDelegate: AppKernel.SceneDelegate {
        var window: Window?

        func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
            window = Window(windowScene: scene)
            window?.rootController = PlaceholderController(message: "Hello")
            window?.makeKeyAndVisible()
        }
    }

    @MainActor @Test func launchConnectsOneSceneAndShowsItsWindow() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: AppDelegate())
        #expect(app.state == .active)
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                      "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                                      "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
        #expect(app.connectedScenes.first?.keyWindow?.isHidden == false)
    }

    /// What the article says about Ctrl-C: termination disconnects the scene and calls `willTerminate`.
    @Test func terminationDisconnectsTheSceneAndCallsWillTerminate() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: AppDelegate())
        _ = host.trace.take()
        try host.terminate()
        #expect(app.state == .terminated)
        #expect(host.trace.take() == ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect", "app.willTerminate"])
    }

    /// The article's manifest. A test target cannot compile a manifest (PackageDescription is the
    /// package manager's), so this checks what can drift: every product it names is one of this
    /// package's libraries, and the tools version the article gives is the package's.
    @Test func manifestNamesProductsThisPackageHas() throws {
        let manifest = """
        import PackageDescription

        let package = Package(
            name: "MyApp",
            platforms: [.macOS(.v15)],
            dependencies: [
                .package(url: "https://example.com/AppKernel.git", branch: "main"),
            ],
            targets: [
                .executableTarget(name: "MyApp", dependencies: [
                    .product(name: "AppKernel", package: "AppKernel"),
                    .product(name: "AppKernelPOSIX", package: "AppKernel"),
                ]),
                .testTarget(name: "MyAppTests", dependencies: [
                    "MyApp",
                    .product(name: "AppKernelTesting", package: "AppKernel"),
                ]),
            ]
        )
        """
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let ours = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let named = productsNamed(inManifest: manifest)
        #expect(named == ["AppKernel", "AppKernelPOSIX", "AppKernelTesting"])
        #expect(productsNotLibraries(named, packageManifest: ours) == [], "not library products")
        #expect(ours.hasPrefix("// swift-tools-version:6.0"), "the article's tools version is the package's")
        #expect(manifest.contains("/AppKernel.git\""), "the package: argument is the URL's last component, AppKernel")
    }
}
