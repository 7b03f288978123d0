public import AppKernel

/// The control centre of micro-applications and services — mPaaS's `DTContext`, one per
/// `Application`.
///
/// ```swift
/// let context = Context(application: app)
/// context.registerApplication(named: "Home") { HomeApp() }
/// context.startApplication("Home", params: [:], animated: false)
/// context.startApplication("Transfer", params: ["amount": "10"], launchMode: .present)
/// ```
///
/// Stack rules (mPaaS's): starting an app pauses the one below and pushes it; starting an app
/// already on the stack pops everything above it (each gets `willTerminate` and is destroyed) and
/// resumes it with the new params — or, with `appClearTop: false`, ends it where it is and starts
/// a new instance on top; starting the launcher pops to the root; only the top app can
/// exit itself; an app whose `applicationShouldTerminate` answers `false` is not popped (the start
/// that needed it fails and says why); a second instance of an app only if its delegate allows
/// it. The process's life cycle reaches the apps: background pauses the top app, foreground
/// resumes it, a memory warning reaches all, termination terminates them top-down.
///
/// Ownership runs one way: the application owns its BootLoader, a ``ContextBootLoader`` owns
/// the context, the context owns its ``services``; the context points back at the application
/// weakly, so an application is freed with its context once nobody holds it, terminated or not.
/// A context you make yourself is yours to keep.
@MainActor
public final class Context {
    /// The application this context belongs to; `nil` once it has been freed.
    ///
    /// The context does not keep its application alive (the application, through its
    /// ``ContextBootLoader``, keeps the context). A context that outlives its application — one
    /// you made and still hold — behaves as for a terminated application: apps it starts are
    /// paused, and refusals are kept in ``lastRefusal`` but no longer reported as diagnostics.
    public private(set) weak var application: Application?
    /// The name of the root app; starting it pops to the root.
    public var launcherName: String?
    /// The service groups ``startServices()`` starts after the eager services (a manifest's
    /// auto-start groups), in order, waiting for them.
    public var autoStartGroups: [String] = []
    /// The auto-start groups ``startServices()`` starts after those, without waiting for them
    /// (mPaaS's asynchronous `[AUTOSTART]` groups); a failure among them is reported as a
    /// `moduleRefused` diagnostic and fails nothing else.
    public var asynchronousAutoStartGroups: [String] = []
    /// The asynchronous groups' start, while it runs (await its value to wait for it).
    public private(set) var asynchronousStart: Task<Void, Never>?
    /// The apps on the stack, bottom first.
    public private(set) var applicationStack: [MicroApplication] = []
    /// Why the last refused start or exit was refused.
    public private(set) var lastRefusal: String?
    /// Observes stack changes (for a UI).
    public var onStackChange: (@MainActor ([MicroApplication]) -> Void)?

    var factories: [String: @MainActor () -> any MicroApplicationDelegate] = [:]
    private var nextID = 1
    private var tokens: [ListenerToken] = []
    /// The services.
    public let services: ServiceRegistry
    /// The services' shutdown, started when the application terminates.
    public private(set) var shutdown: Task<Void, Never>?

    /// Creates the context of `application` and follows its life cycle.
    public init(application: Application) {
        self.application = application
        self.services = ServiceRegistry(application: application)
        tokens = [
            application.addListener(for: .didEnterBackground) { [weak self] _ in self?.pauseTop() },
            application.addListener(for: .willEnterForeground) { [weak self] _ in self?.resumeTop(enteringForeground: true) },
            application.addListener(for: .didReceiveMemoryWarning) { [weak self] _ in
                for app in self?.applicationStack.reversed() ?? [] { app.delegate.applicationDidReceiveMemoryWarning(app) }
            },
            application.addListener(for: .willTerminate) { [weak self] _ in self?.terminateAll() },
        ]
    }

    /// The app on top, the one the user sees.
    public var currentApplication: MicroApplication? { applicationStack.last }

    /// The newest app on the stack with `name`; `nil` if none.
    public func findApplication(named name: String) -> MicroApplication? { applicationStack.last { $0.name == name } }

    /// Every app on the stack with `name`, bottom first — mPaaS's `findApplicationsByName:`.
    public func findApplications(named name: String) -> [MicroApplication] { applicationStack.filter { $0.name == name } }

    /// Registers an app by name; its delegate is made only when it starts.
    /// - Returns: `false` (and changes nothing) when the name is taken.
    @discardableResult
    public func registerApplication(named name: String, delegate factory: @escaping @MainActor () -> any MicroApplicationDelegate) -> Bool {
        guard factories[name] == nil else { return refuse("an application named '\(name)' is already registered") }
        factories[name] = factory
        return true
    }

    /// The registered app names, sorted.
    public var registeredApplicationNames: [String] { factories.keys.sorted() }

    // MARK: Starting

    /// Starts an app, pushed (animated or not). See ``startApplication(_:params:appClearTop:launchMode:sourceID:)``.
    @discardableResult
    public func startApplication(_ name: String, params: [String: String], animated: Bool) -> Bool {
        startApplication(name, params: params, launchMode: .push(animated: animated))
    }

    /// Starts an app with a launch mode — mPaaS's `startApplication:params:appClearTop:launchMode:sourceId:`.
    /// An app already on the stack (and not allowing several instances) is brought back: with
    /// `appClearTop` (the default) what is above it is popped and it resumes with `params`;
    /// without, it exits where it is and a new instance starts on top. Starting the launcher
    /// while it is the root always pops to it.
    /// - Parameters:
    ///   - name: The registered app's name.
    ///   - params: What it starts (or resumes) with.
    ///   - appClearTop: Bring an app already on the stack back by popping what is above it
    ///     (default), or end it where it is and start a new instance on top.
    ///   - launchMode: How it is shown (its delegate may change it).
    ///   - sourceID: Who starts it (mPaaS's `sourceId`); `nil`: the current app's name.
    /// - Returns: Whether the app is now on top; ``lastRefusal`` says why not.
    @discardableResult
    public func startApplication(_ name: String, params: [String: String], appClearTop: Bool = true,
                                 launchMode: LaunchMode, sourceID: String? = nil) -> Bool {
        guard let factory = factories[name] else { return refuse("no application named '\(name)' is registered") }
        if name == launcherName, let root = applicationStack.first, root.name == name {
            return bringBack(root, params: params)
        }
        if let existing = findApplication(named: name), !existing.delegate.applicationAllowsMultipleInstances(existing) {
            if appClearTop { return bringBack(existing, params: params) }
            guard existing.delegate.applicationShouldTerminate(existing) else {
                return refuse("'\(name)' refused to terminate (applicationShouldTerminate answered false), so it cannot start again on top")
            }
            removeWithoutResuming(existing)
        }
        let app = MicroApplication(name: name, id: nextID, delegate: factory())
        nextID += 1
        app.sourceID = sourceID ?? currentApplication?.name
        app.delegate.applicationDidCreate(app)
        guard app.delegate.applicationShouldStart(app, options: params) else {
            app.state = .terminated
            return refuse("'\(name)' refused to start (applicationShouldStart answered false)")
        }
        app.params = params
        let mode = app.delegate.application(app, overrideLaunchMode: launchMode) ?? launchMode
        app.launchMode = app.delegate.applicationStartsWithoutAnimation(app) ? mode.withoutAnimation : mode
        app.delegate.application(app, willStartLaunchingWithOptions: params)
        if let below = currentApplication, below.state == .running {
            below.delegate.applicationWillPause(below)
            below.state = .paused
        }
        app.rootController = app.delegate.rootController(in: app)
        applicationStack.append(app)
        app.state = applicationState.isForeground || applicationState == .notRunning ? .running : .paused
        app.delegate.applicationDidFinishLaunching(app)
        onStackChange?(applicationStack)
        return true
    }

    /// Takes `app` off the stack where it is (it is told `willTerminate`); the app below it is
    /// not resumed (another app is about to cover it).
    private func removeWithoutResuming(_ app: MicroApplication) {
        guard let index = applicationStack.firstIndex(where: { $0 === app }) else { return }
        destroy(app, animated: false)
        applicationStack.remove(at: index)
    }

    /// Pops everything above `app` (top first) and resumes it with `params`.
    private func bringBack(_ app: MicroApplication, params: [String: String]) -> Bool {
        guard let index = applicationStack.firstIndex(where: { $0 === app }) else { return false }
        let above = applicationStack[(index + 1)...]
        if let blocker = above.reversed().first(where: { !$0.delegate.applicationShouldTerminate($0) }) {
            return refuse("'\(blocker.name)' refused to terminate (applicationShouldTerminate answered false), so '\(app.name)' cannot be brought back")
        }
        for top in above.reversed() { destroy(top, animated: false) }
        applicationStack.removeSubrange((index + 1)...)
        app.params = params
        resume(app)
        onStackChange?(applicationStack)
        return true
    }

    /// Resumes `app` with its params: `willResumeWithOptions`, `applicationDidResume`,
    /// `didResumeWithOptions`. A paused app is resumed only while the process is in the foreground.
    private func resume(_ app: MicroApplication, enteringForeground: Bool = false) {
        app.delegate.application(app, willResumeWithOptions: app.params)
        guard enteringForeground || applicationState != .background else {
            app.state = .paused
            return
        }
        app.state = .running
        app.delegate.applicationDidResume(app)
        app.delegate.application(app, didResumeWithOptions: app.params)
    }

    // MARK: Exiting

    /// The top app exits itself. An app that is not on top cannot exit (only a forced exit
    /// removes it); an app whose `applicationShouldTerminate` answers `false` stays.
    @discardableResult
    public func exitApplication(_ app: MicroApplication, animated: Bool = true) -> Bool {
        guard app === currentApplication else {
            return refuse("'\(app.name)' is not on top; only the top application can exit itself (use forceExitApplication)")
        }
        guard app.delegate.applicationShouldTerminate(app) else {
            return refuse("'\(app.name)' refused to terminate (applicationShouldTerminate answered false)")
        }
        destroy(app, animated: animated)
        applicationStack.removeLast()
        resumeTop()
        onStackChange?(applicationStack)
        return true
    }

    /// Removes an app wherever it is on the stack, whatever its delegate says.
    public func forceExitApplication(_ app: MicroApplication) {
        guard let index = applicationStack.firstIndex(where: { $0 === app }) else { return }
        let wasTop = index == applicationStack.count - 1
        destroy(app, animated: false)
        applicationStack.remove(at: index)
        if wasTop { resumeTop() }
        onStackChange?(applicationStack)
    }

    /// Exits every app, top first (forced).
    public func exitAllApplications() {
        for app in applicationStack.reversed() { destroy(app, animated: false) }
        applicationStack.removeAll()
        onStackChange?(applicationStack)
    }

    private func destroy(_ app: MicroApplication, animated: Bool) {
        app.delegate.applicationWillTerminate(app, animated: animated)
        app.state = .terminated
        app.rootController = nil
    }

    /// Keeps the reason in ``lastRefusal`` and reports it as a `moduleRefused` diagnostic.
    private func refuse(_ reason: String) -> Bool {
        lastRefusal = reason
        application?.reportDiagnostic(.moduleRefused, subject: "context", message: reason)
        return false
    }

    // MARK: The process's life cycle

    /// The application's state; `.terminated` once the application has been freed.
    private var applicationState: ApplicationState { application?.state ?? .terminated }

    private func pauseTop() {
        guard let top = currentApplication, top.state == .running else { return }
        top.delegate.applicationWillPause(top)
        top.state = .paused
    }

    private func resumeTop(enteringForeground: Bool = false) {
        guard let top = currentApplication, top.state == .paused, enteringForeground || applicationState != .background else { return }
        resume(top, enteringForeground: enteringForeground)
    }

    private func terminateAll() {
        exitAllApplications()
        shutdown = Task { [services] in await services.shutdown() }
    }

    // MARK: Services (mPaaS's names)

    /// A started service; see ``ServiceRegistry/findService(named:)``.
    public func findService(named name: String) -> (any Service)? { services.findService(named: name) }

    /// Registers a service instance; `false` for a duplicate name.
    @discardableResult
    public func registerService(_ service: any Service, forName name: String) -> Bool { services.register(service, forName: name) }

    /// Unregisters a service (it is told `willDestroy`) — mPaaS's `unregisterServiceForName:`.
    public func unregisterService(forName name: String) { services.unregisterService(named: name) }

    /// Starts the run-once group (``RuntimeManifest/runOnceGroup``), then the eager services and
    /// the auto-start groups, then — without waiting for them — the asynchronous auto-start groups;
    /// see ``ServiceRegistry/startServices(groups:)``.
    /// - Throws: ``ServiceError``.
    public func startServices() async throws(ServiceError) {
        try await startRunOnceServices()
        try await services.startServices(groups: autoStartGroups)
        startAsynchronousGroups()
    }

    /// Starts the services of mPaaS's `RunOnceServices` group (before all others).
    func startRunOnceServices() async throws(ServiceError) {
        try await services.startGroups([RuntimeManifest.runOnceGroup])
    }

    /// Starts the asynchronous auto-start groups in the background, in order.
    func startAsynchronousGroups() {
        guard !asynchronousAutoStartGroups.isEmpty else { return }
        // The application weakly: a group whose start never ends must not keep it alive.
        asynchronousStart = Task { [services, asynchronousAutoStartGroups, weak application] in
            do throws(ServiceError) {
                try await services.startGroups(asynchronousAutoStartGroups)
            } catch {
                application?.reportDiagnostic(.moduleRefused, subject: "services", message: "an asynchronous auto-start group failed: \(error)")
            }
        }
    }

    /// Starts the launcher app (pushed without animation); `false` if there is none or it
    /// refused (see ``lastRefusal``).
    @discardableResult
    public func startLauncher(params: [String: String] = [:]) -> Bool {
        guard let launcherName else { return refuse("no launcher is set") }
        return startApplication(launcherName, params: params, animated: false)
    }

    /// Waits until the eager and auto-start services have started.
    public func servicesReady() async throws(ServiceError) { try await services.servicesReady() }
}
