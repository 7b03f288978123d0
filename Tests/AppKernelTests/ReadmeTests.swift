// The README's snippets, run as written (with the AppDelegate they assume).
import Testing
import AppKernel
import AppKernelTesting

@MainActor
private final class AppDelegate: ApplicationDelegate {
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        completionHandler(.newData)
    }
}

@MainActor @Test func readmeFirstScreenExample() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: AppDelegate())      // willFinish → didFinish → scene connects
    try host.moveToBackground()                              // resign → enter background
    let upload = app.beginBackgroundTask(name: "upload") { /* out of time */ }
    await clock.advance(by: .seconds(30))                    // the expiration handler runs
    app.endBackgroundTask(upload)                            // app.state == .suspended
    #expect(app.state == .suspended)
    try host.terminate()
    #expect(app.state == .terminated)
}

@MainActor @Test func backgroundLaunchForSilentPushSuspendsAfterAnswering() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: AppDelegate(),
                              options: LaunchOptions(remoteNotification: ["aps": ["content-available": 1]]),
                              inBackground: true)
    #expect(await app.launchCompletion?.value() == .newData)
    await clock.advance(by: .seconds(5))                  // the grace period
    #expect(app.state == .suspended)
    #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                  "app.didReceiveRemoteNotification({\"aps\":{\"content-available\":1}})",
                                  "system.didSuspend"])
}
