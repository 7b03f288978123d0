// The AppKernelTesting catalog's "Testing your app" article
// (Sources/AppKernelTesting/AppKernelTesting.docc/TestingYourApp.md): its trait sections, as
// written. The article's other blocks run in Tests/AppKernelTestingTests/TestingYourAppArticleTests.swift;
// this target has the SDK manager (`AppSDKManager` is the porting article's, PortingGuideTests).
import AppKernel
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Foundation
import Testing

/// The article's app, nested so its names stay the article's.
@MainActor
struct TestingYourAppTrait {
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

    @Test(.appKernel) @MainActor
    func theTraitGivesEachTestItsOwnHostAndClock() async throws {
        let test = AppKernelTest.current
        let app = try test.host.launch(delegate: AppDelegate())
        try await test.host.launchFinished()                 // the launch, its BootLoader phases and all
        try test.host.moveToBackground()
        await test.clock.advance(by: .seconds(5))            // the grace period
        #expect(app.state == .suspended)
        #expect(test.host.trace.take().last == "system.didSuspend")
    }

    @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    func anSDKAppHasItsOwnSharedManagerInEachTest() async throws {
        SDKManager.shared.bootConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "http://localhost:1717/OauthRedirect",
                                                  shouldAuthenticate: false)
        let host = AppKernelTest.current.host
        try host.launch(delegate: AppDelegate())
        try await host.launchFinished()                      // the SDK's launch phases ran, or this throws
        #expect(SDKManager.shared is AppSDKManager)
        #expect(SDKManager.shared.launchState == .finished)
        _ = host.trace.take()                                // taken: asserted, or left on purpose
    }
}
