import Foundation

extension Application {
    // MARK: Launch

    /// willFinishLaunching → (listeners) didFinishLaunching → the first scene, or (apps without
    /// scenes) the launch's URL / activity / quick action and didBecomeActive. A background launch
    /// connects no scene and delivers its remote notification or fetch instead.
    func performLaunch(_ options: LaunchOptions, inBackground: Bool) -> Bool {
        launchOptions = options
        setState(inBackground ? .background : .inactive)
        observe(.applicationDelegate, .willFinishLaunching(options))
        let willFinish = delegate.application(self, willFinishLaunchingWithOptions: options)
        let didFinish = publish(.didFinishLaunching, options, to: .applicationDelegate) {
            delegate.application(self, didFinishLaunchingWithOptions: options)
        }
        // Either launch method answering false refuses the launch's URL, activity and quick
        // action (UIKit); scene apps get them in the first scene's connection options instead.
        let accepted = willFinish && didFinish
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

    // MARK: URLs, activities, quick actions

    /// The scene a delivery goes to when the host names none: the active one, else one on
    /// screen, else the first connected.
    func targetScene(_ named: Scene?) -> Scene? {
        named ?? connectedScenes.first { $0.activationState == .foregroundActive }
            ?? connectedScenes.first { $0.activationState.isForeground }
            ?? connectedScenes.first
    }

    @discardableResult
    func openURL(_ url: URL, options: OpenURLOptions, in named: Scene?) -> Bool {
        guard configuration.usesScenes else {
            return inForeground(nil) {
                let request = OpenURLRequest(url: url, options: options, scene: nil)
                return publish(.openURL, request, to: .applicationDelegate) {
                    delegate.application(self, open: request.url, options: request.options)
                }
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
            return publish(.openURL, request, to: delegate.map { _ in .sceneDelegate(scene.id) }) {
                delegate?.scene(scene, openURLContexts: [OpenURLContext(url: request.url, options: request.options)])
                return delegate != nil
            }
        }
    }

    @discardableResult
    func continueUserActivity(_ activity: UserActivity, in named: Scene?) -> Bool {
        guard configuration.usesScenes else {
            return inForeground(nil) {
                publish(.continueUserActivity, UserActivityRequest(userActivity: activity, scene: nil), to: .applicationDelegate) {
                    delegate.application(self, continue: activity)
                }
            }
        }
        guard let scene = targetScene(named) else {
            connectScene(options: SceneConnectionOptions(userActivities: [activity]), session: nil, inForeground: true)
            return true
        }
        return inForeground(scene) {
            let delegate = scene.delegate
            return publish(.continueUserActivity, UserActivityRequest(userActivity: activity, scene: scene),
                           to: delegate.map { _ in .sceneDelegate(scene.id) }) {
                delegate?.scene(scene, continue: activity)
                return delegate != nil
            }
        }
    }

    func performShortcutItem(_ item: ShortcutItem, in named: Scene?, completion: Completion<Bool>) {
        track(completion)
        guard configuration.usesScenes else {
            inForeground(nil) {
                publish(.performShortcutItem, ShortcutItemRequest(shortcutItem: item, scene: nil), to: .applicationDelegate) {
                    delegate.application(self, performActionFor: item, completionHandler: completion.handler)
                }
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
            publish(.performShortcutItem, ShortcutItemRequest(shortcutItem: item, scene: scene),
                    to: delegate.map { _ in .sceneDelegate(scene.id) }) {
                if let delegate {
                    delegate.windowScene(scene, performActionFor: item, completionHandler: completion.handler)
                } else {
                    completion.answerForApp(false)
                }
            }
        }
    }

    // MARK: Remote notifications and background fetch

    /// A suspended app is woken in the background; it stays awake until it answers (a system
    /// background task named after the event keeps it running), then suspends.
    func receiveRemoteNotification(_ payload: [String: JSONValue], completion: Completion<BackgroundFetchResult>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        publish(.didReceiveRemoteNotification, payload, to: .applicationDelegate) {
            delegate.application(self, didReceiveRemoteNotification: payload, fetchCompletionHandler: completion.handler)
        }
    }

    func performFetch(completion: Completion<BackgroundFetchResult>) {
        wakeIfSuspended()
        keepAwake(until: completion)
        publish(.performFetch, self, to: .applicationDelegate) {
            delegate.application(self, performFetchWithCompletionHandler: completion.handler)
        }
    }

    /// Arms the completion's deadline and makes termination answer it.
    func track<Value>(_ completion: Completion<Value>) {
        completion.application = self
        guard !completion.isCompleted else { return }
        let key = ObjectIdentifier(completion)
        pendingCompletions[key] = { completion.abandon() }
        completion.onFinish.append { [weak self] _ in self?.pendingCompletions[key] = nil }
        completion.arm(clock: clock, after: configuration.completionDeadline)
    }

    private func keepAwake(until completion: Completion<BackgroundFetchResult>) {
        track(completion)
        let task = beginBackgroundTask(name: completion.event, system: true) { completion.abandon() }
        completion.onFinish.append { [weak self] _ in self?.endBackgroundTask(task) }
    }
}
