/// UIKit's legality table: which system events an application accepts in which state. Pure
/// value logic, so every (state, event) pair can be tested without an application.
///
/// The table is ``isLegal(_:in:)``: one row per ``SystemEvent/Kind`` — launches only when not
/// running, transitions only from the states UIKit moves them from, memory warnings and push
/// registration in the foreground or background (a suspended app gets neither), background
/// fetches in the background or suspended, everything else (a watch app's request among them: a
/// suspended app is woken to answer it) in any running state. A terminated app accepts nothing.
public enum LifecycleRules {
    /// The kinds of ``SystemEvent``: ``SystemEvent/Kind``, the one list of them.
    public typealias EventKind = SystemEvent.Kind

    /// Whether the application accepts an event of `kind` in `state` (for events naming no
    /// scene; an event naming a scene is checked against that scene too).
    public static func isLegal(_ kind: EventKind, in state: ApplicationState) -> Bool {
        switch kind {
        case .launch, .launchInBackground:
            state == .notRunning
        case .enterForeground, .backgroundFetch:
            state == .background || state == .suspended
        case .enterBackground:
            state.isForeground
        case .resignActive:
            state == .active
        case .becomeActive:
            state == .inactive
        case .memoryWarning, .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications:
            state.isForeground || state == .background
        case .openURL, .continueUserActivity, .performShortcutItem, .remoteNotification, .watchKitExtensionRequest,
             .localNotification, .localNotificationAction, .connectScene, .disconnectScene, .discardSessions, .terminate,
             .reloadConfiguration:
            state.isRunning
        }
    }

    /// The states in which the application accepts an event of `kind`.
    public static func legalStates(for kind: EventKind) -> Set<ApplicationState> {
        Set(ApplicationState.allCases.filter { isLegal(kind, in: $0) })
    }

    /// Throws the error the application gives for an event of `kind` in `state`, or returns
    /// when the pair is legal.
    public static func check(_ kind: EventKind, in state: ApplicationState) throws(ApplicationError) {
        if isLegal(kind, in: state) { return }
        let code: ApplicationError.Code =
            switch state {
            case .terminated: .terminated
            case .notRunning: .notLaunched
            default: kind == .launch || kind == .launchInBackground ? .alreadyLaunched : .illegalInState
            }
        throw ApplicationError(code: code, event: kind.rawValue, state: state)
    }

    /// What to do instead, for an event refused in a running state.
    static func hint(forEvent event: String) -> String {
        switch EventKind(rawValue: event) {
        case .enterForeground: "Only a backgrounded or suspended app (or background scene) can enter the foreground; for an interrupted app use becomeActive."
        case .enterBackground: "Only a foreground app (or scene) can enter the background."
        case .resignActive: "Only an active app (or scene) can resign active; to background an inactive app use enterBackground."
        case .becomeActive: "Only an inactive (interrupted) app or scene can become active; from the background use enterForeground."
        case .memoryWarning: "A suspended app receives no memory warning (the system would purge it); wake it first."
        case .backgroundFetch: "The system fetches only for apps in the background or suspended."
        case .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications:
            "A suspended app is not told about registration; bring it to the background or foreground first."
        default: "See LifecycleRules for the table of legal states."
        }
    }
}
