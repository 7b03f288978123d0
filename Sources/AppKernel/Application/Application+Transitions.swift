/// One step of a foreground/background transition, for a scene or (apps without scenes) for the
/// application itself. "Will" steps call back before the state changes, "did" steps after.
enum TransitionStep {
    case willEnterForeground, didBecomeActive, willResignActive, didEnterBackground

    var isWill: Bool { self == .willEnterForeground || self == .willResignActive }

    var sceneTarget: SceneActivationState {
        switch self {
        case .willEnterForeground, .willResignActive: .foregroundInactive
        case .didBecomeActive: .foregroundActive
        case .didEnterBackground: .background
        }
    }

    var applicationTarget: ApplicationState {
        switch self {
        case .willEnterForeground, .willResignActive: .inactive
        case .didBecomeActive: .active
        case .didEnterBackground: .background
        }
    }

    var sceneEvent: ApplicationEvent<Scene> {
        switch self {
        case .willEnterForeground: .sceneWillEnterForeground
        case .didBecomeActive: .sceneDidBecomeActive
        case .willResignActive: .sceneWillResignActive
        case .didEnterBackground: .sceneDidEnterBackground
        }
    }

    var applicationEvent: ApplicationEvent<Application> {
        switch self {
        case .willEnterForeground: .willEnterForeground
        case .didBecomeActive: .didBecomeActive
        case .willResignActive: .willResignActive
        case .didEnterBackground: .didEnterBackground
        }
    }

    /// The application-level step a change of the application's state amounts to, if any.
    static func between(_ old: ApplicationState, _ new: ApplicationState) -> TransitionStep? {
        switch (old, new) {
        case (.active, .inactive): .willResignActive
        case (.inactive, .active): .didBecomeActive
        case (.inactive, .background): .didEnterBackground
        case (.background, .inactive), (.suspended, .inactive): .willEnterForeground
        default: nil
        }
    }

    @MainActor func call(_ delegate: any SceneDelegate, _ scene: Scene) {
        switch self {
        case .willEnterForeground: delegate.sceneWillEnterForeground(scene)
        case .didBecomeActive: delegate.sceneDidBecomeActive(scene)
        case .willResignActive: delegate.sceneWillResignActive(scene)
        case .didEnterBackground: delegate.sceneDidEnterBackground(scene)
        }
    }

    @MainActor func call(_ delegate: any ApplicationDelegate, _ application: Application) {
        switch self {
        case .willEnterForeground: delegate.applicationWillEnterForeground(application)
        case .didBecomeActive: delegate.applicationDidBecomeActive(application)
        case .willResignActive: delegate.applicationWillResignActive(application)
        case .didEnterBackground: delegate.applicationDidEnterBackground(application)
        }
    }
}

extension Application {
    // MARK: Whole transitions

    func enterForeground(_ only: Scene?) {
        guard configuration.usesScenes else {
            step(.willEnterForeground)
            step(.didBecomeActive)
            return
        }
        let targets = only.map { [$0] } ?? connectedScenes.filter { $0.activationState == .background }
        if targets.isEmpty {
            // Nothing to bring back (a background launch, or every scene was disconnected): the
            // system makes a new scene, as when the user taps the app's icon.
            connectScene(options: SceneConnectionOptions(), session: nil, inForeground: true)
            return
        }
        for scene in targets { step(scene, .willEnterForeground) }
        for scene in targets { step(scene, .didBecomeActive) }
    }

    func enterBackground(_ only: Scene?) {
        guard configuration.usesScenes else {
            if state == .active { step(.willResignActive) }
            if state == .inactive { step(.didEnterBackground) }
            return
        }
        let targets = only.map { [$0] } ?? connectedScenes.filter { $0.activationState.isForeground }
        for scene in targets where scene.activationState == .foregroundActive { step(scene, .willResignActive) }
        for scene in targets where scene.activationState.isForeground { step(scene, .didEnterBackground) }
    }

    func resignActive(_ only: Scene?) {
        guard configuration.usesScenes else { return step(.willResignActive) }
        for scene in only.map({ [$0] }) ?? connectedScenes where scene.activationState == .foregroundActive {
            step(scene, .willResignActive)
        }
    }

    func becomeActive(_ only: Scene?) {
        guard configuration.usesScenes else { return step(.didBecomeActive) }
        for scene in only.map({ [$0] }) ?? connectedScenes where scene.activationState == .foregroundInactive {
            step(scene, .didBecomeActive)
        }
    }

    /// Runs `deliver` with `scene` (or, without scenes, the app) in the foreground: a background
    /// target is brought forward first and activated after, as UIKit does for URLs, activities
    /// and quick actions (willEnterForeground → delivery → didBecomeActive).
    @discardableResult
    func inForeground<R>(_ scene: Scene?, _ deliver: () -> R) -> R {
        let needsForeground = scene.map { $0.activationState == .background } ?? !state.isForeground
        guard needsForeground else { return deliver() }
        if let scene { step(scene, .willEnterForeground) } else { step(.willEnterForeground) }
        let result = deliver()
        if let scene {
            if scene.activationState == .foregroundInactive { step(scene, .didBecomeActive) }
        } else if state == .inactive {
            step(.didBecomeActive)
        }
        return result
    }

    // MARK: Single steps

    /// A scene's step: the scene's callback, then the application-level event if the app's
    /// derived state changes with it.
    func step(_ scene: Scene, _ step: TransitionStep) {
        let before = state
        if !step.isWill {
            scene.activationState = step.sceneTarget
            setState(derivedState())
        }
        publish(step.sceneEvent, scene, to: scene.delegate.map { _ in .sceneDelegate(scene.id) }) { scene in
            if let delegate = scene.delegate { step.call(delegate, scene) }
        }
        let after = step.isWill ? derivedState(assuming: scene, is: step.sceneTarget) : state
        if let appStep = TransitionStep.between(before, after) {
            // Scene apps hear application-level transitions through hooks and listeners only,
            // as in UIKit.
            publish(appStep.applicationEvent, self, to: nil) { app in
                if appStep == .didBecomeActive { app.runPendingBootLoader() }
            }
        }
        if step.isWill {
            scene.activationState = step.sceneTarget
            setState(derivedState())
        }
    }

    /// An application-level step, for apps without scenes.
    func step(_ step: TransitionStep) {
        if !step.isWill { setState(step.applicationTarget) }
        publish(step.applicationEvent, self, to: .applicationDelegate) { app in
            if step == .didBecomeActive { app.runPendingBootLoader() }
            step.call(app.delegate, app)
        }
        if step.isWill { setState(step.applicationTarget) }
    }

    /// UIKit's rule: active if any scene is active, inactive if any is on screen, else background.
    func derivedState(assuming changed: Scene? = nil, is changedState: SceneActivationState? = nil) -> ApplicationState {
        var anyActive = false
        var anyForeground = false
        for scene in connectedScenes {
            let sceneState = scene === changed ? (changedState ?? scene.activationState) : scene.activationState
            anyActive = anyActive || sceneState == .foregroundActive
            anyForeground = anyForeground || sceneState.isForeground
        }
        return anyActive ? .active : anyForeground ? .inactive : .background
    }

    /// Changes the state and starts or stops background execution accordingly.
    func setState(_ new: ApplicationState) {
        let old = state
        guard old != new else { return }
        state = new
        if new == .background && old != .suspended {
            beginBackgroundExecution()
        } else if new.isForeground && (old == .background || old == .suspended) {
            endBackgroundExecution()
        }
    }

    /// A suspended app woken by an event runs in the background again, with a fresh allowance.
    func wakeIfSuspended() {
        guard state == .suspended else { return }
        state = .background
        beginBackgroundExecution()
    }

    // MARK: Scenes

    @discardableResult
    func connectScene(options: SceneConnectionOptions, session existing: SceneSession?, inForeground: Bool) -> Scene {
        if !inForeground { wakeIfSuspended() }
        let session = existing ?? makeSession()
        observe(.applicationDelegate, .configurationForConnecting(session: session.persistentIdentifier))
        let configuration = delegate.application(self, configurationForConnecting: session, options: options)
        session.configuration = configuration
        let scene = Scene(session: session, application: self)
        scene.delegate = configuration.delegateFactory?()
        session.scene = scene
        connectedScenes.append(scene)
        let delegate = scene.delegate
        publish(.sceneWillConnect, scene, to: delegate.map { _ in .sceneDelegate(scene.id) }) { _ in
            delegate?.scene(scene, willConnectTo: session, options: options)
        }
        if inForeground {
            step(scene, .willEnterForeground)
            step(scene, .didBecomeActive)
        } else {
            scene.activationState = .background
        }
        return scene
    }

    private func makeSession() -> SceneSession {
        let session = SceneSession(persistentIdentifier: "scene-\(nextSessionNumber)", role: .windowApplication)
        nextSessionNumber += 1
        openSessions.append(session)
        return session
    }

    /// Disconnects a scene: a foreground scene resigns and enters the background first.
    func disconnect(_ scene: Scene) {
        if scene.activationState == .foregroundActive { step(scene, .willResignActive) }
        if scene.activationState.isForeground { step(scene, .didEnterBackground) }
        let delegate = scene.delegate
        publish(.sceneDidDisconnect, scene, to: delegate.map { _ in .sceneDelegate(scene.id) }) { _ in
            delegate?.sceneDidDisconnect(scene)
        }
        release(scene)
    }

    private func release(_ scene: Scene) {
        scene.activationState = .unattached
        scene.detachWindows()
        scene.delegate = nil
        scene.session.scene = nil
        connectedScenes.removeAll { $0 === scene }
    }

    func discardSessions(_ sessions: [SceneSession]) {
        for session in sessions { if let scene = session.scene { disconnect(scene) } }
        let discarded = Set(sessions)
        openSessions.removeAll { discarded.contains($0) }
        observe(.applicationDelegate, .didDiscardSceneSessions(sessions.map(\.persistentIdentifier)))
        delegate.application(self, didDiscardSceneSessions: discarded)
    }

    // MARK: Termination

    /// Terminates like a swipe from the app switcher: resign, enter the background, disconnect
    /// the scenes, then `willTerminate`. A suspended app is ended without callbacks, as on iOS.
    func terminate() {
        if state != .suspended {
            enterBackground(nil)
            for scene in connectedScenes { disconnect(scene) }
            publish(.willTerminate, self, to: .applicationDelegate) { app in app.delegate.applicationWillTerminate(app) }
        }
        for scene in connectedScenes { release(scene) }
        cancelBackgroundTimers()
        backgroundTasks.removeAll()
        backgroundEnteredAt = nil
        state = .terminated
        let pending = pendingCompletions.values
        pendingCompletions.removeAll()
        for completion in pending { completion.abandon() }
        finishStreams()
    }
}
