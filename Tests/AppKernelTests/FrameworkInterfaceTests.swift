import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// An interface whose every method logs `hook.<method>` and answers what the test scripted.
/// When it stops an event that carries a completion handler with `.return`, it answers the
/// handler itself — it took the event over.
@MainActor final class ScriptedInterface: FrameworkInterface {
    let log: CallLog
    var results: [String: HookResult] = [:]
    init(log: CallLog) { self.log = log }

    private func decide(_ method: String) -> HookResult {
        log.lines.append("hook.\(method)")
        return results[method] ?? .continue
    }

    func application(_ application: Application, beforeDidFinishLaunchingWithOptions options: LaunchOptions) {
        log.lines.append("hook.beforeDidFinishLaunching")
    }
    func application(_ application: Application, handleDidFinishLaunchingWithOptions options: LaunchOptions) -> HookResult {
        decide("handleDidFinishLaunching")
    }
    func application(_ application: Application, afterDidFinishLaunchingWithOptions options: LaunchOptions) {
        log.lines.append("hook.afterDidFinishLaunching")
    }
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult {
        let result = decide("didReceiveRemoteNotification")
        if result.stops { completionHandler(.newData) }
        return result
    }
    func application(_ application: Application, didReceiveLocalNotification notification: LocalNotification) -> HookResult {
        decide("didReceiveLocalNotification")
    }
    func application(_ application: Application, handleActionWithIdentifier identifier: String,
                     forLocalNotification notification: LocalNotification,
                     completionHandler: @escaping @MainActor @Sendable () -> Void) -> HookResult {
        let result = decide("handleActionWithIdentifier")
        if result.stops { completionHandler() }
        return result
    }
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) -> HookResult {
        decide("didRegisterForRemoteNotifications")
    }
    func application(_ application: Application,
                     didFailToRegisterForRemoteNotificationsWithError error: RemoteNotificationRegistrationError) -> HookResult {
        decide("didFailToRegisterForRemoteNotifications")
    }
    func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                     sourceApplication: String?, annotation: JSONValue?) -> HookResult {
        decide("openURL")
    }
    func applicationWillResignActive(_ application: Application) -> HookResult { decide("applicationWillResignActive") }
    func applicationDidEnterBackground(_ application: Application) -> HookResult { decide("applicationDidEnterBackground") }
    func applicationWillEnterForeground(_ application: Application) -> HookResult { decide("applicationWillEnterForeground") }
    func applicationDidBecomeActive(_ application: Application) -> HookResult { decide("applicationDidBecomeActive") }
    func applicationWillTerminate(_ application: Application) -> HookResult { decide("applicationWillTerminate") }
    func applicationDidReceiveMemoryWarning(_ application: Application) -> HookResult { decide("applicationDidReceiveMemoryWarning") }
    func application(_ application: Application, continueUserActivity userActivity: UserActivity) -> HookResult {
        decide("continueUserActivity")
    }
    func application(_ application: Application, performActionForShortcutItem shortcutItem: ShortcutItem,
                     completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) -> HookResult {
        let result = decide("performActionForShortcutItem")
        if result == .return { completionHandler(true) }
        return result
    }
    func application(_ application: Application,
                     performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) -> HookResult {
        let result = decide("performFetch")
        if result.stops { completionHandler(.newData) }
        return result
    }
    func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                     reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) -> HookResult {
        let result = decide("handleWatchKitExtensionRequest")
        if result.stops { reply(["from": "hook"]) }
        return result
    }
}

/// One interface method, the event that reaches it, and what the delegate logs for that event.
struct InterfaceCase: Sendable, CustomTestStringConvertible {
    let method: String
    let delegateLine: String
    let listenerEvent: LifecycleEvent.Name
    var testDescription: String { method }
}

let interfaceCases: [InterfaceCase] = [
    InterfaceCase(method: "handleDidFinishLaunching", delegateLine: "app.didFinishLaunching", listenerEvent: .didFinishLaunching),
    InterfaceCase(method: "didReceiveRemoteNotification", delegateLine: "app.didReceiveRemoteNotification", listenerEvent: .didReceiveRemoteNotification),
    InterfaceCase(method: "didReceiveLocalNotification", delegateLine: "app.didReceiveLocal(n1)", listenerEvent: .didReceiveLocalNotification),
    InterfaceCase(method: "handleActionWithIdentifier", delegateLine: "app.handleAction(reply,n1)", listenerEvent: .handleLocalNotificationAction),
    InterfaceCase(method: "didRegisterForRemoteNotifications", delegateLine: "app.didRegister(4 bytes)", listenerEvent: .didRegisterForRemoteNotifications),
    InterfaceCase(method: "didFailToRegisterForRemoteNotifications", delegateLine: "app.didFailToRegister(offline)",
                  listenerEvent: .didFailToRegisterForRemoteNotifications),
    InterfaceCase(method: "openURL", delegateLine: "app.open(myapp://item/42)", listenerEvent: .openURL),
    InterfaceCase(method: "applicationWillResignActive", delegateLine: "app.willResignActive", listenerEvent: .willResignActive),
    InterfaceCase(method: "applicationDidEnterBackground", delegateLine: "app.didEnterBackground", listenerEvent: .didEnterBackground),
    InterfaceCase(method: "applicationWillEnterForeground", delegateLine: "app.willEnterForeground", listenerEvent: .willEnterForeground),
    InterfaceCase(method: "applicationDidBecomeActive", delegateLine: "app.didBecomeActive", listenerEvent: .didBecomeActive),
    InterfaceCase(method: "applicationWillTerminate", delegateLine: "app.willTerminate", listenerEvent: .willTerminate),
    InterfaceCase(method: "applicationDidReceiveMemoryWarning", delegateLine: "app.memoryWarning", listenerEvent: .didReceiveMemoryWarning),
    InterfaceCase(method: "continueUserActivity", delegateLine: "app.continue(com.example.view)", listenerEvent: .continueUserActivity),
    InterfaceCase(method: "performActionForShortcutItem", delegateLine: "app.performAction(com.example.new)", listenerEvent: .performShortcutItem),
    InterfaceCase(method: "performFetch", delegateLine: "app.performFetch", listenerEvent: .performFetch),
    InterfaceCase(method: "handleWatchKitExtensionRequest", delegateLine: "app.handleWatchKitExtensionRequest",
                  listenerEvent: .handleWatchKitExtensionRequest),
]

/// What sending one case's event answered.
enum EventAnswer: Equatable {
    case none
    case bool(Bool)
    case fetch(BackgroundFetchResult)
    case reply([String: JSONValue])
}

@MainActor
struct FrameworkInterfaceTests {
    let log = CallLog()
    let clock = TestClock()

    /// Sends the event of `method` to a launched app without scenes; returns its answer and, for
    /// events with a completion, the completion's diagnostics.
    func send(_ method: String, host: SimulatedHost, app: Application) async throws -> EventAnswer {
        switch method {
        case "didReceiveRemoteNotification": return .fetch(try await host.deliverRemoteNotification(samplePayload))
        case "didReceiveLocalNotification": try host.deliverLocalNotification(sampleLocalNotification)
        case "handleActionWithIdentifier":
            return .bool(try await host.performLocalNotificationAction("reply", for: sampleLocalNotification))
        case "didRegisterForRemoteNotifications": try host.completeRemoteNotificationRegistration(deviceToken: Data([1, 2, 3, 4]))
        case "didFailToRegisterForRemoteNotifications":
            try host.failRemoteNotificationRegistration(RemoteNotificationRegistrationError(reason: "offline"))
        case "openURL": return .bool(try host.open(sampleURL))
        case "applicationWillResignActive": try host.deactivate()
        case "applicationDidEnterBackground": try host.moveToBackground()
        case "applicationWillEnterForeground", "applicationDidBecomeActive":
            try host.moveToBackground()
            log.lines.removeAll()
            try host.moveToForeground()
        case "applicationWillTerminate": try host.terminate()
        case "applicationDidReceiveMemoryWarning": try host.sendMemoryWarning()
        case "continueUserActivity": return .bool(try host.continueUserActivity(sampleActivity))
        case "performActionForShortcutItem": return .bool(try await host.performShortcutItem(sampleShortcut))
        case "performFetch":
            try host.moveToBackground()
            log.lines.removeAll()
            return .fetch(try await host.performBackgroundFetch())
        case "handleWatchKitExtensionRequest": return .reply(try await host.handleWatchKitExtensionRequest(["request": "glance"]))
        default: Issue.record("no event for \(method)")
        }
        return .none
    }

    @Test(arguments: interfaceCases)
    func continueReachesListenersAndTheDelegate(_ testCase: InterfaceCase) async throws {
        let interface = ScriptedInterface(log: log)
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: interface)
        app.registerForRemoteNotifications()
        var heard: [LifecycleEvent.Name] = []
        let token = app.addListener { heard.append($0.name) }
        if testCase.method != "handleDidFinishLaunching" {
            log.lines.removeAll()
            let answer = try await send(testCase.method, host: host, app: app)
            #expect(answer != .fetch(.failed), "the delegate answered")
            if testCase.method == "handleWatchKitExtensionRequest" { #expect(answer == .reply(["ok": true]), "the delegate replied") }
        }
        let hookIndex = try #require(log.lines.firstIndex(of: "hook.\(testCase.method)"), "\(log.lines)")
        let delegateIndex = try #require(log.lines.firstIndex(of: testCase.delegateLine), "\(log.lines)")
        #expect(hookIndex < delegateIndex)
        if testCase.method != "handleDidFinishLaunching" { #expect(heard.contains(testCase.listenerEvent)) }
        #expect(!app.diagnostics.contains { $0.kind == .completionCalledTwice || $0.kind == .completionDeadlineExceeded })
        withExtendedLifetime(token) {}
    }

    @Test(arguments: interfaceCases)
    func returnStopsBeforeListenersAndTheDelegate(_ testCase: InterfaceCase) async throws {
        let interface = ScriptedInterface(log: log)
        interface.results[testCase.method] = .return
        var heard: [LifecycleEvent.Name] = []
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        let app: Application
        if testCase.method == "handleDidFinishLaunching" {
            app = try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: interface)
            #expect(log.lines.prefix(3) == ["app.willFinishLaunching", "hook.beforeDidFinishLaunching", "hook.handleDidFinishLaunching"])
            #expect(!log.lines.contains("hook.afterDidFinishLaunching"))
        } else {
            app = try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: interface)
            app.registerForRemoteNotifications()
            let token = app.addListener { heard.append($0.name) }
            log.lines.removeAll()
            let answer = try await send(testCase.method, host: host, app: app)
            switch testCase.method {
            case "didReceiveRemoteNotification", "performFetch": #expect(answer == .fetch(.newData), "the hook answered")
            case "handleActionWithIdentifier": #expect(answer == .bool(true), "the hook answered, not the system")
            case "openURL", "continueUserActivity", "performActionForShortcutItem": #expect(answer == .bool(true))
            case "handleWatchKitExtensionRequest": #expect(answer == .reply(["from": "hook"]), "the hook replied")
            default: #expect(answer == EventAnswer.none)
            }
            #expect(!heard.contains(testCase.listenerEvent))
            withExtendedLifetime(token) {}
        }
        #expect(log.lines.contains("hook.\(testCase.method)"))
        #expect(!log.lines.contains(testCase.delegateLine), "\(log.lines)")
        #expect(!app.diagnostics.contains { $0.kind == .completionCalledTwice || $0.kind == .completionDeadlineExceeded })
        try clock.checkNothingPending(ignoringSuspension: app)
    }

    @Test(arguments: [HookResult.returnYes, .returnNo])
    func returnYesOrNoAnswersEveryEventThatHasAnAnswer(_ result: HookResult) async throws {
        let expected = result == .returnYes
        for method in ["handleDidFinishLaunching", "openURL", "continueUserActivity", "performActionForShortcutItem"] {
            let interface = ScriptedInterface(log: log)
            interface.results[method] = result
            var launchAnswer: Bool?
            let delegate = RecordingApplicationDelegate(log: log)
            delegate.launchAnswer = !expected   // the stop's answer must win over the delegate's
            delegate.openAnswer = !expected
            delegate.activityAnswer = !expected
            delegate.shortcutAnswer = !expected
            let app = Application(delegate: delegate, interface: interface, clock: clock,
                                  configuration: ApplicationConfiguration(usesScenes: false))
            if case .answered(let answer) = try app.handle(.launch(LaunchOptions(), inBackground: false)) { launchAnswer = answer }
            switch method {
            case "handleDidFinishLaunching":
                #expect(launchAnswer == expected)
            case "openURL":
                #expect(try app.handle(.openURL(sampleURL, OpenURLOptions(), scene: nil)).boolAnswer == expected)
            case "continueUserActivity":
                #expect(try app.handle(.continueUserActivity(sampleActivity, scene: nil)).boolAnswer == expected)
            default:
                let completion = Completion<Bool>(event: "shortcut", fallback: !expected)
                try app.handle(.performShortcutItem(sampleShortcut, scene: nil, completion: completion))
                #expect(completion.result == expected)
                #expect(completion.answeredByApp)
            }
            #expect(app.diagnostics.isEmpty, "\(method): \(app.diagnostics)")
        }
    }

    @Test(arguments: [HookResult.returnYes, .returnNo])
    func returnYesOrNoActsAsReturnForEventsWithoutAYesNoAnswer(_ result: HookResult) async throws {
        let interface = ScriptedInterface(log: log)
        interface.results["didReceiveRemoteNotification"] = result
        interface.results["applicationDidReceiveMemoryWarning"] = result
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: interface)
        log.lines.removeAll()
        #expect(try await host.deliverRemoteNotification(samplePayload) == .newData)
        try host.sendMemoryWarning()
        #expect(log.take() == ["hook.didReceiveRemoteNotification", "hook.applicationDidReceiveMemoryWarning"])
    }

    @Test func aHookThatTakesACompletionOverButNeverAnswersIsAnsweredAtTheDeadline() async throws {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        let token = app.hooks.handle(.didReceiveRemoteNotification) { _ in .return }   // takes it over, forgets to answer
        let completion = Completion<BackgroundFetchResult>(event: "push", fallback: .failed)
        try host.send(.remoteNotification(samplePayload, completion: completion))
        await clock.advance(by: .seconds(30))
        #expect(completion.result == .failed)
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded])
        token.cancel()
    }

    @Test func theInterfaceRewritesTheURLThroughNewURL() throws {
        final class Rewriter: FrameworkInterface {
            func application(_ application: Application, openURL url: URL, newURL: inout URL?,
                             sourceApplication: String?, annotation: JSONValue?) -> HookResult {
                #expect(sourceApplication == "com.example.mail")
                newURL = URL(string: url.absoluteString.replacingOccurrences(of: "v1", with: "v2"))
                return .continue
            }
        }
        let host = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: false))
        try host.launch(delegate: RecordingApplicationDelegate(log: log), interface: Rewriter())
        log.lines.removeAll()
        #expect(try host.open(URL.literal("myapp://v1/item"), options: OpenURLOptions(sourceApplication: "com.example.mail")))
        #expect(log.lines == ["app.open(myapp://v2/item)"])
    }

    @Test func installingAnInterfaceRegistersOneLabelledHookPerMethod() throws {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let tokens = app.install(ScriptedInterface(log: log))
        #expect(tokens.count == 19)   // 18, and the WatchKit pre-handler (issue 34)
        #expect(app.hooks.hooks(at: ApplicationEvent.didFinishLaunching, stage: .before) == ["FrameworkInterface.beforeDidFinishLaunching"])
        #expect(app.hooks.hooks(at: ApplicationEvent.openURL, stage: .handle) == ["FrameworkInterface.openURL"])
        for token in tokens { token.cancel() }
        #expect(!app.hooks.hasHooks(at: ApplicationEvent.openURL))
    }
}

extension SystemResponse {
    /// The yes/no answer, when there is one.
    var boolAnswer: Bool? { if case .answered(let answer) = self { answer } else { nil } }
}

extension TestClock {
    /// Nothing but the app's own suspension timer may be pending.
    @MainActor func checkNothingPending(ignoringSuspension app: Application) throws {
        if app.state == .background, pendingCount == 1 { return }
        try checkNothingPending()
    }
}
