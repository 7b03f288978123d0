// The README's snippets, run as written (with the AppDelegate they assume).
import Foundation
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

// Stand-ins for the names the README's hooks snippet assumes.
@MainActor private final class Framework: FrameworkInterface {}
@MainActor private final class Flags {
    var loaded = false
    func load() throws { loaded = true }
}
private extension URL {
    var upgradedToV2: URL { URL(string: absoluteString.replacingOccurrences(of: "/v1/", with: "/v2/")) ?? self }
}

@MainActor @Test func readmeHooksExample() throws {
    let host = SimulatedHost()
    let flags = Flags()
    var errors: [HookError] = []
    let loader = BootLoader()                                    // setupWindow … startLauncher
    loader.addPhase("loadFlags", before: BootLoader.showWindowPhase) { app in try flags.load() }
    let app = try host.launch(delegate: AppDelegate(), interface: Framework(), bootLoader: loader)
    var hooks: [ListenerToken] = []                              // a hook lives as long as its token
    app.hooks.handle(.openURL) { request in
        request.url = request.url.upgradedToV2                    // everything after sees the new URL
        return .continue
    }.store(in: &hooks)
    app.hookErrorHandler = { error in errors.append(error) }   // names the hook point and the hook
    var opened: [String] = []
    let token = app.addListener(for: .openURL) { opened.append($0.url.absoluteString) }
    try host.open(URL(string: "myapp://api/v1/items")!)
    #expect(flags.loaded)
    #expect(loader.phaseNames.firstIndex(of: "loadFlags")! < loader.phaseNames.firstIndex(of: "showWindow")!)
    #expect(opened == ["myapp://api/v2/items"])
    #expect(errors.isEmpty)
    token.cancel()
}
