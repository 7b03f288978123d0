public import AppKernel

/// A BootLoader that boots a ``Context`` — mPaaS's BootLoader with its framework: it makes the
/// application's context before the first phase, runs `configure` (register apps and services,
/// or load a ``RuntimeManifest``) as the ``loadModulesPhase``, starts the eager services in
/// `BootLoader.startNonLazyServicesPhase` and the auto-start groups in
/// `BootLoader.startAutoStartServiceGroupsPhase` (both awaited, dependency-ordered and
/// parallel), and starts the launcher in `BootLoader.startLauncherPhase`.
///
/// ```swift
/// let loader = ContextBootLoader { context in
///     try context.loadManifest(at: manifestURL, classes: classes)
/// }
/// let app = try host.launch(delegate: AppDelegate(), bootLoader: loader)
/// ```
///
/// A failing phase (a bad manifest, a `failLaunch` service, a refused launcher) stops the boot,
/// names the phase, and reaches `Application.hookErrorHandler`; the context keeps what
/// started, so the services shut down when the application terminates. The run-once group
/// (``RuntimeManifest/runOnceGroup``) starts in `BootLoader.startRunOnceServicesPhase`, before
/// the eager services; asynchronous auto-start groups start after the synchronous ones, and the
/// boot does not wait for them.
@MainActor
public final class ContextBootLoader: BootLoader {
    /// The phase that runs `configure`, first.
    public static let loadModulesPhase = "loadModules"

    /// The application's context, made when the boot starts; the loader keeps it as long as it
    /// lives. The application owns the loader and the context points back at the application
    /// weakly, so keeping it makes no cycle: the application is freed with its loader, context
    /// and services once nobody holds it.
    public private(set) var context: Context?
    private var terminationToken: ListenerToken?
    private var didTerminate = false
    private let configure: @MainActor (Context) throws -> Void

    /// Creates the BootLoader.
    /// - Parameters:
    ///   - servicesDeadline: How long each service phase may take (the whole boot of its
    ///     services), on the application's clock.
    ///   - configure: Registers the micro-apps and services; a thrown error fails the boot.
    public init(servicesDeadline: Duration = .seconds(20), configure: @escaping @MainActor (Context) throws -> Void) {
        self.configure = configure
        super.init()
        replacePhase(Self.startRunOnceServicesPhase, deadline: servicesDeadline) { [unowned self] _ in
            try await self.requireContext().startRunOnceServices()
        }
        addPhase(Self.loadModulesPhase, before: Self.setupWindowPhase) { [unowned self] _ in try self.configure(try self.requireContext()) }
        replacePhase(Self.startNonLazyServicesPhase, deadline: servicesDeadline) { [unowned self] _ in
            try await self.requireContext().services.startServices(groups: [], finishingBoot: false)
        }
        replacePhase(Self.startAutoStartServiceGroupsPhase, deadline: servicesDeadline) { [unowned self] _ in
            let context = try self.requireContext()
            try await context.services.startServices(groups: context.autoStartGroups)
            context.startAsynchronousGroups()
        }
        replacePhase(Self.startLauncherPhase) { [unowned self] _ in
            let context = try self.requireContext()
            guard context.launcherName != nil else { return }
            guard context.startLauncher() else { throw LauncherError(reason: context.lastRefusal ?? "refused") }
        }
    }

    /// Makes the context.
    public override func willStart(_ application: Application) {
        guard context == nil else { return }
        context = Context(application: application)
        terminationToken = application.addListener(for: .willTerminate) { [unowned self] _ in
            self.didTerminate = true
        }
    }

    /// The context for a phase; a phase that runs after the application terminated fails with
    /// `CancellationError`.
    private func requireContext() throws -> Context {
        if didTerminate { throw CancellationError() }
        guard let context else { preconditionFailure("ContextBootLoader: a phase ran before willStart made the context") }
        return context
    }
}

/// The launcher could not be started at boot.
public struct LauncherError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why (the context's ``Context/lastRefusal``).
    public var reason: String
    /// `the launcher did not start: <reason>`.
    public var description: String { "the launcher did not start: \(reason)" }
}
