public import AppKernel

/// How a micro-application is shown when started — mPaaS's launch modes.
public enum LaunchMode: String, Sendable, Hashable, CaseIterable {
    /// Pushed onto a navigation stack (animated).
    case push
    /// Pushed without animation.
    case pushWithoutAnimation
    /// Presented modally (animated).
    case present
    /// Presented without animation.
    case presentWithoutAnimation
    /// Flipped in from the left.
    case flipFromLeft
    /// Flipped in from the right.
    case flipFromRight

    /// The mode `startApplication(_:params:animated:)` uses.
    static func push(animated: Bool) -> LaunchMode { animated ? .push : .pushWithoutAnimation }

    /// Whether the transition is animated.
    public var isAnimated: Bool { self != .pushWithoutAnimation && self != .presentWithoutAnimation }

    /// The same transition without animation (flips are kept: they have no still form).
    public var withoutAnimation: LaunchMode {
        switch self {
        case .push: .pushWithoutAnimation
        case .present: .presentWithoutAnimation
        default: self
        }
    }
}

/// The delegate of a micro-application — mPaaS's `DTMicroApplicationDelegate`. Only
/// ``rootController(in:)`` is required.
@MainActor
public protocol MicroApplicationDelegate: AnyObject {
    /// The controller that shows the app (required).
    func rootController(in application: MicroApplication) -> any RootController
    /// The app was created (before it starts).
    func applicationDidCreate(_ application: MicroApplication)
    /// The app is about to start with `options` (the start's params).
    func application(_ application: MicroApplication, willStartLaunchingWithOptions options: [String: String])
    /// The app started and is on top.
    func applicationDidFinishLaunching(_ application: MicroApplication)
    /// The app is about to pause (another app covers it, or the process goes to the background).
    func applicationWillPause(_ application: MicroApplication)
    /// The app is about to resume with `options` (its params): it was started again while on the
    /// stack (new params), the app above it exited, or the process returned to the foreground.
    func application(_ application: MicroApplication, willResumeWithOptions options: [String: String])
    /// The app resumed (back on top, or back from the background).
    func applicationDidResume(_ application: MicroApplication)
    /// The app resumed with `options`.
    func application(_ application: MicroApplication, didResumeWithOptions options: [String: String])
    /// The app is about to be destroyed.
    func applicationWillTerminate(_ application: MicroApplication, animated: Bool)
    /// Whether the app may be popped. Default `true`; `false` only in special cases.
    func applicationShouldTerminate(_ application: MicroApplication) -> Bool
    /// Whether the app may start. Default `true`.
    func applicationShouldStart(_ application: MicroApplication, options: [String: String]) -> Bool
    /// Whether a second instance may be pushed while one is on the stack. Default `false`.
    func applicationAllowsMultipleInstances(_ application: MicroApplication) -> Bool
    /// The launch mode to use instead of the one asked for; `nil` keeps it. Default `nil`.
    func application(_ application: MicroApplication, overrideLaunchMode mode: LaunchMode) -> LaunchMode?
    /// Whether the app's root controller is always shown without animation, whatever the start
    /// asked for (mPaaS's `applicationStartRootControllerWithNoAnimation:`). Default `false`.
    func applicationStartsWithoutAnimation(_ application: MicroApplication) -> Bool
    /// The system is low on memory.
    func applicationDidReceiveMemoryWarning(_ application: MicroApplication)
}

extension MicroApplicationDelegate {
    /// Does nothing.
    public func applicationDidCreate(_ application: MicroApplication) {}
    /// Does nothing.
    public func application(_ application: MicroApplication, willStartLaunchingWithOptions options: [String: String]) {}
    /// Does nothing.
    public func applicationDidFinishLaunching(_ application: MicroApplication) {}
    /// Does nothing.
    public func applicationWillPause(_ application: MicroApplication) {}
    /// Does nothing.
    public func application(_ application: MicroApplication, willResumeWithOptions options: [String: String]) {}
    /// Does nothing.
    public func applicationDidResume(_ application: MicroApplication) {}
    /// Does nothing.
    public func application(_ application: MicroApplication, didResumeWithOptions options: [String: String]) {}
    /// Does nothing.
    public func applicationWillTerminate(_ application: MicroApplication, animated: Bool) {}
    /// Answers `true`.
    public func applicationShouldTerminate(_ application: MicroApplication) -> Bool { true }
    /// Answers `true`.
    public func applicationShouldStart(_ application: MicroApplication, options: [String: String]) -> Bool { true }
    /// Answers `false`.
    public func applicationAllowsMultipleInstances(_ application: MicroApplication) -> Bool { false }
    /// Keeps the mode asked for.
    public func application(_ application: MicroApplication, overrideLaunchMode mode: LaunchMode) -> LaunchMode? { nil }
    /// Answers `false`.
    public func applicationStartsWithoutAnimation(_ application: MicroApplication) -> Bool { false }
    /// Does nothing.
    public func applicationDidReceiveMemoryWarning(_ application: MicroApplication) {}
}

/// A module with UI and its own life cycle, started by name through the ``Context`` — mPaaS's
/// `DTMicroApplication`. It lives on the context's stack until it exits or is popped, then is
/// destroyed.
@MainActor
public final class MicroApplication: Identifiable {
    /// Where the app is in its life.
    public enum State: String, Sendable, Hashable {
        /// Created, not started yet.
        case created
        /// On top and running.
        case running
        /// Covered by another app, or the process is in the background.
        case paused
        /// Popped and destroyed.
        case terminated
    }

    /// The registered name.
    public let name: String
    /// A unique id (several instances of one name may exist).
    public let id: Int
    /// The delegate.
    public let delegate: any MicroApplicationDelegate
    /// The params of the last start or resume.
    public internal(set) var params: [String: String] = [:]
    /// How it was shown (recorded for the UI to render).
    public internal(set) var launchMode: LaunchMode = .push
    /// Who started it (mPaaS's `sourceId`): the name of the app on top then, or what the start named.
    public internal(set) var sourceID: String?
    /// The root controller, made when the app started.
    public internal(set) var rootController: (any RootController)?
    /// Where it is in its life.
    public internal(set) var state: State = .created

    init(name: String, id: Int, delegate: any MicroApplicationDelegate) {
        self.name = name
        self.id = id
        self.delegate = delegate
    }
}
