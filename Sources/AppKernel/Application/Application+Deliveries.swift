import Foundation

extension Application {
    // MARK: Launch

    /// willFinishLaunching → [before → handle → didFinishLaunching → BootLoader → listeners →
    /// after] → the first scene, or (apps without scenes) the launch's URL / activity / quick
    /// action and didBecomeActive. A `handle` hook that stops the launch answers the system and
    /// skips the rest of the bracket, the BootLoader included. A background launch connects no
    /// scene, defers the BootLoader to the first didBecomeActive, and delivers its remote
    /// notification or fetch.
    func performLaunch(_ options: LaunchOptions, inBackground: Bool) -> Bool {
        Application.launchObservers.notify(self)
        launchOptions = options
        setState(inBackground ? .background : .inactive)
        observe(.applicationDelegate, .willFinishLaunching(options))
        let willFinish = delegate.application(self, willFinishLaunchingWithOptions: options)
        didFinishLaunchingBegan = true
        // The BootLoader is the framework's part of the default work (mPaaS runs it from its
        // didFinishLaunching), so listeners hear didFinishLaunching once it has begun.
        let delivery = publish(.didFinishLaunching, options, to: .applicationDelegate, runAfterHooks: false) { _ in
            let answer = delegate.application(self, didFinishLaunchingWithOptions: options)
            if !inBackground {
                bootLoader.run(in: self) { [weak self] in self?.runAfterHooksNow(.didFinishLaunching, options) }
            }
            return answer
        }
        // Either launch method answering false refuses the launch's URL, activity and quick
        // action (UIKit); scene apps get them in the first scene's connection options instead.
        let accepted: Bool
        switch delivery {
        case .stopped(let result):
            accepted = result.answer ?? true
        case .delivered(let didFinish):
            accepted = willFinish && didFinish
            if inBackground {
                bootLoaderPending = true
                runAfterHooksNow(.didFinishLaunching, options)
            }
        }
        if inBackground {
            if accepted, let payload = options.remoteNotification {
                let completion = Completion<BackgroundFetchResult>(event: "remoteNotification", fallback: .failed)
                launchCompletion = completion
                receiveRemoteNotification(payload, completion: completion)
            } else if accepted, options.backgroundFetch {
                let completion = Completion<BackgroundFetchResult>(event: "backgroundFetch", fallback: .failed)
                launchCompletion = completion
                performFetch(completion: completion)
            }
        } else if configuration.usesScenes {
            connectScene(options: options.sceneConnectionOptions, session: nil, inForeground: true)
        } else {
            if accepted {
                if let url = options.url {
                    openURL(url, options: OpenURLOptions(sourceApplication: options.sourceApplication), in: nil)
                }
                if let activity = options.userActivity { continueUserActivity(activity, in: nil) }
                if let item = options.shortcutItem {
                    performShortcutItem(item, in: nil, completion: Completion(event: "performShortcutItem", fallback: false))
                }
            }
            step(.didBecomeActive)
        }
        return accepted
    }

    /// The first didBecomeActive after a background launch runs the BootLoader (mPaaS: "if the
    /// app is not fully loaded yet").
    func runPendingBootLoader() {
        guard bootLoaderPending else { return }
        bootLoaderPending = false
        bootLoader.run(in: self) {}
    }

    // MARK: URLs, activities, quick actions

    /// The scene a delivery goes to when the host names none: the active one, else one on
    /// screen, else the first connected.
    func targetScene(_ named: Scene?) -> Scene? {
        named ?? connectedScenes.first { $0.activationState == .foregroundActive }
            ?? connectedScenes.first { $0.activationState.isForeground }
            ?? connectedScenes.first
    }

    /// A stage that names the scene's delegate, when it has one.
    private func stage(of scene: Scene) -> PipelineStage? {
        scene.delegate.map { _ in .sceneDelegate(scene.id) }
    }

    @discardableResult
    func openURL(_ url: URL, options: OpenURLOptions, in named: Scene?) -> Bool {
        guard configuration.usesScenes else {
            return inForeground(nil) {
                let request = OpenURLRequest(url: url, options: options, scene: nil)
                return publish(.openURL, request, to: .applicationDelegate) { _ in
                    delegate.application(self, open: request.url, options: request.options)
                }.answer()
            }
        }
        guard let scene = targetScene(named) else {
            connectScene(options: SceneConnectionOptions(urlContexts: [OpenURLContext(url: url, options: options)],
                                                         sourceApplication: options.sourceApplication),
                         session: nil, inForeground: true)
            return true
        }
        return inForeground(scene) {
            let request = OpenURLRequest(url: url, options: options, scene: scene)
            let delegate = scene.delegate
            return publish(.openURL, request, to: stage(of: scene)) { _ in
                delegate?.scene(scene, openURLContexts: [OpenURLContext(url: request.url, options: request.options)])
                return delegate != nil
            }.answer()
        }
    }

    /// The restoration handler (kept in `restoration`, a fresh one when the host gave none) goes
    /// to the hooks and, in apps without scenes, to the delegate; UIKit's scene delegate has none.
    @discardableResult
    func continueUserActivity(_ activity: UserActivity, in named: Scene?, restoration: UserActivityRestoration? = nil) -> Bool {
        let restoration = restoration ?? UserActivityRestoration()
        restoration.application = self
        restoration.activityType = activity.activityType
        let restorationHandler = restoration.handler
        guard configuration.usesScenes else {
            return inForeground(nil) {
                let request = UserActivityRequest(userActivity: activity, scene: nil, restorationHandler: restorationHandler)
                return publish(.continueUserActivity, request, to: .applicationDelegate) { _ in
                    delegate.application(self, continue: activity, restorationHandler: restorationHandler)
                }.answer()
            }
        }
        guard let scene = targetScene(named) else {
            connectScene(options: SceneConnectionOptions(userActivities: [activity]), session: nil, inForeground: true)
            return true
        }
        return inForeground(scene) {
            let delegate = scene.delegate
            let request = UserActivityRequest(userActivity: activity, scene: scene, restorationHandler: restorationHandler)
            return publish(.continueUserActivity, request, to: stage(of: scene)) { _ in
                delegate?.scene(scene, continue: activity)
                return delegate != nil
            }.answer()
        }
    }

    /// A stop answers the quick action for `.returnYes` / `.returnNo`; after `.return` the hook
    /// that took it over answers through the request's completion handler.
    func performShortcutItem(_ item: ShortcutItem, in named: Scene?, completion: Completion<Bool>) {
        track(completion)
        func answerStop(_ delivery: Delivery<Void>) {
            guard case .stopped(let result) = delivery, result != .return, let answer = result.answer else { return }
            completion.handler(answer)
        }
        guard configuration.usesScenes else {
            inForeground(nil) {
                let request = ShortcutItemRequest(shortcutItem: item, scene: nil, completionHandler: completion.handler)
                answerStop(publish(.performShortcutItem, request, to: .applicationDelegate) { _ in
                    delegate.application(self, performActionFor: item, completionHandler: completion.handler)
                })
            }
            return
        }
        guard let scene = targetScene(named) else {
            // The item arrives in the new scene's connection options; the system reports it handled.
            connectScene(options: SceneConnectionOptions(shortcutItem: item), session: nil, inForeground: true)
            completion.answerForApp(true)
            return
        }
        inForeground(scene) {
            let delegate = scene.delegate
            let request = ShortcutItemRequest(shortcutItem: item, scene: scene, completionHandler: completion.handler)
            answerStop(publish(.performShortcutItem, request, to: stage(of: scene)) { _ in
                if let delegate {
                    delegate.windowScene(scene, performActionFor: item, completionHandler: completion.handler)
                } else {
                    completion.answerForApp(false)
                }
            })
        }
    }

    // MARK: Notifications and background fetch

    /// A suspended app is woken in the background; it stays awake until it answers (a system
    /// background task named after the event keeps it running), then gets the grace period.
    /// A hook that stops the event has taken it over and answers through the request.
    func receiveRemoteNotification(_ payload: [String: JSONValue], completion: Completion<BackgroundFetchResult>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        let request = RemoteNotificationRequest(userInfo: payload, completionHandler: completion.handler)
        publish(.didReceiveRemoteNotification, request, to: .applicationDelegate) { _ in
            delegate.application(self, didReceiveRemoteNotification: payload, fetchCompletionHandler: completion.handler)
        }
    }

    func performFetch(completion: Completion<BackgroundFetchResult>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        publish(.performFetch, BackgroundFetchRequest(completionHandler: completion.handler), to: .applicationDelegate) { _ in
            delegate.application(self, performFetchWithCompletionHandler: completion.handler)
        }
    }

    /// A paired watch app's request, handled like a remote notification: a suspended app is woken
    /// in the background and kept awake until it replies; a hook that stops the request has
    /// taken it over and replies through it (mPaaS: Return — the app handled it fully).
    func handleWatchKitExtensionRequest(_ userInfo: [String: JSONValue], completion: Completion<[String: JSONValue]>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        let request = WatchKitExtensionRequest(userInfo: userInfo, reply: completion.handler)
        publish(.handleWatchKitExtensionRequest, request, to: .applicationDelegate) { _ in
            delegate.application(self, handleWatchKitExtensionRequest: userInfo, reply: completion.handler)
        }
    }

    /// A local notification reaches the app delegate; a backgrounded app comes forward around
    /// the delivery, as when the user taps the notification.
    func receiveLocalNotification(_ notification: LocalNotification) {
        if configuration.usesScenes, connectedScenes.isEmpty {
            connectScene(options: SceneConnectionOptions(), session: nil, inForeground: true)
        }
        inForeground(configuration.usesScenes ? targetScene(nil) : nil) {
            publish(.didReceiveLocalNotification, notification, to: .applicationDelegate) { _ in
                delegate.application(self, didReceive: notification)
            }
        }
    }

    /// An action of a local notification is handled where the app is (a suspended app is woken).
    func handleLocalNotificationAction(_ identifier: String, _ notification: LocalNotification, completion: Completion<Void>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        let handler: @MainActor @Sendable () -> Void = { completion.handler(()) }
        let request = LocalNotificationActionRequest(identifier: identifier, notification: notification, completionHandler: handler)
        publish(.handleLocalNotificationAction, request, to: .applicationDelegate) { _ in
            delegate.application(self, handleActionWithIdentifier: identifier, for: notification, completionHandler: handler)
        }
    }

    /// Arms the completion's deadline and makes termination answer it.
    func track<Value>(_ completion: Completion<Value>) {
        completion.application = self
        guard !completion.isCompleted else { return }
        let key = ObjectIdentifier(completion)
        pendingCompletions[key] = (completion.event, { completion.abandon() })
        completion.onFinish.append { [weak self] _ in self?.pendingCompletions[key] = nil }
        completion.arm(clock: clock, after: configuration.completionDeadline)
    }

    private func keepAwake<Value>(until completion: Completion<Value>) {
        track(completion)
        let task = beginBackgroundTask(name: completion.event, system: true) { completion.abandon() }
        completion.onFinish.append { [weak self] _ in self?.endBackgroundTask(task) }
    }
}
