import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// Every (state, event) pair, for apps with scenes and apps without: a legal pair produces
/// UIKit's callbacks in UIKit's order and the expected state; an illegal one throws a typed
/// error and changes nothing (state, scenes, sessions, callbacks).
struct StateEventRow: Sendable, CustomTestStringConvertible {
    enum Outcome: Sendable {
        case legal(ApplicationState, [String])
        case illegal(ApplicationError.Code)
    }
    let state: ApplicationState
    let event: LifecycleRules.EventKind
    let outcome: Outcome
    var testDescription: String { "\(state) × \(event.rawValue)" }
}

private typealias K = LifecycleRules.EventKind

/// A running application refuses a second launch as "already launched".
private func launchRefusal(_ state: ApplicationState, _ kind: K) -> ApplicationError.Code? {
    state.isRunning && (kind == .launch || kind == .launchInBackground) ? .alreadyLaunched : nil
}

private let connectScene2 = ["app.configurationForConnecting(scene-2)", "scene-2.willConnect",
                             "scene-2.willEnterForeground", "scene-2.didBecomeActive"]
private let launchInForeground = ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)",
                                  "scene-1.willConnect", "scene-1.willEnterForeground", "scene-1.didBecomeActive"]

/// The deliveries that reach the application delegate in any kind of app and leave the state as
/// it is: in a foreground state, and (without memory warnings and push registration, which a
/// suspended app does not get) in the background.
private func withAppDelegateDeliveries(_ own: [K: (ApplicationState, [String])], in state: ApplicationState)
    -> [K: (ApplicationState, [String])] {
    own.merging(appDelegateDeliveries(in: state)) { own, _ in own }
}

private func appDelegateDeliveries(in state: ApplicationState) -> [K: (ApplicationState, [String])] {
    var rows: [K: (ApplicationState, [String])] = [
        .memoryWarning: (state, ["app.memoryWarning"]),
        .registeredForRemoteNotifications: (state, ["app.didRegister(4 bytes)"]),
        .failedToRegisterForRemoteNotifications: (state, ["app.didFailToRegister(offline)"]),
        .remoteNotification: (state, ["app.didReceiveRemoteNotification"]),
        // A watch app's request (issue 34) reaches the app delegate in any running state; a
        // suspended app is woken in the background to reply (UIKit: the app is likely in the
        // background when it is asked).
        .watchKitExtensionRequest: (state, ["app.handleWatchKitExtensionRequest"]),
        .localNotificationAction: (state, ["app.handleAction(reply,n1)"]),
    ]
    if state.isForeground { rows[.localNotification] = (state, ["app.didReceiveLocal(n1)"]) }
    if !state.isForeground { rows[.backgroundFetch] = (state, ["app.performFetch"]) }
    if state == .suspended {   // woken in the background; no warnings or registrations while suspended
        rows = rows.filter { ![.memoryWarning, .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications].contains($0.key) }
            .mapValues { (_, trace) in (.background, trace) }
    }
    rows[.reloadConfiguration] = (state, [])   // listeners and hooks only; it wakes nothing
    return rows
}

/// The scene-app table, written from UIKit's documented behaviour.
let sceneAppTable: [StateEventRow] = {
    var rows: [StateEventRow] = []
    func add(_ state: ApplicationState, _ legal: [K: (ApplicationState, [String])], otherwise code: ApplicationError.Code) {
        for kind in K.allCases {
            if let (end, trace) = legal[kind] {
                rows.append(StateEventRow(state: state, event: kind, outcome: .legal(end, trace)))
            } else {
                rows.append(StateEventRow(state: state, event: kind, outcome: .illegal(launchRefusal(state, kind) ?? code)))
            }
        }
    }
    add(.notRunning, [
        .launch: (.active, launchInForeground),
        .launchInBackground: (.background, ["app.willFinishLaunching", "app.didFinishLaunching"]),
    ], otherwise: .notLaunched)
    var active: [K: (ApplicationState, [String])] = [
        .enterBackground: (.background, ["scene-1.willResignActive", "scene-1.didEnterBackground"]),
        .resignActive: (.inactive, ["scene-1.willResignActive"]),
        .openURL: (.active, ["scene-1.openURLContexts(myapp://item/42)"]),
        .continueUserActivity: (.active, ["scene-1.continue(com.example.view)"]),
        .performShortcutItem: (.active, ["scene-1.performAction(com.example.new)"]),
        .connectScene: (.active, connectScene2),
        .disconnectScene: (.background, ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect"]),
        .discardSessions: (.background, ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect",
                                         "app.didDiscard(scene-1)"]),
        .terminate: (.terminated, ["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect",
                                   "app.willTerminate"]),
    ]
    add(.active, withAppDelegateDeliveries(active, in: .active), otherwise: .illegalInState)
    active = [
        .enterBackground: (.background, ["scene-1.didEnterBackground"]),
        .becomeActive: (.active, ["scene-1.didBecomeActive"]),
        .openURL: (.inactive, ["scene-1.openURLContexts(myapp://item/42)"]),
        .continueUserActivity: (.inactive, ["scene-1.continue(com.example.view)"]),
        .performShortcutItem: (.inactive, ["scene-1.performAction(com.example.new)"]),
        .connectScene: (.active, connectScene2),
        .disconnectScene: (.background, ["scene-1.didEnterBackground", "scene-1.didDisconnect"]),
        .discardSessions: (.background, ["scene-1.didEnterBackground", "scene-1.didDisconnect", "app.didDiscard(scene-1)"]),
        .terminate: (.terminated, ["scene-1.didEnterBackground", "scene-1.didDisconnect", "app.willTerminate"]),
    ]
    add(.inactive, withAppDelegateDeliveries(active, in: .inactive), otherwise: .illegalInState)
    let bringBack = { (delivery: String) in
        ["scene-1.willEnterForeground", delivery, "scene-1.didBecomeActive"]
    }
    let background: [K: (ApplicationState, [String])] = [
        .enterForeground: (.active, ["scene-1.willEnterForeground", "scene-1.didBecomeActive"]),
        .openURL: (.active, bringBack("scene-1.openURLContexts(myapp://item/42)")),
        .continueUserActivity: (.active, bringBack("scene-1.continue(com.example.view)")),
        .performShortcutItem: (.active, bringBack("scene-1.performAction(com.example.new)")),
        .localNotification: (.active, bringBack("app.didReceiveLocal(n1)")),
        .connectScene: (.active, connectScene2),
        .disconnectScene: (.background, ["scene-1.didDisconnect"]),
        .discardSessions: (.background, ["scene-1.didDisconnect", "app.didDiscard(scene-1)"]),
        .terminate: (.terminated, ["scene-1.didDisconnect", "app.willTerminate"]),
    ]
    add(.background, withAppDelegateDeliveries(background, in: .background), otherwise: .illegalInState)
    var suspended = background
    suspended[.disconnectScene] = (.suspended, ["scene-1.didDisconnect"])
    suspended[.discardSessions] = (.suspended, ["scene-1.didDisconnect", "app.didDiscard(scene-1)"])
    suspended[.terminate] = (.terminated, [])  // ended without notice, as on iOS
    add(.suspended, withAppDelegateDeliveries(suspended, in: .suspended), otherwise: .illegalInState)
    add(.terminated, [:], otherwise: .terminated)
    return rows
}()

/// The table for apps without scenes: the application delegate gets every callback.
let appLevelTable: [StateEventRow] = {
    var rows: [StateEventRow] = []
    func add(_ state: ApplicationState, _ legal: [K: (ApplicationState, [String])], otherwise code: ApplicationError.Code,
             special: [K: ApplicationError.Code] = [:]) {
        for kind in K.allCases {
            if let (end, trace) = legal[kind] {
                rows.append(StateEventRow(state: state, event: kind, outcome: .legal(end, trace)))
            } else {
                rows.append(StateEventRow(state: state, event: kind,
                                          outcome: .illegal(launchRefusal(state, kind) ?? special[kind] ?? code)))
            }
        }
    }
    // Scene events need scenes; discarding names a session that cannot exist.
    let sceneless: [K: ApplicationError.Code] = [.connectScene: .scenesNotSupported, .disconnectScene: .scenesNotSupported,
                                                  .discardSessions: .unknownSession]
    add(.notRunning, [
        .launch: (.active, ["app.willFinishLaunching", "app.didFinishLaunching", "app.didBecomeActive"]),
        .launchInBackground: (.background, ["app.willFinishLaunching", "app.didFinishLaunching"]),
    ], otherwise: .notLaunched)
    add(.active, withAppDelegateDeliveries([
        .enterBackground: (.background, ["app.willResignActive", "app.didEnterBackground"]),
        .resignActive: (.inactive, ["app.willResignActive"]),
        .openURL: (.active, ["app.open(myapp://item/42)"]),
        .continueUserActivity: (.active, ["app.continue(com.example.view)"]),
        .performShortcutItem: (.active, ["app.performAction(com.example.new)"]),
        .terminate: (.terminated, ["app.willResignActive", "app.didEnterBackground", "app.willTerminate"]),
    ], in: .active), otherwise: .illegalInState, special: sceneless)
    add(.inactive, withAppDelegateDeliveries([
        .enterBackground: (.background, ["app.didEnterBackground"]),
        .becomeActive: (.active, ["app.didBecomeActive"]),
        .openURL: (.inactive, ["app.open(myapp://item/42)"]),
        .continueUserActivity: (.inactive, ["app.continue(com.example.view)"]),
        .performShortcutItem: (.inactive, ["app.performAction(com.example.new)"]),
        .terminate: (.terminated, ["app.didEnterBackground", "app.willTerminate"]),
    ], in: .inactive), otherwise: .illegalInState, special: sceneless)
    let bringBack = { (delivery: String) in ["app.willEnterForeground", delivery, "app.didBecomeActive"] }
    var background: [K: (ApplicationState, [String])] = [
        .enterForeground: (.active, ["app.willEnterForeground", "app.didBecomeActive"]),
        .openURL: (.active, bringBack("app.open(myapp://item/42)")),
        .continueUserActivity: (.active, bringBack("app.continue(com.example.view)")),
        .performShortcutItem: (.active, bringBack("app.performAction(com.example.new)")),
        .localNotification: (.active, bringBack("app.didReceiveLocal(n1)")),
        .terminate: (.terminated, ["app.willTerminate"]),
    ]
    add(.background, withAppDelegateDeliveries(background, in: .background), otherwise: .illegalInState, special: sceneless)
    background[.terminate] = (.terminated, [])
    add(.suspended, withAppDelegateDeliveries(background, in: .suspended), otherwise: .illegalInState, special: sceneless)
    add(.terminated, [:], otherwise: .terminated)
    return rows
}()

@MainActor
private func makeApplication(in state: ApplicationState, usesScenes: Bool) throws -> (Application, CallLog) {
    let log = CallLog()
    let app = Application(delegate: RecordingApplicationDelegate(log: log), clock: TestClock(),
                          configuration: ApplicationConfiguration(usesScenes: usesScenes))
    app.registerForRemoteNotifications()
    switch state {
    case .notRunning: break
    case .active: try app.handle(.launch(LaunchOptions(), inBackground: false))
    case .inactive:
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        try app.handle(.resignActive(scene: nil))
    case .background:
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        try app.handle(.enterBackground(scene: nil))
    case .suspended:
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        try app.handle(.enterBackground(scene: nil))
        app.endBackgroundTask(app.beginBackgroundTask(name: "finish"))
    case .terminated:
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        try app.handle(.terminate)
    }
    #expect(app.state == state, "set-up reached \(app.state), not \(state)")
    log.lines.removeAll()
    return (app, log)
}

@MainActor
private func event(_ kind: LifecycleRules.EventKind) -> SystemEvent {
    switch kind {
    case .launch: .launch(LaunchOptions(), inBackground: false)
    case .launchInBackground: .launch(LaunchOptions(), inBackground: true)
    case .enterForeground: .enterForeground(scene: nil)
    case .enterBackground: .enterBackground(scene: nil)
    case .resignActive: .resignActive(scene: nil)
    case .becomeActive: .becomeActive(scene: nil)
    case .memoryWarning: .memoryWarning
    case .reloadConfiguration: .reloadConfiguration
    case .openURL: .openURL(sampleURL, OpenURLOptions(), scene: nil)
    case .continueUserActivity: .continueUserActivity(sampleActivity, scene: nil)
    case .performShortcutItem: .performShortcutItem(sampleShortcut, scene: nil, completion: Completion(event: "shortcut", fallback: false))
    case .registeredForRemoteNotifications: .registeredForRemoteNotifications(deviceToken: Data([1, 2, 3, 4]))
    case .failedToRegisterForRemoteNotifications: .failedToRegisterForRemoteNotifications(RemoteNotificationRegistrationError(reason: "offline"))
    case .remoteNotification: .remoteNotification(samplePayload, completion: Completion(event: "push", fallback: .failed))
    case .backgroundFetch: .backgroundFetch(completion: Completion(event: "fetch", fallback: .failed))
    case .watchKitExtensionRequest: .watchKitExtensionRequest(["request": "glance"], completion: Completion(event: "watch", fallback: [:]))
    case .localNotification: .localNotification(sampleLocalNotification)
    case .localNotificationAction: .localNotificationAction("reply", sampleLocalNotification, completion: Completion(event: "action", fallback: ()))
    case .connectScene: .connectScene(SceneConnectionOptions(), session: nil, inForeground: true)
    case .disconnectScene: .disconnectScene(scene: "scene-1")
    case .discardSessions: .discardSessions(["scene-1"])
    case .terminate: .terminate
    }
}

@MainActor
private func check(_ row: StateEventRow, usesScenes: Bool) throws {
    let (app, log) = try makeApplication(in: row.state, usesScenes: usesScenes)
    let scenesBefore = app.connectedScenes.map { "\($0.id):\($0.activationState)" }
    let sessionsBefore = app.openSessions.map(\.persistentIdentifier)
    switch row.outcome {
    case .legal(let end, let trace):
        try app.handle(event(row.event))
        #expect(app.state == end)
        #expect(log.lines == trace)
    case .illegal(let code):
        let error = #expect(throws: ApplicationError.self) { try app.handle(event(row.event)) }
        #expect(error?.code == code)
        #expect(error?.state == row.state)
        #expect(error?.event == row.event.rawValue)
        #expect(app.state == row.state)
        #expect(log.lines.isEmpty)
        #expect(app.connectedScenes.map { "\($0.id):\($0.activationState)" } == scenesBefore)
        #expect(app.openSessions.map(\.persistentIdentifier) == sessionsBefore)
    }
}

@MainActor @Test(arguments: sceneAppTable)
func sceneAppStateEventPair(_ row: StateEventRow) throws {
    try check(row, usesScenes: true)
}

@MainActor @Test(arguments: appLevelTable)
func appWithoutScenesStateEventPair(_ row: StateEventRow) throws {
    try check(row, usesScenes: false)
}

@Test func tablesCoverEveryStateAndEvent() {
    let pairs = ApplicationState.allCases.count * LifecycleRules.EventKind.allCases.count
    #expect(sceneAppTable.count == pairs)
    #expect(appLevelTable.count == pairs)
    #expect(Set(sceneAppTable.map(\.testDescription)).count == pairs)
}

@Test func theRulesAgreeWithTheTableForEventsNamingNoScene() {
    for row in sceneAppTable {
        let legal = LifecycleRules.legalStates(for: row.event).contains(row.state)
        if case .legal = row.outcome { #expect(legal, "\(row.testDescription)") }
    }
}
