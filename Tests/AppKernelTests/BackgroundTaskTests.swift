import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// Exhaustive (issue 31): each test's host and clock are its `AppKernelTest`'s.
@Suite(.appKernel) @MainActor
struct BackgroundTaskTests {
    let clock = AppKernelTest.current.clock
    let host = AppKernelTest.current.host

    func backgroundedApp() throws -> Application {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        try host.moveToBackground()
        host.trace.clear()
        return app
    }

    @Test func anAppWithNoTaskIsSuspendedAfterTheGracePeriodAndNotBefore() async throws {
        let app = try backgroundedApp()
        await clock.advance(by: .milliseconds(4_999))
        #expect(app.state == .background)
        await clock.advance(by: .milliseconds(1))
        #expect(app.state == .suspended)
        #expect(host.trace.take() == ["system.didSuspend"])
        try clock.checkNothingPending()
    }

    @Test func theGracePeriodAndAllowanceAreConfigurable() async throws {
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(backgroundTaskAllowance: .seconds(10),
                                                                                      suspensionGracePeriod: .seconds(1)))
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        try host.moveToBackground()
        await clock.advance(by: .seconds(1))
        #expect(app.state == .suspended)
        try host.moveToForeground()
        try host.moveToBackground()
        var expired = false
        _ = app.beginBackgroundTask { expired = true }
        await clock.advance(by: .seconds(10))
        #expect(expired)
        #expect(app.state == .suspended)
    }

    @Test func aRunningTaskKeepsTheAppAwakeUntilItEnds() async throws {
        let app = try backgroundedApp()
        let task = app.beginBackgroundTask(name: "save")
        await clock.advance(by: .seconds(20))
        #expect(app.state == .background)
        #expect(app.backgroundTimeRemaining == .seconds(10))
        app.endBackgroundTask(task)
        #expect(app.state == .suspended, "the last task ending suspends at once")
        #expect(app.diagnostics.isEmpty)
        try clock.checkNothingPending()
        #expect(host.trace.take() == ["system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func theAllowanceIsCountedFromEnteringTheBackground() async throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var expired: [String] = []
        let early = app.beginBackgroundTask(name: "early") { expired.append("early") }
        #expect(app.backgroundTimeRemaining == Application.unlimitedBackgroundTime)
        await clock.advance(by: .seconds(100))
        #expect(expired.isEmpty, "tasks do not expire in the foreground")
        try host.moveToBackground()
        await clock.advance(by: .seconds(10))
        let late = app.beginBackgroundTask(name: "late") { expired.append("late") }
        #expect(app.backgroundTimeRemaining == .seconds(20))
        await clock.advance(by: .seconds(20))
        #expect(expired == ["early", "late"], "handlers run in the order the tasks began")
        #expect(app.state == .suspended)
        #expect(app.diagnostics.map(\.kind) == [.backgroundTaskExpired, .backgroundTaskExpired])
        #expect(app.diagnostics.map(\.subject) == ["early", "late"])
        #expect(app.runningBackgroundTasks.isEmpty)
        _ = (early, late)
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)", "system.backgroundTaskExpired(early)", "system.backgroundTaskExpired(late)", "system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func aHandlerThatEndsItsTaskLeavesNoDiagnostic() async throws {
        let app = try backgroundedApp()
        let task = app.beginBackgroundTask(name: "upload") { task in app.endBackgroundTask(task) }
        #expect(task != .invalid)
        await clock.advance(by: .seconds(30))
        #expect(app.state == .suspended)
        #expect(app.diagnostics.isEmpty)
        #expect(host.trace.take() == ["system.backgroundTaskExpired(upload)", "system.didSuspend"])
    }

    @Test func returningToTheForegroundStopsTheExpiryClock() async throws {
        let app = try backgroundedApp()
        var expired = false
        let task = app.beginBackgroundTask { expired = true }
        await clock.advance(by: .seconds(29))
        try host.moveToForeground()
        await clock.advance(by: .seconds(60))
        #expect(!expired)
        try host.moveToBackground()
        #expect(app.backgroundTimeRemaining == .seconds(30), "a new background period has a fresh allowance")
        await clock.advance(by: .seconds(30))
        #expect(expired)
        _ = task
        #expect(host.trace.take() == ["system.backgroundTaskExpired(task-1)", "system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func endingAnUnknownOrEndedTaskIsANoOpWithADiagnostic() throws {
        let app = try backgroundedApp()
        let task = app.beginBackgroundTask(name: "one")
        let other = app.beginBackgroundTask(name: "two")
        app.endBackgroundTask(task)
        app.endBackgroundTask(task)
        app.endBackgroundTask(BackgroundTaskIdentifier(rawValue: 999))
        app.endBackgroundTask(.invalid)
        #expect(app.state == .background, "'two' still runs")
        #expect(app.runningBackgroundTasks == [other])
        #expect(app.diagnostics.map(\.kind) == [.unknownBackgroundTaskEnded, .unknownBackgroundTaskEnded])
        #expect(app.diagnostics.map(\.subject) == ["task-1", "task-999"])
        app.endBackgroundTask(other)
        #expect(app.state == .suspended)
        #expect(host.trace.take() == ["system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func aSuspendedOrTerminatedAppCannotBeginATask() async throws {
        let app = try backgroundedApp()
        await clock.advance(by: .seconds(5))
        #expect(app.beginBackgroundTask(name: "late") == .invalid)
        #expect(app.backgroundTimeRemaining == .zero)
        try host.terminate()
        #expect(app.beginBackgroundTask() == .invalid)
        #expect(app.diagnostics.map(\.kind) == [.backgroundTaskRefused, .backgroundTaskRefused])
        let before = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        #expect(before.beginBackgroundTask() == .invalid)
        #expect(before.backgroundTimeRemaining == .zero)
        #expect(host.trace.take() == ["system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func aTaskEndedInsideACallbackSuspendsOnlyAfterTheDelivery() throws {
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        var statesSeen: [ApplicationState] = []
        let token = app.addListener(for: .sceneDidEnterBackground) { _ in
            app.endBackgroundTask(app.beginBackgroundTask(name: "quick"))
            statesSeen.append(app.state)
        }
        let after = app.addListener(for: .didEnterBackground) { app in statesSeen.append(app.state) }
        try host.moveToBackground()
        #expect(statesSeen == [.background, .background], "suspension waits until the transition is delivered")
        #expect(app.state == .suspended)
        withExtendedLifetime([token, after]) {}
        #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)", "system.didSuspend"], "the whole trace (exhaustive, issue 31)")
    }

    @Test func identifiersDescribeThemselves() {
        #expect(BackgroundTaskIdentifier.invalid.description == "invalid")
        #expect(BackgroundTaskIdentifier(rawValue: 3).description == "task-3")
    }
}

@MainActor
struct CompletionTests {
    let clock = TestClock()
    let log = CallLog()

    @Test func aRemoteNotificationReturnsTheResultTheAppReported() async throws {
        let host = SimulatedHost(clock: clock)
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        #expect(try await host.deliverRemoteNotification(samplePayload) == .newData)
        await #expect(throws: ApplicationError.self, "the system fetches only for apps in the background") {
            try await host.performBackgroundFetch()
        }
        #expect(app.state == .active)
    }

    @Test func aFetchInTheBackgroundReturnsTheAppsAnswer() async throws {
        let host = SimulatedHost(clock: clock)
        try host.launch(delegate: RecordingApplicationDelegate(log: log))
        try host.moveToBackground()
        #expect(try await host.performBackgroundFetch() == .newData)
    }

    @Test func aNotificationWakesASuspendedAppWhichSuspendsAgainAfterAnsweringAndTheGracePeriod() async throws {
        let host = SimulatedHost(clock: clock)
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.fetchAnswer = nil
        let app = try host.launch(delegate: delegate)
        try host.moveToBackground()
        await clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
        let completion = Completion<BackgroundFetchResult>(event: "push", fallback: .failed)
        try host.send(.remoteNotification(samplePayload, completion: completion))
        #expect(app.state == .background)
        #expect(app.runningBackgroundTasks.count == 1, "the system keeps the app awake until it answers")
        await clock.advance(by: .seconds(10))
        #expect(app.state == .background)
        let answer = try #require(delegate.pendingFetchHandlers.first)
        answer(.newData)
        #expect(completion.result == .newData)
        #expect(completion.answeredByApp)
        await clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
    }

    /// A launched app whose delegate keeps the completion handler of a push it was sent.
    func pushAwaitingAnAnswer() throws -> (Application, RecordingApplicationDelegate, Completion<BackgroundFetchResult>) {
        let host = SimulatedHost(clock: clock)
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.fetchAnswer = nil
        let app = try host.launch(delegate: delegate)
        let completion = Completion<BackgroundFetchResult>(event: "push", fallback: .failed)
        try host.send(.remoteNotification(samplePayload, completion: completion))
        return (app, delegate, completion)
    }

    @Test func aCompletionCalledTwiceKeepsTheFirstAnswer() async throws {
        let (app, delegate, completion) = try pushAwaitingAnAnswer()
        let handler = try #require(delegate.pendingFetchHandlers.first)
        handler(.noData)
        handler(.newData)
        #expect(await completion.value() == .noData)
        #expect(app.diagnostics.map(\.kind) == [.completionCalledTwice])
        #expect(app.diagnostics.first?.subject == "push")
    }

    @Test func aCompletionNeverCalledIsAnsweredBySystemAtTheDeadline() async throws {
        let (app, delegate, completion) = try pushAwaitingAnAnswer()
        await clock.advance(by: .seconds(29))
        #expect(!completion.isCompleted)
        await clock.advance(by: .seconds(1))
        #expect(completion.result == .failed)
        #expect(!completion.answeredByApp)
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded])
        delegate.pendingFetchHandlers.first?(.newData)  // too late: ignored, reported
        #expect(completion.result == .failed)
        #expect(app.diagnostics.map(\.kind) == [.completionDeadlineExceeded, .completionCalledTwice])
    }

    @Test func theHostsAwaitEndsAtTheDeadlineWhenTheAppNeverAnswers() async throws {
        let host = SimulatedHost(clock: clock)
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.fetchAnswer = nil
        try host.launch(delegate: delegate)
        try host.moveToBackground()
        async let result = host.performBackgroundFetch()
        let clock = self.clock
        let advancer = Task { @MainActor in
            while clock.pendingCount == 0 || clock.nextDeadline?.offset != .seconds(30) { await Task.yield() }
            await clock.advance(by: .seconds(30))
        }
        #expect(try await result == .failed)
        await advancer.value
    }

    @Test func aQuickActionCompletionAnswersOnceAndDefaultsToFalse() async throws {
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        let delegate = RecordingApplicationDelegate(log: log)
        delegate.shortcutAnswer = nil
        let app = try host.launch(delegate: delegate)
        let completion = Completion<Bool>(event: "performShortcutItem", fallback: false)
        try host.send(.performShortcutItem(sampleShortcut, scene: nil, completion: completion))
        let handler = try #require(delegate.pendingShortcutHandlers.first)
        handler(true)
        handler(false)
        #expect(completion.result == true)
        #expect(app.diagnostics.map(\.kind) == [.completionCalledTwice])
        let defaults = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        try defaults.launch(delegate: DefaultApplicationDelegate())
        #expect(try await defaults.performShortcutItem(sampleShortcut) == false)
    }

    @Test func defaultDelegateAnswersNoDataAndNotHandled() async throws {
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: false))
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        #expect(try await host.deliverRemoteNotification(samplePayload) == .noData)
        #expect(try host.open(sampleURL) == false)
        #expect(try host.continueUserActivity(sampleActivity) == false)
        try host.moveToBackground()
        #expect(try await host.performBackgroundFetch() == .noData)
        #expect(app.diagnostics.isEmpty)
    }
}

@MainActor
struct RemoteNotificationRegistrationTests {
    let log = CallLog()

    @Test func theHostAnswersARegistrationTheAppAskedFor() throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        log.lines.removeAll()
        let error = #expect(throws: ApplicationError.self) {
            try host.completeRemoteNotificationRegistration(deviceToken: Data([1]))
        }
        #expect(error?.code == .remoteNotificationsNotRequested)
        #expect(error?.description.contains("registerForRemoteNotifications()") == true)
        #expect(log.lines.isEmpty)
        app.registerForRemoteNotifications()
        #expect(app.hasRequestedRemoteNotifications)
        try host.completeRemoteNotificationRegistration(deviceToken: Data([1, 2, 3, 4]))
        #expect(app.isRegisteredForRemoteNotifications)
        try host.failRemoteNotificationRegistration(RemoteNotificationRegistrationError(reason: "no network"))
        #expect(!app.isRegisteredForRemoteNotifications)
        #expect(log.take() == ["app.didRegister(4 bytes)", "app.didFailToRegister(no network)"])
        app.unregisterForRemoteNotifications()
        #expect(throws: ApplicationError.self) { try host.completeRemoteNotificationRegistration(deviceToken: Data([1])) }
        #expect(RemoteNotificationRegistrationError(reason: "x").description == "remote-notification registration failed: x")
    }
}
