import Foundation
import Testing
import AppKernelCore
import AppKernel
import AppKernelTesting

@MainActor
struct ListenerTests {
    let log = CallLog()
    let host = SimulatedHost()

    /// UIKit: "After calling this method, the app also posts …Notification"
    /// (applicationDidBecomeActive(_:), applicationWillResignActive(_:), …): listeners hear an
    /// event after its delegate method. ApplicationEventOrderTests checks every event.
    @Test func typedListenersHearTheirEventAfterTheDelegate() throws {
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        let background = app.addListener(for: .didEnterBackground) { [log] app in log.lines.append("listener.didEnterBackground(\(app.state))") }
        let scene = app.addListener(for: .sceneDidEnterBackground) { [log] scene in log.lines.append("listener.\(scene.id).didEnterBackground") }
        let warning = app.addListener(for: .didReceiveMemoryWarning) { [log] _ in log.lines.append("listener.memoryWarning") }
        log.lines.removeAll()
        try host.moveToBackground()
        try host.sendMemoryWarning()
        #expect(log.take() == ["scene-1.willResignActive", "scene-1.didEnterBackground", "listener.scene-1.didEnterBackground",
                               "listener.didEnterBackground(background)", "app.memoryWarning", "listener.memoryWarning"])
        withExtendedLifetime([background, scene, warning]) {}
    }

    @Test func listenersReceiveTheEventsPayload() throws {
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        var urls: [URL] = []
        var activities: [String] = []
        var shortcuts: [String] = []
        var tokens: [Data] = []
        var payloads: [[String: JSONValue]] = []
        var failures: [String] = []
        let all = [
            app.addListener(for: .openURL) { urls.append($0.url) },
            app.addListener(for: .continueUserActivity) { activities.append($0.userActivity.activityType) },
            app.addListener(for: .performShortcutItem) { shortcuts.append($0.shortcutItem.type) },
            app.addListener(for: .didRegisterForRemoteNotifications) { tokens.append($0) },
            app.addListener(for: .didFailToRegisterForRemoteNotifications) { failures.append($0.reason) },
            app.addListener(for: .didReceiveRemoteNotification) { payloads.append($0.userInfo) },
        ]
        app.registerForRemoteNotifications()
        try host.open(sampleURL)
        try host.continueUserActivity(sampleActivity)
        try host.send(.performShortcutItem(sampleShortcut, scene: nil, completion: Completion(event: "s", fallback: false)))
        try host.completeRemoteNotificationRegistration(deviceToken: Data([9]))
        try host.failRemoteNotificationRegistration(RemoteNotificationRegistrationError(reason: "offline"))
        try host.send(.remoteNotification(samplePayload, completion: Completion(event: "p", fallback: .failed)))
        #expect(urls == [sampleURL])
        #expect(activities == ["com.example.view"])
        #expect(shortcuts == ["com.example.new"])
        #expect(tokens == [Data([9])])
        #expect(failures == ["offline"])
        #expect(payloads == [samplePayload])
        withExtendedLifetime(all) {}
    }

    @Test func anUntypedListenerHearsEveryPublishedEventAsAValue() throws {
        var heard: [LifecycleEvent] = []
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let token = app.addListener { heard.append($0) }
        try host.moveToBackground()
        try host.terminate()
        #expect(heard == [.sceneWillResignActive(scene: "scene-1"), .willResignActive,
                          .sceneDidEnterBackground(scene: "scene-1"), .didEnterBackground,
                          .sceneDidDisconnect(scene: "scene-1"), .willTerminate])
        withExtendedLifetime(token) {}
    }

    @Test func aCancelledListenerHearsNothingMore() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var count = 0
        let token = app.addListener(for: .didReceiveMemoryWarning) { _ in count += 1 }
        try host.sendMemoryWarning()
        token.cancel()
        #expect(token.isCancelled)
        try host.sendMemoryWarning()
        token.cancel()
        #expect(count == 1)
    }

    @Test func aDroppedTokenStopsDeliveryAndFreesWhatTheListenerCaptured() throws {
        final class Captured {}
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var count = 0
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            var token: ListenerToken? = app.addListener(for: .didReceiveMemoryWarning) { _ in
                withExtendedLifetime(captured) { count += 1 }
            }
            try host.sendMemoryWarning()
            #expect(token != nil)
            token = nil
        }
        #expect(weakCaptured == nil, "the listener's closure was not released with its token")
        try host.sendMemoryWarning()
        #expect(count == 1)
    }

    /// The listener's closure is called without a retain per call; a listener that cancels or
    /// drops its own token keeps what it captured until it returns, and is freed right after.
    @Test(arguments: [false, true])
    func aListenerThatEndsItsOwnRegistrationRunsToTheEndAndIsFreedAfter(drops: Bool) throws {
        final class Captured { let name = "its capture" }
        final class Holder { var token: ListenerToken? }
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let holder = Holder()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            holder.token = app.addListener(for: .didReceiveMemoryWarning) { [log, holder] _ in
                log.lines.append(drops ? "dropping" : "cancelling")
                if drops { holder.token = nil } else { holder.token?.cancel() }
                log.lines.append("still running with \(captured.name)")
            }
        }
        let after = app.addListener(for: .didReceiveMemoryWarning) { [log] _ in
            log.lines.append(weakCaptured == nil ? "next listener; capture freed" : "next listener; capture alive")
        }
        try host.sendMemoryWarning()
        try host.sendMemoryWarning()
        #expect(log.take() == [drops ? "dropping" : "cancelling", "still running with its capture",
                               "next listener; capture freed", "next listener; capture freed"])
        withExtendedLifetime(after) {}
    }

    @Test func cancellingAnotherListenerDuringDeliveryTakesEffectAtOnce() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var heard: [String] = []
        var second: ListenerToken?
        let first = app.addListener(for: .didReceiveMemoryWarning) { _ in
            heard.append("first")
            second?.cancel()
        }
        second = app.addListener(for: .didReceiveMemoryWarning) { _ in heard.append("second") }
        try host.sendMemoryWarning()
        try host.sendMemoryWarning()
        #expect(heard == ["first", "first"])
        withExtendedLifetime(first) {}
    }

    @Test func aListenerAddedDuringDeliveryHearsTheNextEventOnly() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var heard: [String] = []
        var added: [ListenerToken] = []
        let adder = app.addListener(for: .didReceiveMemoryWarning) { [weak app] _ in
            heard.append("adder")
            guard let app, added.isEmpty else { return }
            added.append(app.addListener(for: .didReceiveMemoryWarning) { _ in heard.append("added") })
        }
        try host.sendMemoryWarning()
        #expect(heard == ["adder"])
        try host.sendMemoryWarning()
        #expect(heard == ["adder", "adder", "added"])
        withExtendedLifetime(adder) {}
    }

    @Test func anEventRaisedDuringDeliveryIsQueuedAndDeliveredAfterItFIFO() throws {
        let host = SimulatedHost(traceOptions: .all)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        var heard: [String] = []
        var responses: [SystemResponse] = []
        // A listener of didBecomeActive asks for a memory warning, then for the background: both
        // must wait until didBecomeActive has reached every listener and the delegate.
        let first = app.addListener(for: .sceneDidBecomeActive) { [host] scene in
            heard.append("first.didBecomeActive")
            responses.append((try? host.send(.memoryWarning)) ?? .done)
            responses.append((try? host.send(.enterBackground(scene: nil))) ?? .done)
        }
        let second = app.addListener { event in heard.append("second.\(event)") }
        try host.moveToBackground()
        heard.removeAll()
        log.lines.removeAll()
        try host.moveToForeground()
        #expect(heard == ["second.sceneWillEnterForeground", "second.willEnterForeground",
                          "first.didBecomeActive", "second.sceneDidBecomeActive", "second.didBecomeActive",
                          "second.didReceiveMemoryWarning",
                          "second.sceneWillResignActive", "second.willResignActive",
                          "second.sceneDidEnterBackground", "second.didEnterBackground"])
        #expect(log.take() == ["scene-1.willEnterForeground", "scene-1.didBecomeActive", "app.memoryWarning",
                               "scene-1.willResignActive", "scene-1.didEnterBackground"])
        #expect(responses.count == 2)
        #expect(responses.allSatisfy { if case .queued = $0 { true } else { false } })
        #expect(app.state == .background)
        withExtendedLifetime([first, second]) {}
    }

    @Test func aQueuedEventThatBecameIllegalIsDroppedWithADiagnostic() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let token = app.addListener(for: .willResignActive) { [host] _ in
            _ = try? host.send(.enterBackground(scene: nil))   // queued; legal when it runs? no: already background
        }
        try host.moveToBackground()
        #expect(app.state == .background)
        #expect(app.diagnostics.map(\.kind) == [.queuedEventRejected])
        #expect(app.diagnostics.first?.subject == "enterBackground")
        withExtendedLifetime(token) {}
    }

    @Test func lifecycleEventsArriveAsAnAsyncSequenceThatEndsAtTermination() async throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let events = app.lifecycleEvents()
        try host.moveToBackground()
        try host.moveToForeground()
        try host.terminate()
        var received: [LifecycleEvent.Name] = []
        for await event in events { received.append(event.name) }
        #expect(received == [.sceneWillResignActive, .willResignActive, .sceneDidEnterBackground, .didEnterBackground,
                             .sceneWillEnterForeground, .willEnterForeground, .sceneDidBecomeActive, .didBecomeActive,
                             .sceneWillResignActive, .willResignActive, .sceneDidEnterBackground, .didEnterBackground,
                             .sceneDidDisconnect, .willTerminate])
        var afterwards: [LifecycleEvent] = []
        for await event in app.lifecycleEvents() { afterwards.append(event) }
        #expect(afterwards.isEmpty)
    }

    @Test func pipelineObserversSeeEveryStepInOrder() throws {
        let app = Application(delegate: RecordingApplicationDelegate(log: log), clock: TestClock())
        var steps: [String] = []
        let token = app.addPipelineObserver { stage, event in steps.append("\(stage)|\(event.name.rawValue)") }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        #expect(steps == ["app|willFinishLaunching", "app|didFinishLaunching"]
                + Array(repeating: ["bootLoader|phase", "bootLoader|phaseEnded"], count: 6).flatMap { $0 } + [
                          "listeners|didFinishLaunching",
                          "app|configurationForConnecting", "scene-1|sceneWillConnect", "listeners|sceneWillConnect",
                          "scene-1|sceneWillEnterForeground", "listeners|sceneWillEnterForeground",
                          "scene-1|sceneDidBecomeActive", "listeners|sceneDidBecomeActive", "listeners|didBecomeActive"])
        withExtendedLifetime(token) {}
    }
}
