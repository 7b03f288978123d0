/// Starts the app's parts in an ordered list of named phases — mPaaS's BootLoader.
///
/// The default phases mirror mPaaS: ``setupWindowPhase``, ``startRunOnceServicesPhase``,
/// ``startNonLazyServicesPhase``, ``startAutoStartServiceGroupsPhase``, ``showWindowPhase``,
/// ``startLauncherPhase``. Each runs the `open` method of the same name, so a subclass can
/// change one; apps also add, replace or remove phases by name:
///
/// ```swift
/// let loader = BootLoader()
/// loader.addPhase("loadFeatureFlags", before: BootLoader.showWindowPhase) { app in try flags.load() }
/// loader.addPhase("warmCache", deadline: .seconds(5)) { app in try await cache.warm() }
/// loader.removePhase(BootLoader.startLauncherPhase)
/// ```
///
/// It runs exactly once per application: during `didFinishLaunching` for a foreground launch
/// (after the delegate, before the `after` hooks), or at the first `didBecomeActive` after a
/// background launch. A launch that a `handle` hook stops skips it. Synchronous phases run
/// inline; an async phase is awaited, and the phases after it (and the launch's `after` hooks)
/// wait for it. An async phase that does not finish within its deadline (default 20 s, the iOS
/// launch watchdog, on the application's clock) fails with a ``HookError`` naming it; a phase
/// that throws fails likewise. A failure stops the remaining phases and reaches the
/// application's ``Application/hookErrorHandler``; the application itself stays in its state.
///
/// The service phases do nothing until a service registry takes them over (AppKernelModules'
/// `ContextBootLoader` does); the window phases make and show ``Application/window`` for apps without
/// scenes (scene apps make their windows in their scene delegates).
@MainActor
open class BootLoader {
    /// Where the BootLoader is in its single run.
    public typealias State = PhaseEngine<BootPhase>.State
    /// A phase's start and end on the application's clock.
    public typealias PhaseRecord = PhaseEngine<BootPhase>.Record
    /// A named phase.
    public typealias Phase = PhaseEngine<BootPhase>.Step

    /// mPaaS's first phase: set up the window.
    public static let setupWindowPhase = BootPhase.setupWindow.name
    /// Start the services that run once per installation.
    public static let startRunOnceServicesPhase = BootPhase.startRunOnceServices.name
    /// Start the services that are not lazily loaded.
    public static let startNonLazyServicesPhase = BootPhase.startNonLazyServices.name
    /// Start the auto-start service groups.
    public static let startAutoStartServiceGroupsPhase = BootPhase.startAutoStartServiceGroups.name
    /// Show the window.
    public static let showWindowPhase = BootPhase.showWindow.name
    /// Start the launcher (the root micro-application).
    public static let startLauncherPhase = BootPhase.startLauncher.name

    /// The engine that runs the phases.
    public let engine = PhaseEngine<BootPhase>(name: "bootLoader")

    /// Creates a BootLoader with mPaaS's default phases (or none).
    public init(includingDefaultPhases: Bool = true) {
        guard includingDefaultPhases else { return }
        let defaults: [(BootPhase, @MainActor (BootLoader, Application) throws -> Void)] = [
            (.setupWindow, { $0.setupWindow($1) }),
            (.startRunOnceServices, { try $0.startRunOnceServices($1) }),
            (.startNonLazyServices, { try $0.startNonLazyServices($1) }),
            (.startAutoStartServiceGroups, { try $0.startAutoStartServiceGroups($1) }),
            (.showWindow, { $0.showWindow($1) }),
            (.startLauncher, { try $0.startLauncher($1) }),
        ]
        for (phase, body) in defaults {
            engine.insert(Phase(phase, body: .sync { [unowned self] in try body(self, $0) }))
        }
    }

    /// The phases, in the order they run.
    public var phases: [Phase] { engine.steps }
    /// The phases' names, in order.
    public var phaseNames: [String] { engine.steps.map(\.phase.name) }
    /// How long an async phase may run when it names no deadline. Default 20 s.
    public var defaultPhaseDeadline: Duration {
        get { engine.defaultDeadline ?? .seconds(20) }
        set { engine.defaultDeadline = newValue }
    }
    /// Where the BootLoader is.
    public var state: State { engine.state }
    /// Each phase run so far, with its times.
    public var timeline: [PhaseRecord] { engine.timeline }

    // MARK: Editing the phases

    /// Adds a synchronous phase at the end, or before or after the phase named.
    /// - Returns: `false` (and changes nothing) if a phase has that name already, the phase to
    ///   insert next to does not exist, or the BootLoader has started.
    @discardableResult
    public func addPhase(_ name: String, before: String? = nil, after: String? = nil,
                         _ body: @escaping @MainActor (Application) throws -> Void) -> Bool {
        insert(Phase(BootPhase(name), body: .sync(body)), before: before, after: after)
    }

    /// Adds an asynchronous phase at the end, or before or after the phase named.
    /// - Parameters:
    ///   - name: The phase's name (its hook point, and its name in traces and timelines).
    ///   - before: The phase to run it before; `nil`: see `after`.
    ///   - after: The phase to run it after; both `nil`: at the end.
    ///   - deadline: How long it may run (default ``defaultPhaseDeadline``).
    ///   - body: The phase's work.
    /// - Returns: `false` (and changes nothing) if a phase has that name already, the phase to
    ///   insert next to does not exist, or the BootLoader has started.
    @discardableResult
    public func addPhase(_ name: String, before: String? = nil, after: String? = nil, deadline: Duration? = nil,
                         _ body: @escaping @MainActor (Application) async throws -> Void) -> Bool {
        insert(Phase(BootPhase(name), deadline: deadline, body: .async(body)), before: before, after: after)
    }

    /// Replaces the body of the phase named with a synchronous one. Returns `false` if there is none.
    @discardableResult
    public func replacePhase(_ name: String, with body: @escaping @MainActor (Application) throws -> Void) -> Bool {
        guard state == .idle else { return false }
        return engine.replace(BootPhase(name), body: .sync(body))
    }

    /// Replaces the body of the phase named with an asynchronous one. Returns `false` if there is none.
    @discardableResult
    public func replacePhase(_ name: String, deadline: Duration? = nil,
                             with body: @escaping @MainActor (Application) async throws -> Void) -> Bool {
        guard state == .idle else { return false }
        return engine.replace(BootPhase(name), deadline: deadline, body: .async(body))
    }

    /// Removes the phase named. Returns `false` if there is none.
    @discardableResult
    public func removePhase(_ name: String) -> Bool {
        guard state == .idle else { return false }
        return engine.remove(BootPhase(name))
    }

    private func insert(_ phase: Phase, before: String?, after: String?) -> Bool {
        guard state == .idle else { return false }
        return engine.insert(phase, before: before.map { BootPhase($0) }, after: after.map { BootPhase($0) })
    }

    // MARK: The default phases and the run's edges (override in a subclass)

    /// Called once before the first phase.
    open func willStart(_ application: Application) {}
    /// Called once after the last phase finished (not after a failure).
    open func didStart(_ application: Application) {}

    /// Makes ``Application/window`` for apps without scenes, if the delegate did not, with a
    /// ``PlaceholderController`` as its root.
    open func setupWindow(_ application: Application) {
        guard !application.configuration.usesScenes, application.window == nil else { return }
        let window = Window()
        window.rootController = PlaceholderController(message: "Launching…")
        application.window = window
    }

    /// Starts run-once services. Nothing to do until a service registry takes this phase over.
    open func startRunOnceServices(_ application: Application) throws {}
    /// Starts non-lazy services. Nothing to do until a service registry takes this phase over.
    open func startNonLazyServices(_ application: Application) throws {}
    /// Starts auto-start service groups. Nothing to do until a service registry takes this phase over.
    open func startAutoStartServiceGroups(_ application: Application) throws {}

    /// Shows ``Application/window`` for apps without scenes.
    open func showWindow(_ application: Application) {
        guard !application.configuration.usesScenes else { return }
        application.window?.makeKeyAndVisible()
    }

    /// Starts the launcher. Nothing to do until a micro-application registry takes this phase over.
    open func startLauncher(_ application: Application) throws {}

    // MARK: Running

    /// Runs the phases once; calls `finished` after the last one (not after a failure). Later calls do nothing.
    func run(in application: Application, finished: @escaping @MainActor () -> Void) {
        guard state == .idle else { return }
        willStart(application)
        engine.start(application, hooks: application.hooks, application: application) { [weak self, weak application] failure in
            guard let self, let application else { return }
            if let failure {
                application.reportHookError(HookError(phaseError: failure))
            } else {
                self.didStart(application)
                finished()
            }
        }
    }
}

/// A phase of the ``BootLoader``, by name — the hook point of its hooks, which receive the
/// application: `app.hooks.before(BootPhase.showWindow) { app in … }`.
public struct BootPhase: HookPoint, ExpressibleByStringLiteral, CustomStringConvertible {
    /// What the phase's hooks receive.
    public typealias Payload = Application
    /// The phase's name, unique within its BootLoader.
    public var name: String

    /// A phase named `name`.
    public init(_ name: String) { self.name = name }
    /// A phase named by a string literal.
    public init(stringLiteral name: String) { self.name = name }

    /// The phase's name.
    public var hookPointName: String { name }
    /// The phase's name.
    public var description: String { name }

    /// mPaaS's first phase: set up the window.
    public static let setupWindow = BootPhase("setupWindow")
    /// Start the services that run once per installation.
    public static let startRunOnceServices = BootPhase("startRunOnceServices")
    /// Start the services that are not lazily loaded.
    public static let startNonLazyServices = BootPhase("startNonLazyServices")
    /// Start the auto-start service groups.
    public static let startAutoStartServiceGroups = BootPhase("startAutoStartServiceGroups")
    /// Show the window.
    public static let showWindow = BootPhase("showWindow")
    /// Start the launcher (the root micro-application).
    public static let startLauncher = BootPhase("startLauncher")
}

extension HookError {
    /// The application's report of a failed BootLoader phase: point `bootLoader`, stage
    /// ``HookError/Stage/phase``, the phase's name as the hook.
    init(phaseError error: PhaseError) {
        let failure: Failure = switch error.cause {
        case .timedOut(let deadline): .timedOut(deadline: deadline)
        case .hookFailed(let hookError): .threw(hookError)
        default: .threw(error.underlyingError ?? error)
        }
        self.init(point: error.engine, stage: .phase, hook: error.phase ?? "", failure: failure)
    }
}
