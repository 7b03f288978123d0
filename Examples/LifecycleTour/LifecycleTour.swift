// LifecycleTour — a headless AppKernel app driven through its life cycle by a simulated host,
// printing the timeline. Run it with `swift run LifecycleTour`.
//
// The AppDelegate and SceneDelegate below are the code that would live in an iOS app, with an
// mPaaS-style FrameworkInterface and an extra BootLoader phase; the `main` function plays the
// system: it launches the app, opens a URL, sends it to the
// background, lets a background task finish, wakes it with a push, brings it back and
// terminates it. Time is virtual (a TestClock), so the tour is instant and always prints the
// same timeline.
//
// Porting note: the forceios/Xcode template names its class `SceneDelegate`, like AppKernel's
// protocol; declare it as `final class SceneDelegate: AppKernel.SceneDelegate`.
import AppKernel
import AppKernelPOSIX
import AppKernelTesting
import Foundation

@MainActor
final class AppDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("launched because: \(options.reasons.map(\.rawValue).joined(separator: ", "))")
        application.registerForRemoteNotifications()
        return true
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
    }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        say("device token: \(deviceToken.map { String(format: "%02x", $0) }.joined())")
    }

    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        say("push received: \(JSONValue.object(userInfo)) → new data")
        completionHandler(.newData)
    }

    func applicationDidReceiveMemoryWarning(_ application: Application) { say("dropping caches") }

    func applicationWillTerminate(_ application: Application) { say("saving state before termination") }
}

@MainActor
final class SceneDelegate: AppKernel.SceneDelegate {
    var window: Window?
    var uploadTask = BackgroundTaskIdentifier.invalid

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        let window = Window(windowScene: scene)
        window.rootController = ItemListController()
        window.makeKeyAndVisible()
        self.window = window
    }

    func scene(_ scene: Scene, openURLContexts urlContexts: [OpenURLContext]) {
        for context in urlContexts { say("opening \(context.url.absoluteString)") }
    }

    func sceneDidEnterBackground(_ scene: Scene) {
        guard let application = scene.application else { return }
        uploadTask = application.beginBackgroundTask(name: "upload") { [weak self] in
            say("upload ran out of time")
            if let task = self?.uploadTask { application.endBackgroundTask(task) }
        }
        say("upload started, \(application.backgroundTimeRemaining) of background time left")
    }

    func finishUpload(in application: Application) {
        say("upload finished")
        application.endBackgroundTask(uploadTask)
    }
}

/// mPaaS-style pre-handling: the framework interface sees events before the delegates do.
@MainActor
final class Framework: FrameworkInterface {
    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {
        say("framework: preparing the launch")
    }

    /// Old links (`tour-v1://…`) are rewritten before anyone else sees them.
    func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                     sourceApplication: String?, annotation: JSONValue?) -> HookResult {
        if url.scheme == "tour-v1" {
            newURL = URL(string: url.absoluteString.replacingOccurrences(of: "tour-v1://", with: "tour://"))
            say("framework: rewrote \(url.absoluteString) for the new scheme")
        }
        return .continue
    }
}

@MainActor
final class ItemListController: RootController {
    func viewDidAppear() { say("item list on screen") }
    func viewDidDisappear() { say("item list off screen") }
}

@MainActor
func say(_ text: String) { print("    │ \(text)") }

/// Why the tour stopped early.
enum TourError: Error, CustomStringConvertible {
    case notLaunched
    var description: String { "the simulated host refused to launch the app" }
}

@main
enum LifecycleTour {
    /// The tour's command line: no flags but `--help`; what it answers is what it does.
    static let tool = CommandLineTool(
        name: "LifecycleTour",
        summary: "a headless AppKernel app driven through its life cycle by a simulated host on a virtual clock, printing the timeline",
        exitStatuses: [.init(0, "the tour ran to its end"),
                       .init(1, "a step failed (the error is printed; the life cycle did something the tour did not expect)")],
        notes: ["The tour is the same on every run: time is virtual (a TestClock), so it is instant. It writes nothing."])

    @MainActor
    static func main() async {
        // `--help` and a bad command line end here (AppKernelPOSIX's CommandLineTool).
        _ = tool.parseOrExit()
        do { try await run() } catch {
            print("error: \(error)")
            exit(1)
        }
    }

    @MainActor
    static func run() async throws {
        let clock = TestClock()
        let host = SimulatedHost(clock: clock, traceOptions: [.delegates, .system, .hookStops, .phases])
        print("AppKernel lifecycle tour — a headless app, a simulated host, a virtual clock\n")

        func step(_ title: String, _ action: () async throws -> Void) async rethrows {
            print("▶ \(title)")
            try await action()
            for entry in host.trace.entries {
                let time = String(format: "%6.1fs", Double(entry.time.components.seconds)
                                  + Double(entry.time.components.attoseconds) / 1e18)
                print("  \(time)  \(TraceRecorder.line(entry.stage, entry.event))")
            }
            host.trace.clear()
            if let app = host.application { print("  → state: \(app.state)\n") }
        }

        let bootLoader = BootLoader()
        bootLoader.addPhase("warmCaches", before: BootLoader.showWindowPhase) { _ in say("boot: caches warmed") }
        var launched: Application?
        try await step("launch") {
            launched = try host.launch(delegate: AppDelegate(), interface: Framework(), bootLoader: bootLoader)
        }
        guard let app = launched else { throw TourError.notLaunched }
        try await step("the push service answers the registration") {
            try host.completeRemoteNotificationRegistration(deviceToken: Data([0xAB, 0xCD, 0x01]))
        }
        try await step("another app opens a link") {
            try host.open(URL(string: "tour-v1://items/42")!, options: OpenURLOptions(sourceApplication: "com.example.mail"))
        }
        try await step("the user goes to the home screen") { try host.moveToBackground() }
        await step("12 seconds later the upload finishes") {
            await clock.advance(by: .seconds(12))
            (app.connectedScenes.first?.delegate as? SceneDelegate)?.finishUpload(in: app)
        }
        try await step("a silent push wakes the app") {
            _ = try await host.deliverRemoteNotification(["aps": ["content-available": 1], "item": 43])
            await clock.advance(by: .seconds(5))
        }
        try await step("the user returns") { try host.moveToForeground() }
        try await step("memory runs low") { try host.sendMemoryWarning() }
        try await step("the user swipes the app away") { try host.terminate() }
        print("diagnostics: \(app.diagnostics.isEmpty ? "none" : app.diagnostics.map(\.description).joined(separator: "; "))")
    }
}
