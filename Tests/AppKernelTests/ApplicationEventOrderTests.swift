import Foundation
import Testing
import AppKernelCore
import AppKernel
import AppKernelTesting

/// Issue 33: listeners hear an event where UIKit posts its notification. The table is written from
/// Apple's UIApplicationDelegate and UISceneDelegate pages
/// (developer.apple.com/documentation/uikit/…):
/// - "After calling this method, UIKit posts a didBecomeActiveNotification" —
///   applicationDidBecomeActive(_:); the same words for applicationWillResignActive(_:) and
///   applicationWillTerminate(_:); didFinishLaunchingNotification: "The system sends that
///   notification shortly after this method returns" — application(_:didFinishLaunchingWithOptions:).
/// - "UIKit also posts a willEnterForegroundNotification shortly before calling this method" —
///   applicationWillEnterForeground(_:): the one event whose listeners hear first.
/// - Order not stated ("around the same time": applicationDidEnterBackground(_:); the memory
///   warning; the scene delegate's "in addition to calling this method, UIKit posts …"), or no
///   notification at all ("There is no equivalent notification for this delegation method":
///   application(_:open:options:); continue, quick actions, pushes, fetch, device tokens): the
///   general rule, the delegate first.
/// - A watch app's request (issue 34): UIKit documents no notification for
///   application(_:handleWatchKitExtensionRequest:reply:); mPaaS's DTFrameworkInterface (the seed,
///   ../shared/seeds/003, lines 132–137) broadcasts UIApplicationWatchKitExtensionRequestNotifications
///   only after the app's pre-handler answered Continue, from the framework's own app-delegate
///   method. The pre-handler is a `handle` hook and runs first either way; between the delegate and
///   the listeners nothing documented puts the broadcast first, so the general rule holds.
@MainActor
struct ApplicationEventOrderTests {
    enum Order: String, Sendable { case delegateFirst, listenersFirst }

    /// What each event's order is, and where it is documented.
    nonisolated static let documented: [(LifecycleEvent.Name, Order)] = [
        (.didFinishLaunching, .delegateFirst),          // "shortly after this method returns"
        (.didBecomeActive, .delegateFirst),             // "After calling this method, UIKit posts"
        (.willResignActive, .delegateFirst),            // "After calling this method, UIKit also posts"
        (.willTerminate, .delegateFirst),               // "After calling this method, the app also posts"
        (.willEnterForeground, .listenersFirst),        // "shortly before calling this method"
        (.didEnterBackground, .delegateFirst),          // "around the same time": the general rule
        (.didReceiveMemoryWarning, .delegateFirst),     // not stated: the general rule
        (.openURL, .delegateFirst),                     // "There is no equivalent notification"
        (.continueUserActivity, .delegateFirst),        // no notification
        (.performShortcutItem, .delegateFirst),         // no notification
        (.didReceiveRemoteNotification, .delegateFirst),
        (.performFetch, .delegateFirst),
        (.handleWatchKitExtensionRequest, .delegateFirst),   // no UIKit notification; mPaaS broadcasts after Continue
        (.didRegisterForRemoteNotifications, .delegateFirst),
        (.sceneWillConnect, .delegateFirst),            // "In addition to calling this method, UIKit also posts"
        (.sceneWillEnterForeground, .delegateFirst),
        (.sceneDidBecomeActive, .delegateFirst),
        (.sceneWillResignActive, .delegateFirst),
        (.sceneDidEnterBackground, .delegateFirst),
        (.sceneDidDisconnect, .delegateFirst),
    ]

    /// Which of the delegate or the listeners heard each event first, over a whole run of an app
    /// without scenes (app-level events reach its delegate) and one with a scene.
    static func observedOrders() async throws -> [LifecycleEvent.Name: Order] {
        var steps: [(PipelineStage, LifecycleEvent.Name)] = []
        func record(_ app: Application) -> ListenerToken {
            app.addPipelineObserver { stage, event in steps.append((stage, event.name)) }
        }
        var tokens: [ListenerToken] = []
        let plain = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: false))
        plain.beforeEachLaunch { tokens.append(record($0)) }
        try plain.launch(delegate: RecordingApplicationDelegate(log: CallLog()))
        _ = try plain.open(URL(string: "app://item/1")!)
        _ = try plain.continueUserActivity(UserActivity(activityType: "com.example.view"))
        _ = try await plain.performShortcutItem(ShortcutItem(type: "compose", localizedTitle: "Compose"))
        try #require(plain.application).registerForRemoteNotifications()
        try plain.completeRemoteNotificationRegistration(deviceToken: Data([1, 2]))
        try plain.sendMemoryWarning()
        try plain.moveToBackground()
        _ = try await plain.deliverRemoteNotification(["aps": ["content-available": 1]])
        _ = try await plain.performBackgroundFetch()
        _ = try await plain.handleWatchKitExtensionRequest(["request": "glance"])
        try plain.moveToForeground()
        try plain.terminate()

        let scenes = SimulatedHost()
        scenes.beforeEachLaunch { tokens.append(record($0)) }
        try scenes.launch(delegate: RecordingApplicationDelegate(log: CallLog()))
        try scenes.moveToBackground()
        try scenes.moveToForeground()
        let scene = try #require(scenes.application?.connectedScenes.first)
        try scenes.disconnectScene(scene)
        withExtendedLifetime(tokens) {}

        var orders: [LifecycleEvent.Name: Order] = [:]
        for (index, step) in steps.enumerated() where orders[step.1] == nil {
            switch step.0 {
            case .listeners:
                orders[step.1] = .listenersFirst
            case .applicationDelegate, .sceneDelegate:
                // The listeners' step of the same event must follow in the same pass.
                if steps[(index + 1)...].contains(where: { $0.0 == .listeners && $0.1 == step.1 }) {
                    orders[step.1] = .delegateFirst
                }
            default:
                break
            }
        }
        return orders
    }

    @Test(arguments: documented.map { "\($0.0.rawValue)" })
    func listenersHearEachEventWhereUIKitPostsItsNotification(_ name: String) async throws {
        let expected = try #require(Self.documented.first { $0.0.rawValue == name }?.1)
        let observed = try await Self.observedOrders()
        #expect(observed[try #require(LifecycleEvent.Name(rawValue: name))] == expected)
    }

    @Test func theTableCoversEveryEventAnApplicationPublishesToADelegate() async throws {
        let observed = try await Self.observedOrders()
        #expect(Set(observed.keys) == Set(Self.documented.map(\.0)))
    }
}
