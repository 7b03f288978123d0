import Foundation
import Testing
import AppKernel
import AppKernelTesting

/// UIKit's documented callback orders, one row per step of an app's life, for an app with scenes
/// and one without. Written from Apple's "Managing your app's life cycle" (with scenes, UIKit
/// reports foreground and background transitions to the scene delegate and not to the app
/// delegate; without, to the app delegate), "Preparing your UI to run in the foreground" and "…in
/// the background" (foreground: will enter foreground, then did become active; background: will
/// resign active, then did enter background), `UIApplicationDelegate`'s reference
/// (`willFinishLaunching` before `didFinishLaunching`; a URL given at launch is opened after
/// `didFinishLaunching`; `applicationWillTerminate` is not called for a suspended app) and
/// `UISceneDelegate`'s (a scene connects with `scene(_:willConnectTo:options:)`, then enters the
/// foreground; `sceneDidDisconnect` after it entered the background).
@MainActor
struct UIKitDocumentedOrderTests {
    enum Step: String, CaseIterable {
        case launch, interrupt, endInterruption, background, foreground, memoryWarning, openURL, terminate
    }

    /// What each step calls, in order: with scenes, then without.
    static let expected: [Step: (scenes: [String], noScenes: [String])] = [
        .launch: (["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)",
                   "scene-1.willConnect", "scene-1.willEnterForeground", "scene-1.didBecomeActive"],
                  ["app.willFinishLaunching", "app.didFinishLaunching", "app.didBecomeActive"]),
        .interrupt: (["scene-1.willResignActive"], ["app.willResignActive"]),
        .endInterruption: (["scene-1.didBecomeActive"], ["app.didBecomeActive"]),
        .background: (["scene-1.willResignActive", "scene-1.didEnterBackground"], ["app.willResignActive", "app.didEnterBackground"]),
        .foreground: (["scene-1.willEnterForeground", "scene-1.didBecomeActive"], ["app.willEnterForeground", "app.didBecomeActive"]),
        .memoryWarning: (["app.memoryWarning"], ["app.memoryWarning"]),
        .openURL: (["scene-1.openURLContexts(myapp://item/42)"], ["app.open(myapp://item/42)"]),
        .terminate: (["scene-1.willResignActive", "scene-1.didEnterBackground", "scene-1.didDisconnect", "app.willTerminate"],
                     ["app.willResignActive", "app.didEnterBackground", "app.willTerminate"]),
    ]

    func perform(_ step: Step, on host: SimulatedHost, log: CallLog) throws {
        switch step {
        case .launch: try host.launch(delegate: RecordingApplicationDelegate(log: log))
        case .interrupt: try host.deactivate()
        case .endInterruption: try host.activate()
        case .background: try host.moveToBackground()
        case .foreground: try host.moveToForeground()
        case .memoryWarning: try host.sendMemoryWarning()
        case .openURL: try host.open(URL(string: "myapp://item/42")!)
        case .terminate: try host.terminate()
        }
    }

    @Test(arguments: [true, false])
    func aWholeLifeCallsBackInUIKitsOrder(usesScenes: Bool) throws {
        let log = CallLog()
        let host = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: usesScenes))
        for step in Step.allCases {
            try perform(step, on: host, log: log)
            let expected = Self.expected[step].map { usesScenes ? $0.scenes : $0.noScenes } ?? []
            let calls = log.take()
            #expect(calls == expected, "\(step), usesScenes: \(usesScenes)")
        }
    }

    @Test(arguments: [true, false])
    func aSuspendedAppIsEndedWithoutWillTerminate(usesScenes: Bool) async throws {
        let log = CallLog()
        let clock = TestClock()
        let host = SimulatedHost(clock: clock, configuration: ApplicationConfiguration(usesScenes: usesScenes))
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log))
        try host.moveToBackground()
        await clock.advance(by: .seconds(5))
        #expect(app.state == .suspended)
        _ = log.take()
        try host.terminate()
        #expect(log.take().isEmpty)
    }

    @Test(arguments: [true, false])
    func aURLAtLaunchReachesTheAppOnceInItsDocumentedPlace(usesScenes: Bool) throws {
        let log = CallLog()
        let host = SimulatedHost(configuration: ApplicationConfiguration(usesScenes: usesScenes))
        let url = URL(string: "myapp://item/42")!
        let app = try host.launch(delegate: RecordingApplicationDelegate(log: log), options: LaunchOptions(url: url))
        if usesScenes {
            // In the connection options, not through scene(_:openURLContexts:).
            #expect(!log.lines.contains { $0.contains("openURLContexts") })
            #expect((app.connectedScenes.first?.delegate as? RecordingSceneDelegate)?.connectionOptions?.urlContexts.map(\.url) == [url])
        } else {
            #expect(log.lines == ["app.willFinishLaunching", "app.didFinishLaunching", "app.open(myapp://item/42)", "app.didBecomeActive"])
        }
    }
}
