import Foundation
import Testing
import AppKernel

struct JSONValueTests {
    @Test func literalsBuildNestedValues() {
        let payload: [String: JSONValue] = ["aps": ["content-available": 1, "alert": "hi"], "ids": [1, 2.5, true, nil]]
        #expect(payload["aps"]?["content-available"]?.intValue == 1)
        #expect(payload["aps"]?["alert"]?.stringValue == "hi")
        #expect(payload["ids"]?[1]?.doubleValue == 2.5)
        #expect(payload["ids"]?[0]?.doubleValue == 1)
        #expect(payload["ids"]?[2]?.boolValue == true)
        #expect(payload["ids"]?[3] == .null)
        #expect(payload["ids"]?[9] == nil)
        #expect(payload["ids"]?["key"] == nil)
        #expect(payload["aps"]?.objectValue?.count == 2)
        #expect(payload["ids"]?.arrayValue?.count == 4)
        #expect(JSONValue.string("x").intValue == nil)
    }

    @Test func descriptionIsCompactJSONWithSortedKeys() {
        let value: JSONValue = ["b": [1, "two", nil, false], "a": ["q\"uote\\\n\t\u{01}": 1.5]]
        #expect(value.description == #"{"a":{"q\"uote\\\n\t\u0001":1.5},"b":[1,"two",null,false]}"#)
    }

    @Test func aDuplicateKeyKeepsTheLastValue() {
        let value: JSONValue = ["k": 1, "k": 2]
        #expect(value["k"] == 2)
    }
}

struct ValueTypeTests {
    @Test func applicationStatesKnowWhereTheyAre() {
        #expect(ApplicationState.allCases.filter(\.isForeground) == [.inactive, .active])
        #expect(ApplicationState.allCases.filter(\.isRunning) == [.inactive, .active, .background, .suspended])
        #expect(SceneActivationState.allCases.filter(\.isForeground) == [.foregroundInactive, .foregroundActive])
        #expect(ApplicationState.suspended.description == "suspended")
    }

    @Test func sceneConnectionOptionsFromLaunchOptions() throws {
        let url = try #require(URL(string: "myapp://x"))
        let options = LaunchOptions(url: url, sourceApplication: "com.example", remoteNotification: ["a": 1])
        let scene = options.sceneConnectionOptions
        #expect(scene.urlContexts == [OpenURLContext(url: url, options: OpenURLOptions(sourceApplication: "com.example"))])
        #expect(scene.remoteNotification == ["a": 1])
        #expect(!scene.isEmpty)
        #expect(LaunchOptions().sceneConnectionOptions.isEmpty)
    }

    @Test func errorsSayWhatWhereAndWhatToDo() {
        let cases: [(ApplicationError, String)] = [
            (ApplicationError(code: .terminated, event: "enterForeground", state: .terminated),
             "cannot deliver 'enterForeground' to an application in state 'terminated': a terminated application accepts no events. Launch a new Application to start again."),
            (ApplicationError(code: .alreadyLaunched, event: "launch", state: .active),
             "cannot deliver 'launch' to an application in state 'active': an application launches exactly once. Terminate it and launch a new Application to relaunch."),
            (ApplicationError(code: .illegalInState, event: "becomeActive", state: .background),
             "cannot deliver 'becomeActive' to an application in state 'background': UIKit does not allow this transition. Only an inactive (interrupted) app or scene can become active; from the background use enterForeground."),
            (ApplicationError(code: .unknownScene, event: "disconnectScene", state: .active, subject: "scene-9"),
             "cannot deliver 'disconnectScene' to an application in state 'active': scene 'scene-9' is not connected. Use one of Application.connectedScenes, or connect it first."),
            (ApplicationError(code: .unknownSession, event: "discardSessions", state: .active, subject: "scene-4"),
             "cannot deliver 'discardSessions' to an application in state 'active': session 'scene-4' is not open. Use one of Application.openSessions."),
        ]
        for (error, text) in cases { #expect(error.description == text) }
        for code in ApplicationError.Code.allCases {
            let text = ApplicationError(code: code, event: "memoryWarning", state: .suspended).description
            #expect(text.hasPrefix("cannot deliver 'memoryWarning' to an application in state 'suspended': "))
            #expect(text.count > 90, "\(code) needs an explanation")
        }
    }

    @Test func everyIllegalEventHasAHint() {
        for kind in LifecycleRules.EventKind.allCases {
            for state in ApplicationState.allCases where !LifecycleRules.isLegal(kind, in: state) && state.isRunning {
                let text = ApplicationError(code: .illegalInState, event: kind.rawValue, state: state).description
                #expect(!text.hasSuffix("transition. "), "\(kind) in \(state)")
            }
        }
    }

    @Test func diagnosticsDescribeThemselves() {
        let diagnostic = Diagnostic(kind: .completionCalledTwice, subject: "push", message: "ignored.", time: .seconds(2))
        #expect(diagnostic.description == "[completionCalledTwice] push: ignored.")
    }

    @Test func lifecycleEventsNameThemselvesAndTheirScene() throws {
        let url = try #require(URL(string: "myapp://x"))
        #expect(LifecycleEvent.openURL(url, OpenURLOptions(), scene: "scene-1").description == "openURL(myapp://x)")
        #expect(LifecycleEvent.openURL(url, OpenURLOptions(), scene: "scene-1").sceneID == "scene-1")
        #expect(LifecycleEvent.sceneDidBecomeActive(scene: "scene-2").sceneID == "scene-2")
        #expect(LifecycleEvent.didBecomeActive.sceneID == nil)
        #expect(LifecycleEvent.continueUserActivity(UserActivity(activityType: "t"), scene: nil).description == "continueUserActivity(t)")
        #expect(LifecycleEvent.performShortcutItem(ShortcutItem(type: "s", localizedTitle: "S"), scene: nil).description == "performShortcutItem(s)")
        #expect(LifecycleEvent.didFailToRegisterForRemoteNotifications(RemoteNotificationRegistrationError(reason: "r")).description
                == "didFailToRegisterForRemoteNotifications(r)")
        #expect(LifecycleEvent.configurationForConnecting(session: "scene-3").description == "configurationForConnecting(scene-3)")
        #expect(LifecycleEvent.didSuspend.name == .didSuspend)
        #expect(LifecycleEvent.Name.allCases.count == 31)   // 30, and handleWatchKitExtensionRequest (issue 34)
        #expect(UserActivity.browsingWebActivityType == "NSUserActivityTypeBrowsingWeb")
        #expect(SceneSessionRole.windowApplication.description == "windowApplication")
    }
}
