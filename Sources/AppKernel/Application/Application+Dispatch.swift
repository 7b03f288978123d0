import AppKernelCore
import Foundation

/// What waits in the application's queue: a system event, or a decision of the system's own.
enum QueuedEvent {
    case system(SystemEvent)
    case suspendIfIdle
    case expireBackgroundTasks
}

extension Application {
    /// Processes one system event — the host's single way in.
    ///
    /// The event is checked against ``LifecycleRules`` and the application's scenes first; an
    /// illegal event throws and changes nothing. A legal one runs through the pipeline
    /// synchronously. If it arrives while another event is being delivered (a callback asked the
    /// host for something), it is queued, ``SystemResponse/queued`` is returned, and it runs right
    /// after the current event, FIFO; if it has become illegal by then it is dropped with a
    /// ``Diagnostic`` (`queuedEventRejected`).
    ///
    /// - Throws: ``ApplicationError`` naming the event, the state and the scene or session.
    @discardableResult
    public func handle(_ event: SystemEvent) throws(ApplicationError) -> SystemResponse {
        if dispatch.isDispatching {
            dispatch.enqueue(.system(event))
            return .queued
        }
        try validate(event)
        dispatch.isDispatching = true
        defer { dispatch.isDispatching = false }
        let response = perform(event)
        drainQueue()
        return response
    }

    /// Runs an event of the system's own now, or after the current delivery.
    func enqueue(_ event: QueuedEvent) {
        if dispatch.isDispatching {
            dispatch.enqueue(event)
            return
        }
        dispatch.isDispatching = true
        defer { dispatch.isDispatching = false }
        run(event)
        drainQueue()
    }

    private func drainQueue() {
        guard !dispatch.isEmpty else { return }
        while let event = dispatch.dequeue() { run(event) }
    }

    private func run(_ event: QueuedEvent) {
        switch event {
        case .system(let systemEvent):
            do {
                try validate(systemEvent)
                perform(systemEvent)
            } catch {
                report(.queuedEventRejected, subject: systemEvent.name,
                       "an event requested during another delivery was refused when its turn came: \(error)")
            }
        case .suspendIfIdle:
            suspendIfIdle()
        case .expireBackgroundTasks:
            expireBackgroundTasks()
        }
    }

    /// Checks an event against the legality table and the scenes it names.
    func validate(_ event: SystemEvent) throws(ApplicationError) {
        let kind = event.kind
        func fail(_ code: ApplicationError.Code, _ subject: String? = nil) -> ApplicationError {
            ApplicationError(code: code, event: kind.rawValue, state: state, subject: subject)
        }
        func requireRunning() throws(ApplicationError) {
            if state == .notRunning { throw fail(.notLaunched) }
            if state == .terminated { throw fail(.terminated) }
        }
        func connected(_ id: String) throws(ApplicationError) -> Scene {
            guard configuration.usesScenes else { throw fail(.scenesNotSupported, id) }
            guard let scene = scene(withID: id) else { throw fail(.unknownScene, id) }
            return scene
        }
        // A transition aimed at one scene is judged by that scene's state.
        switch event {
        case .enterForeground(let id?):
            try requireRunning()
            guard try connected(id).activationState == .background else { throw fail(.sceneInWrongState, id) }
            return
        case .enterBackground(let id?):
            try requireRunning()
            guard try connected(id).activationState.isForeground else { throw fail(.sceneInWrongState, id) }
            return
        case .resignActive(let id?):
            try requireRunning()
            guard try connected(id).activationState == .foregroundActive else { throw fail(.sceneInWrongState, id) }
            return
        case .becomeActive(let id?):
            try requireRunning()
            guard try connected(id).activationState == .foregroundInactive else { throw fail(.sceneInWrongState, id) }
            return
        default:
            break
        }
        try LifecycleRules.check(kind, in: state)
        switch event {
        case .openURL(_, _, let id?), .continueUserActivity(_, let id?, _), .performShortcutItem(_, let id?, _):
            _ = try connected(id)
        case .disconnectScene(let id):
            _ = try connected(id)
        case .connectScene(_, let sessionID, _):
            guard configuration.usesScenes else { throw fail(.scenesNotSupported, sessionID) }
            if let sessionID {
                guard let session = session(withID: sessionID) else { throw fail(.unknownSession, sessionID) }
                guard session.scene == nil else { throw fail(.sceneInWrongState, sessionID) }
            }
            if !configuration.supportsMultipleScenes, !connectedScenes.isEmpty {
                throw fail(.multipleScenesNotSupported, sessionID)
            }
        case .discardSessions(let ids):
            for id in ids where session(withID: id) == nil { throw fail(.unknownSession, id) }
        case .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications:
            guard remoteNotificationsRequested else { throw fail(.remoteNotificationsNotRequested) }
        case .becomeActive(nil):
            // In a scene app "inactive" may mean "launching"; there must be a scene to activate.
            if configuration.usesScenes, !connectedScenes.contains(where: { $0.activationState == .foregroundInactive }) {
                throw fail(.illegalInState)
            }
        default:
            break
        }
    }

    @discardableResult
    private func perform(_ event: SystemEvent) -> SystemResponse {
        switch event {
        case .launch(let options, let inBackground):
            let answer = performLaunch(options, inBackground: inBackground)
            launchAnswer = answer
            return .answered(answer)
        case .enterForeground(let id):
            enterForeground(id.flatMap(scene(withID:)))
        case .enterBackground(let id):
            enterBackground(id.flatMap(scene(withID:)))
        case .resignActive(let id):
            resignActive(id.flatMap(scene(withID:)))
        case .becomeActive(let id):
            becomeActive(id.flatMap(scene(withID:)))
        case .memoryWarning:
            publish(.didReceiveMemoryWarning, self, to: .applicationDelegate) { app in
                app.delegate.applicationDidReceiveMemoryWarning(app)
            }
        case .reloadConfiguration:
            publish(.didReceiveReloadRequest, self, to: nil) { _ in }
        case .openURL(let url, let options, let id):
            return .answered(openURL(url, options: options, in: id.flatMap(scene(withID:))))
        case .continueUserActivity(let activity, let id, let restoration):
            return .answered(continueUserActivity(activity, in: id.flatMap(scene(withID:)), restoration: restoration))
        case .performShortcutItem(let item, let id, let completion):
            performShortcutItem(item, in: id.flatMap(scene(withID:)), completion: completion)
        case .registeredForRemoteNotifications(let token):
            isRegisteredForRemoteNotifications = true
            publish(.didRegisterForRemoteNotifications, token, to: .applicationDelegate) { _ in
                delegate.application(self, didRegisterForRemoteNotificationsWithDeviceToken: token)
            }
        case .failedToRegisterForRemoteNotifications(let error):
            isRegisteredForRemoteNotifications = false
            publish(.didFailToRegisterForRemoteNotifications, error, to: .applicationDelegate) { _ in
                delegate.application(self, didFailToRegisterForRemoteNotificationsWithError: error)
            }
        case .remoteNotification(let payload, let completion):
            receiveRemoteNotification(payload, completion: completion)
        case .backgroundFetch(let completion):
            performFetch(completion: completion)
        case .watchKitExtensionRequest(let userInfo, let completion):
            handleWatchKitExtensionRequest(userInfo, completion: completion)
        case .localNotification(let notification):
            receiveLocalNotification(notification)
        case .localNotificationAction(let identifier, let notification, let completion):
            handleLocalNotificationAction(identifier, notification, completion: completion)
        case .connectScene(let options, let sessionID, let inForeground):
            return .connected(connectScene(options: options, session: sessionID.flatMap(session(withID:)),
                                           inForeground: inForeground))
        case .disconnectScene(let id):
            if let scene = scene(withID: id) { disconnect(scene) }
        case .discardSessions(let ids):
            discardSessions(ids.compactMap(session(withID:)))
        case .terminate:
            terminate()
        }
        return .done
    }
}
