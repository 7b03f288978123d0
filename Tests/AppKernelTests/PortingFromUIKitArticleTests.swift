// The AppKernel catalog's "Porting from UIKit" article (Sources/AppKernel/AppKernel.docc/PortingFromUIKit.md):
// its AppKernel code as written, with stand-ins for the app's own types, and a test that runs it.
import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// Serialized: the stand-ins are shared, as the app's singletons would be.
@MainActor @Suite(.serialized)
struct PortingFromUIKitArticle {
    // Stand-ins for the app's own singletons the article's code uses.
    @MainActor final class ImageCache {
        static let shared = ImageCache()
        var images: [String] = []
        func removeAll() { images.removeAll() }
    }
    @MainActor final class Router {
        static let shared = Router()
        var opened: [URL] = []
        func open(_ url: URL) { opened.append(url) }
    }
    @MainActor final class Uploader {
        static let shared = Uploader()
        var pending: [@MainActor () -> Void] = []
        func flush(completion: @escaping @MainActor () -> Void) { pending.append(completion) }
        func finish() { let done = pending; pending = []; for completion in done { completion() } }
    }

    @MainActor
    final class AppDelegate: ApplicationDelegate {
        var listeners: [ListenerToken] = []

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            application.addListener(for: .didReceiveMemoryWarning) { _ in ImageCache.shared.removeAll() }.store(in: &listeners)
            return true
        }

        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Default Configuration", sessionRole: session.role) { SceneDelegate() }
        }
    }

    @MainActor
    final class SceneDelegate: AppKernel.SceneDelegate {
        var window: Window?
        var upload = BackgroundTaskIdentifier.invalid

        func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {
            for context in urlContexts { Router.shared.open(context.url) }
        }

        func sceneDidEnterBackground(_ scene: Scene) {
            guard let application = scene.application else { return }
            upload = application.beginBackgroundTask(name: "upload") { task in
                application.endBackgroundTask(task)                 // out of time: end it, as UIKit asks
            }
            Uploader.shared.flush { application.endBackgroundTask(self.upload) }   // done: the app may suspend
        }
    }

    @Test func thePortOpensURLsEmptiesTheCacheAndFinishesItsUploadInTheBackground() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        Uploader.shared.pending = []
        let app = try host.launch(delegate: AppDelegate())
        ImageCache.shared.images = ["a.png"]
        try host.sendMemoryWarning()
        #expect(ImageCache.shared.images.isEmpty, "the listener replaced the notification observer")
        try host.open(URL(string: "myapp://items/1")!)
        #expect(Router.shared.opened == [URL(string: "myapp://items/1")!], "the scene delegate got the URL")
        try host.moveToBackground()
        #expect(app.state == .background, "the upload keeps the app running")
        await clock.advance(by: .seconds(10))
        #expect(app.state == .background)
        Uploader.shared.finish()                            // the upload is done: its task ends
        #expect(app.state == .suspended)
        #expect(app.diagnostics.isEmpty)
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                      "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                                      "scene-1.willEnterForeground", "scene-1.didBecomeActive",
                                      "app.didReceiveMemoryWarning",
                                      "scene-1.openURL(myapp://items/1)",
                                      "scene-1.willResignActive", "scene-1.didEnterBackground",
                                      "system.didSuspend"])
    }

    @Test func anUploadThatRunsOutOfTimeIsEndedByItsExpirationHandler() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        Uploader.shared.pending = []
        let app = try host.launch(delegate: AppDelegate())
        try host.moveToBackground()
        await clock.advance(by: .seconds(30))               // the background allowance runs out
        #expect(app.state == .suspended)
        #expect(app.diagnostics.isEmpty, "the handler ended its task: nothing for the system to report")
        Uploader.shared.pending = []
    }
}
