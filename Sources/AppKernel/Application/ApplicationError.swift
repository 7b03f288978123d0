/// Why the application refused a system event. The application's state and scenes are exactly
/// as they were before the refused event.
///
/// The description says what was refused, in which state, and what to do instead:
///
/// ```
/// cannot deliver 'enterForeground' to an application in state 'terminated': a terminated
/// application accepts no events. Launch a new Application to start again.
/// ```
public struct ApplicationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal this is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The event needs a launched application.
        case notLaunched
        /// The application was already launched; an application launches once.
        case alreadyLaunched
        /// The application is terminated and accepts no events.
        case terminated
        /// The event is not legal in the application's current state.
        case illegalInState
        /// The event names a scene that is not connected.
        case unknownScene
        /// The named scene is not in a state the event can apply to.
        case sceneInWrongState
        /// The event names a session that is not open.
        case unknownSession
        /// The app does not use scenes (``ApplicationConfiguration/usesScenes``).
        case scenesNotSupported
        /// A second scene was asked for, but the app supports one
        /// (``ApplicationConfiguration/supportsMultipleScenes``).
        case multipleScenesNotSupported
        /// The host answered a remote-notification registration the app never asked for.
        case remoteNotificationsNotRequested
    }

    /// What kind of refusal this is.
    public var code: Code
    /// The refused event's name (``SystemEvent/name``).
    public var event: String
    /// The application's state when the event was refused.
    public var state: ApplicationState
    /// The scene or session the event named, if any.
    public var subject: String?

    /// Creates an error.
    public init(code: Code, event: String, state: ApplicationState, subject: String? = nil) {
        self.code = code
        self.event = event
        self.state = state
        self.subject = subject
    }

    /// What went wrong, where, and what to do about it.
    public var description: String {
        let head = "cannot deliver '\(event)' to an application in state '\(state)'"
        let subject = self.subject.map { "'\($0)'" } ?? "it"
        switch code {
        case .notLaunched:
            return "\(head): the application has not been launched. Launch it first (SimulatedHost.launch, or the 'launch' system event)."
        case .alreadyLaunched:
            return "\(head): an application launches exactly once. Terminate it and launch a new Application to relaunch."
        case .terminated:
            return "\(head): a terminated application accepts no events. Launch a new Application to start again."
        case .illegalInState:
            return "\(head): UIKit does not allow this transition. \(LifecycleRules.hint(forEvent: event))"
        case .unknownScene:
            return "\(head): scene \(subject) is not connected. Use one of Application.connectedScenes, or connect it first."
        case .sceneInWrongState:
            return "\(head): scene \(subject) is not in a state this event applies to. \(LifecycleRules.hint(forEvent: event))"
        case .unknownSession:
            return "\(head): session \(subject) is not open. Use one of Application.openSessions."
        case .scenesNotSupported:
            return "\(head): the app does not use scenes (ApplicationConfiguration.usesScenes is false). Enable scenes or drive the app-level events."
        case .multipleScenesNotSupported:
            return "\(head): a scene is already connected and ApplicationConfiguration.supportsMultipleScenes is false."
        case .remoteNotificationsNotRequested:
            return "\(head): the app never called registerForRemoteNotifications(). Call it before the host answers the registration."
        }
    }
}
