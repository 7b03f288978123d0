import AppKernel
import Foundation

extension StepSet {
    /// Every system event a host can deliver, each enabled only where UIKit's legality table
    /// (`LifecycleRules`) allows it, and time moving by 1 s, 10 s and 1 min: `launch`,
    /// `launchInBackground`, `foreground`, `background`, `resign`, `activate`, `memoryWarning`,
    /// `reload`, `openURL(…)`, `continueActivity(…)`, `quickAction(…)`, `push`, `fetch`,
    /// `localNotification(…)`, `connectScene`, `disconnectScene`, `terminate`, `+1s`, `+10s`,
    /// `+1m`. A launch is enabled again after a termination (a relaunch).
    public static let system = StepSet.system()

    /// The system steps with your app's own URL, activity type and quick action, and your time
    /// steps.
    /// - Parameters:
    ///   - url: What `openURL` opens.
    ///   - activityType: What `continueActivity` continues.
    ///   - quickAction: The quick action `quickAction` performs.
    ///   - times: How far the time steps move the clock.
    public static func system(url: String = "app://explorer", activityType: String = "com.example.explorer.view",
                              quickAction: String = "com.example.explorer.new",
                              times: [Duration] = [.seconds(1), .seconds(10), .seconds(60)]) -> StepSet {
        StepSet([
            StepDefinition("launch", isEnabled: { world, _ in world.canLaunch }, code: { _ in "try world.launch()" }) { world, _ in
                try world.launch()
            },
            StepDefinition("launchInBackground", isEnabled: { world, _ in world.canLaunch },
                           code: { _ in "try world.launch(inBackground: true)" }) { world, _ in
                try world.launch(inBackground: true)
            },
            event("foreground", .enterForeground, "try world.host.moveToForeground()") { try $0.host.moveToForeground() },
            event("background", .enterBackground, "try world.host.moveToBackground()") { try $0.host.moveToBackground() },
            event("resign", .resignActive, "try world.host.deactivate()") { try $0.host.deactivate() },
            event("activate", .becomeActive, "try world.host.activate()") { try $0.host.activate() },
            event("memoryWarning", .memoryWarning, "try world.host.sendMemoryWarning()") { try $0.host.sendMemoryWarning() },
            event("reload", .reloadConfiguration, "try world.host.send(.reloadConfiguration)") { try $0.host.send(.reloadConfiguration) },
            StepDefinition("openURL", arguments: [url], isEnabled: { world, _ in world.isLegal(.openURL) },
                           code: { "try world.host.open(URL(string: \(literal($0)))!)" }) { world, argument in
                guard let target = URL(string: argument ?? url) else { throw StepArgumentError(step: "openURL", argument: argument ?? "", expected: "a URL") }
                try world.host.open(target)
            },
            StepDefinition("continueActivity", arguments: [activityType], isEnabled: { world, _ in world.isLegal(.continueUserActivity) },
                           code: { "try world.host.continueUserActivity(UserActivity(activityType: \(literal($0))))" }) { world, argument in
                try world.host.continueUserActivity(UserActivity(activityType: argument ?? activityType))
            },
            StepDefinition("quickAction", arguments: [quickAction], isEnabled: { world, _ in world.isLegal(.performShortcutItem) },
                           code: { "try world.performQuickAction(\(literal($0)))" }) { world, argument in
                try world.performQuickAction(argument ?? quickAction)
            },
            event("push", .remoteNotification, "try world.push()") { try $0.push() },
            event("fetch", .backgroundFetch, "try world.fetch()") { try $0.fetch() },
            StepDefinition("localNotification", arguments: ["reminder"], isEnabled: { world, _ in world.isLegal(.localNotification) },
                           code: { "try world.host.deliverLocalNotification(LocalNotification(identifier: \(literal($0))))" }) { world, argument in
                try world.host.deliverLocalNotification(LocalNotification(identifier: argument ?? "reminder"))
            },
            StepDefinition("connectScene", isEnabled: { world, _ in world.isLegal(.connectScene) && world.host.configuration.supportsMultipleScenes },
                           code: { _ in "try world.host.connectScene()" }) { world, _ in
                try world.host.connectScene()
            },
            StepDefinition("disconnectScene", isEnabled: { world, _ in world.isLegal(.disconnectScene) && world.application?.connectedScenes.isEmpty == false },
                           code: { _ in "try world.host.disconnectScene(world.application!.connectedScenes.last!)" }) { world, _ in
                guard let scene = world.application?.connectedScenes.last else { throw StepArgumentError(step: "disconnectScene", argument: "", expected: "a connected scene") }
                try world.host.disconnectScene(scene)
            },
            event("terminate", .terminate, "try world.host.terminate()") { try $0.host.terminate() },
        ]) + time(times)
    }

    /// Time moving by each of `durations` (`+1s`, `+30s`), enabled once the app launched.
    public static func time(_ durations: [Duration]) -> StepSet {
        StepSet([
            StepDefinition(ExplorerStep.timeName, arguments: durations.map { ExplorerStep.text(of: $0) },
                           isEnabled: { world, _ in world.application != nil },
                           code: { "await world.advance(by: \(swiftDuration($0)))" }) { world, argument in
                guard let duration = ExplorerStep.duration(parsing: argument ?? "") else {
                    throw StepArgumentError(step: "+", argument: argument ?? "", expected: "<n>ms, <n>s or <n>m")
                }
                await world.advanceClock(by: duration)
            },
        ])
    }

    /// A `ProcessHost`-style host's signals (`signal(SIGTERM)`): each does the step the world's
    /// ``ExplorerWorld/signalSteps`` maps it to, when that step is enabled.
    /// - Parameter names: The signals to try.
    public static func signals(_ names: [String] = ["SIGTERM", "SIGTSTP", "SIGCONT", "SIGHUP", "SIGUSR1"]) -> StepSet {
        StepSet([
            StepDefinition("signal", arguments: names, isEnabled: { world, argument in
                guard let step = world.signalSteps[argument ?? ""], let definition = world.steps?.definition(named: step.name) else { return false }
                return definition.isEnabled(world, step.argument)
            }, code: { "try await world.deliverSignal(\(literal($0)))" }) { world, argument in
                try await world.deliverSignal(argument ?? "")
            },
        ])
    }

    private static func event(_ name: String, _ kind: SystemEvent.Kind, _ code: String,
                              _ perform: @escaping @MainActor @Sendable (ExplorerWorld) throws -> Void) -> StepDefinition {
        StepDefinition(name, isEnabled: { world, _ in world.isLegal(kind) }, code: { _ in code }) { world, _ in try perform(world) }
    }

    /// A time step's argument as a Swift `Duration` expression: `.seconds(30)`, `.milliseconds(250)`.
    static func swiftDuration(_ text: String?) -> String {
        let milliseconds = ExplorerStep.duration(parsing: text ?? "")?.milliseconds ?? 0
        return milliseconds % 1_000 == 0 ? ".seconds(\(milliseconds / 1_000))" : ".milliseconds(\(milliseconds))"
    }

    /// `text` as a Swift string literal.
    static func literal(_ text: String?) -> String {
        "\"" + (text ?? "").replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}

extension ExplorerWorld {
    /// Whether a launch is legal: nothing launched yet, or the last app terminated.
    var canLaunch: Bool {
        guard let application else { return true }
        return application.state == .terminated || application.state == .notRunning
    }

    /// Whether the current app accepts an event of `kind` now.
    func isLegal(_ kind: SystemEvent.Kind) -> Bool {
        guard let application else { return false }
        return LifecycleRules.isLegal(kind, in: application.state)
    }

    /// Does what the signal `name` does on a `ProcessHost`-style host: the step
    /// ``signalSteps`` maps it to, defined by the world's step set.
    /// - Throws: ``StepArgumentError`` for a signal the table does not map; the step's error.
    public func deliverSignal(_ name: String) async throws {
        guard let step = signalSteps[name], let definition = (steps ?? .system).definition(named: step.name) else {
            throw StepArgumentError(step: "signal", argument: name, expected: "a signal of signalSteps (\(signalSteps.keys.sorted().joined(separator: ", ")))")
        }
        try await definition.perform(self, step.argument)
    }
}

/// A step's argument is not one the step can use.
public struct StepArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step's name.
    public var step: String
    /// The argument given.
    public var argument: String
    /// What the step takes.
    public var expected: String

    /// The step, its argument and what it takes.
    public var description: String { "the step \(step)(\(argument)) cannot run: it takes \(expected)." }
}
