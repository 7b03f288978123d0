// The AppKernelTesting catalog's "Testing your app" article
// (Sources/AppKernelTesting/AppKernelTesting.docc/TestingYourApp.md), as written.
import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// The article's app and its tests, in a suite of their own so their names stay theirs.
@MainActor
struct TestingYourAppArticle {
    @MainActor
    final class AppDelegate: ApplicationDelegate {
        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
        }
    }

    @MainActor
    final class SceneDelegate: AppKernel.SceneDelegate {
        var openedURLs: [URL] = []

        func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {
            openedURLs += urlContexts.map(\.url)
        }
    }

    @MainActor @Test func launchConnectsOneScene() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: AppDelegate())
        #expect(app.state == .active)
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                      "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                                      "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
    }

    @MainActor @Test func backgroundForegroundMemoryWarningAndURL() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: AppDelegate())
        _ = host.trace.take()                                   // the launch, asserted above
        try host.moveToBackground()
        try host.moveToForeground()
        try host.sendMemoryWarning()
        try host.open(URL(string: "myapp://items/42")!)
        #expect(host.trace.take() == ["scene-1.willResignActive", "scene-1.didEnterBackground",
                                      "scene-1.willEnterForeground", "scene-1.didBecomeActive",
                                      "app.didReceiveMemoryWarning", "scene-1.openURL(myapp://items/42)"])
        let scene = try #require(app.connectedScenes.first?.delegate as? SceneDelegate)
        #expect(scene.openedURLs == [URL(string: "myapp://items/42")!])
    }

    @MainActor @Test func aBackgroundedAppIsSuspendedAfterTheGracePeriod() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: AppDelegate())
        try host.moveToBackground()
        await clock.advance(by: .seconds(4))
        #expect(app.state == .background)                    // nothing happens until time moves
        await clock.advance(by: .seconds(1))                 // the 5 s grace period is over
        #expect(app.state == .suspended)
        #expect(host.trace.take().last == "system.didSuspend")
        try clock.checkNothingPending()                      // no timer or sleeper left behind
    }

    /// What the article says of an event the state does not allow: it throws and changes nothing.
    @Test func anIllegalEventThrowsAndChangesNothing() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: AppDelegate())
        try host.terminate()
        _ = host.trace.take()
        #expect(throws: ApplicationError.self) { try host.moveToForeground() }
        #expect(app.state == .terminated)
        #expect(host.trace.take() == [])
    }
}
