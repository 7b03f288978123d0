// Issue 34: the last of mPaaS's pre-handlers, and the restoration handler of continued activities.
//
// Sources: the mPaaS document this project started from (../shared/seeds/003_e6ab3e61d244bf5d.txt,
// lines 132–145: `application:handleWatchKitExtensionRequest:reply:` — "called first so the app can
// pre-handle a Watch message; Continue: the framework broadcasts it to global listeners through
// UIApplicationWatchKitExtensionRequestNotifications; Return: the app handled the message fully and
// the framework stops"; `application:continueUserActivity:restorationHandler:`), and Apple's pages
// UIApplicationDelegate/application(_:handleWatchKitExtensionRequest:reply:) ("a block to execute
// with the results of the request"; the app is likely in the background, so it must stay awake
// until it replies), UIApplicationDelegate/application(_:continue:restorationHandler:) ("calling
// this block is optional … you can copy this block and call it at a later time … from the app's
// main thread") and UIResponder/restoreUserActivityState(_:) (the system calls it on each object
// handed to the restoration handler).
import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// An interface whose WatchKit pre-handler logs and answers what the test scripted; on a stop it
/// replies itself (it took the message over), unless told to forget.
@MainActor private final class WatchInterface: FrameworkInterface {
    let log: CallLog
    var result = HookResult.continue
    var repliesOnStop = true
    init(log: CallLog) { self.log = log }

    func application(_ application: Application, handleWatchKitExtensionRequest userInfo: [String: JSONValue],
                     reply: @escaping @MainActor @Sendable ([String: JSONValue]) -> Void) -> HookResult {
        log.append("hook.handleWatchKitExtensionRequest(\(JSONValue.object(userInfo)))")
        if result.stops, repliesOnStop { reply(["from": "hook"]) }
        return result
    }
}

private let watchMessage: [String: JSONValue] = ["request": "unreadCount"]

@MainActor
struct WatchKitExtensionRequestTests {
    let log = CallLog()
    let clock = TestClock()

    private func launch(_ interface: WatchInterface? = nil, delegate: RecordingApplicationDelegate? = nil,
                        usesScenes: Bool = false) throws -> (SimulatedHost, Application) {
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: usesScenes))
        let app = try host.launch(delegate: delegate ?? RecordingApplicationDelegate(log: log), interface: interface)
        log.lines.removeAll()
        return (host, app)
    }

    @Test(arguments: [false, true])
    func continueBroadcastsToListenersAndTheDelegateReplies(usesScenes: Bool) async throws {
        let (host, app) = try launch(WatchInterface(log: log), usesScenes: usesScenes)
        let token = app.addListener(for: .handleWatchKitExtensionRequest) { [log] request in
            log.append("listener(\(JSONValue.object(request.userInfo)))")
        }
        let reply = try await host.handleWatchKitExtensionRequest(watchMessage)
        #expect(reply == ["ok": true], "the delegate's reply reaches the watch app")
        // The pre-handler first (mPaaS); then UIKit's general order: the delegate, then listeners.
        #expect(log.take() == [#"hook.handleWatchKitExtensionRequest({"request":"unreadCount"})"#,
                               "app.handleWatchKitExtensionRequest",
                               #"listener({"request":"unreadCount"})"#])
        #expect(app.diagnostics.isEmpty)
        try clock.checkNothingPending()
        token.cancel()
    }

    @Test(arguments: [HookResult.return, .returnYes, .returnNo])
    func returnStopsBeforeListenersAndTheDelegate(_ result: HookResult) async throws {
        let interface = WatchInterface(log: log)
        interface.result = result
        let (host, app) = try launch(interface)
        var heard = 0
        let token = app.addListener(for: .handleWatchKitExtensionRequest) { _ in heard += 1 }
        #expect(try await host.handleWatchKitExtensionRequest(watchMessage) == ["from": "hook"])
        #expect(log.take() == [#"hook.handleWatchKitExtensionRequest({"request":"unreadCount"})"#])
        #expect(heard == 0, "nothing is broadcast after Return")
        #expect(app.diagnostics.isEmpty)
        try clock.checkNothingPending()
        token.cancel()
    }

    @Test func anUnansweredReplyIsAnsweredEmptyAtTheDeadline() async throws {
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.watchKitReply = nil   // keeps the reply and never calls it
        let (host, app) = try launch(delegate: delegate)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try host.send(.watchKitExtensionRequest(watchMessage, completion: completion))
        await clock.advance(by: .seconds(29))
        #expect(completion.result == nil)
        await clock.advance(by: .seconds(1))
        #expect(completion.result == [:])
        #expect(!completion.answeredByApp)
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded])
        #expect(app.diagnostics.first?.subject == "watchKitExtensionRequest")
        // A reply after the deadline is ignored and reported: the watch app heard one answer.
        let late = try #require(delegate.pendingWatchKitReplies.first)
        late(["late": true])
        #expect(completion.result == [:])
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded, .completionCalledTwice])
    }

    @Test func aHookThatTakesTheRequestOverButNeverRepliesIsAnsweredAtTheDeadline() async throws {
        let interface = WatchInterface(log: log)
        interface.result = .return
        interface.repliesOnStop = false
        let (host, app) = try launch(interface)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try host.send(.watchKitExtensionRequest(watchMessage, completion: completion))
        await clock.advance(by: .seconds(30))
        #expect(completion.result == [:])
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded])
    }

    @Test func theAppRepliesExactlyOnce() async throws {
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.watchKitReply = nil
        let (host, app) = try launch(delegate: delegate)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try host.send(.watchKitExtensionRequest(watchMessage, completion: completion))
        let reply = try #require(delegate.pendingWatchKitReplies.first)
        reply(["unread": 3])
        reply(["unread": 4])
        #expect(completion.result == ["unread": 3])
        #expect(completion.answeredByApp)
        #expect(completion.ignoredCalls == 1)
        #expect(app.diagnostics.map(\.kind) == [.completionCalledTwice])
        try clock.checkNothingPending()
    }

    @Test func terminationAnswersAPendingReplyEmpty() throws {
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.watchKitReply = nil
        let (host, _) = try launch(delegate: delegate)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try host.send(.watchKitExtensionRequest(watchMessage, completion: completion))
        try host.terminate()
        #expect(completion.result == [:])
        #expect(!completion.answeredByApp)
    }

    @Test func aSuspendedAppIsWokenInTheBackgroundAndKeptAwakeUntilItReplies() async throws {
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.watchKitReply = nil
        let (host, app) = try launch(delegate: delegate)
        try host.moveToBackground()
        await clock.advance(by: .seconds(10))
        #expect(app.state == .suspended)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        try host.send(.watchKitExtensionRequest(watchMessage, completion: completion))
        #expect(app.state == .background)
        await clock.advance(by: .seconds(20))
        #expect(app.state == .background, "kept awake while the reply is pending")
        let reply = try #require(delegate.pendingWatchKitReplies.first)
        reply(["unread": 0])
        #expect(completion.result == ["unread": 0])
        await clock.advance(by: .seconds(10))
        #expect(app.state == .suspended, "suspended again once it replied and the grace period passed")
    }

    @Test func neitherANotRunningNorATerminatedAppTakesARequest() throws {
        #expect(LifecycleRules.legalStates(for: .watchKitExtensionRequest) == [.active, .inactive, .background, .suspended])
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let completion = Completion<[String: JSONValue]>(event: "watchKitExtensionRequest", fallback: [:])
        let error = #expect(throws: ApplicationError.self) { try app.handle(.watchKitExtensionRequest([:], completion: completion)) }
        #expect(error?.code == .notLaunched)
        #expect(error?.event == "watchKitExtensionRequest")
    }

    @Test func theEventNamesItselfWithItsMessage() {
        #expect(LifecycleEvent.handleWatchKitExtensionRequest(watchMessage).description
                == #"handleWatchKitExtensionRequest({"request":"unreadCount"})"#)
        #expect(ApplicationEvent.handleWatchKitExtensionRequest.hookPointName == "handleWatchKitExtensionRequest")
        #expect(!ApplicationEvent.handleWatchKitExtensionRequest.notifiesBeforeDelegate)
    }
}

/// A root controller the tests hand to restoration handlers.
@MainActor private final class ArticleController: RootController {}

/// An app delegate that continues activities with UIKit's full method: it hands its window's
/// root controller to the restoration handler `calls` times, now or (`deferred`) later.
@MainActor private final class RestoringDelegate: ApplicationDelegate {
    let controller = ArticleController()
    var calls = 1
    var deferred: (@MainActor @Sendable ([any RootController]) -> Void)?
    var defers = false

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        let window = Window()
        window.rootController = controller
        window.makeKeyAndVisible()
        application.window = window
        return true
    }

    func application(_ application: Application, continue userActivity: UserActivity,
                     restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> Bool {
        if defers {
            deferred = restorationHandler
            return true
        }
        for _ in 0..<calls { restorationHandler(application.window?.rootController.map { [$0] } ?? []) }
        return true
    }
}

@MainActor
struct UserActivityRestorationTests {
    let clock = TestClock()

    private func launch(_ delegate: some ApplicationDelegate, interface: (any FrameworkInterface)? = nil) throws -> (SimulatedHost, Application) {
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        return (host, try host.launch(delegate: delegate, interface: interface))
    }

    @Test func theHostGetsBackTheRootControllersTheDelegateHandedItsRestorationHandler() throws {
        let delegate = RestoringDelegate()
        let (host, app) = try launch(delegate)
        let (handled, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(handled)
        let restored = try #require(objects)
        #expect(restored.count == 1)
        #expect(restored.first === delegate.controller)
        #expect(app.diagnostics.isEmpty)
    }

    @Test func aSecondCallIsIgnoredAndReported() throws {
        let delegate = RestoringDelegate()
        delegate.calls = 2
        let (host, app) = try launch(delegate)
        let (_, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(objects?.count == 1, "the first call stands")
        #expect(app.diagnostics.map(\.kind) == [.restorationHandlerCalledTwice])
        #expect(app.diagnostics.first?.subject == "continueUserActivity(com.example.view)")
    }

    @Test func theHandlerMayBeCalledLaterAndTheRecordKeepsWhatItWasGiven() throws {
        let delegate = RestoringDelegate()
        delegate.defers = true
        let (host, _) = try launch(delegate)
        let restoration = UserActivityRestoration()
        try host.send(.continueUserActivity(sampleActivity, scene: nil, restoration: restoration))
        #expect(!restoration.isCalled)
        let handler = try #require(delegate.deferred)
        handler([delegate.controller])
        #expect(restoration.restorableObjects?.first === delegate.controller)
        #expect(restoration.ignoredCalls == 0)
    }

    @Test func aDelegateWithTheShortFormStillContinuesAndTheHandlerIsNotCalled() throws {
        let log = CallLog()
        let (host, _) = try launch(RecordingApplicationDelegate(log: log))
        log.lines.removeAll()
        let (handled, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(handled)
        #expect(objects == nil)
        #expect(log.lines == ["app.continue(com.example.view)"])
    }

    @Test func theFrameworkInterfacesPreHandlerGetsTheRestorationHandler() throws {
        @MainActor final class Restorer: FrameworkInterface {
            let controller = ArticleController()
            func application(_ application: Application, continueUserActivity userActivity: UserActivity,
                             restorationHandler: @escaping @MainActor @Sendable ([any RootController]) -> Void) -> HookResult {
                restorationHandler([controller])
                return .returnYes
            }
        }
        let interface = Restorer()
        let log = CallLog()
        let (host, _) = try launch(RecordingApplicationDelegate(log: log), interface: interface)
        log.lines.removeAll()
        let (handled, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(handled)
        #expect(objects?.first === interface.controller)
        #expect(log.lines.isEmpty, "ReturnYES answers the system; the delegate is not called")
    }

    @Test func theShortFormOfThePreHandlerStillRuns() throws {
        @MainActor final class Short: FrameworkInterface {
            var seen: [String] = []
            func application(_ application: Application, continueUserActivity userActivity: UserActivity) -> HookResult {
                seen.append(userActivity.activityType)
                return .returnNo
            }
        }
        let interface = Short()
        let (host, _) = try launch(RecordingApplicationDelegate(log: CallLog()), interface: interface)
        let (handled, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(!handled)
        #expect(objects == nil)
        #expect(interface.seen == ["com.example.view"])
    }

    @Test func hooksInASceneAppGetTheHandlerToo() throws {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: CallLog()))
        let controller = ArticleController()
        let token = app.hooks.before(.continueUserActivity) { request in request.restorationHandler([controller]) }
        let (handled, objects) = try host.continueUserActivityRestoring(sampleActivity)
        #expect(handled)
        #expect(objects?.first === controller)
        token.cancel()
    }
}
