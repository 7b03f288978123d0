import AppKernel

/// A rule the ``LifecycleExplorer`` checks after every step of every schedule, or once at its
/// end: it answers what is wrong, or `nil` when it holds.
///
/// Invariants are equal when their names are: `found.invariant == .noUnheardErrors`.
///
/// ```swift
/// let neverTwoScenes = ExplorerInvariant("neverTwoScenes") { world in
///     (world.application?.connectedScenes.count ?? 0) > 1 ? "two scenes are connected" : nil
/// }
/// ```
public struct ExplorerInvariant: Hashable, Sendable, CustomStringConvertible {
    /// When an invariant is checked.
    public enum Timing: Sendable, Hashable {
        /// After every step.
        case afterEachStep
        /// Once, at the end of a schedule, after ``ExplorerWorld/finish()`` moved time past every
        /// deadline.
        case atEnd
    }

    /// The invariant's name, as reports and printed tests show it.
    public let name: String
    /// When it is checked.
    public let timing: Timing
    /// What is wrong in `world`, or `nil` when the invariant holds.
    public let check: @MainActor @Sendable (ExplorerWorld) -> String?

    /// Creates an invariant.
    /// - Parameters:
    ///   - name: Its name (what makes two invariants equal).
    ///   - timing: After every step (the default) or at the end of a schedule.
    ///   - check: Answers what is wrong, or `nil`.
    public init(_ name: String, timing: Timing = .afterEachStep, check: @escaping @MainActor @Sendable (ExplorerWorld) -> String?) {
        self.name = name
        self.timing = timing
        self.check = check
    }

    /// Its name.
    public var description: String { name }

    /// Equal names.
    public static func == (lhs: ExplorerInvariant, rhs: ExplorerInvariant) -> Bool { lhs.name == rhs.name }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension ExplorerInvariant {
    /// No delegate or scene callback reaches an app after its termination (`willTerminate`
    /// aside).
    public static let noCallbackAfterTermination = ExplorerInvariant("noCallbackAfterTermination") { world in
        world.callbacksAfterTermination.first.map { "\($0) reached the app after it terminated" }
    }

    /// No work the app started (``ExplorerWorld/track(_:named:)``) still runs when the app is
    /// suspended: work begun in the background holds a background task until it ends, as UIKit's
    /// `beginBackgroundTask(withName:expirationHandler:)` asks.
    public static let backgroundWorkCovered = ExplorerInvariant("backgroundWorkCovered") { world in
        world.trackedWork.first { $0.ranWhileSuspended }.map {
            "'\($0.name)' was still running when the app was suspended: begin a background task before starting it and end it when it ends"
        }
    }

    /// No work the app started (a service, an upload) still runs once the app heard
    /// `willTerminate` and terminated: `applicationWillTerminate(_:)` is where it stops its work
    /// (a suspended app, ended without callbacks, is exempt).
    public static let noWorkAfterTermination = ExplorerInvariant("noWorkAfterTermination") { world in
        world.workAfterTermination.first.map { "'\($0.name)' still runs after the app terminated: stop it in applicationWillTerminate" }
    }

    /// No service stops while a service that depends on it still runs
    /// (``ExplorerWorld/startService(named:dependencies:_:)``,
    /// ``ExplorerWorld/trackService(_:named:dependencies:)``): dependents stop first, as mPaaS's
    /// service registry and swift-service-lifecycle shut down in reverse start order.
    public static let servicesStopAfterDependents = ExplorerInvariant("servicesStopAfterDependents") { world in
        world.servicesStoppedEarly.first
    }

    /// Every completion a step handed the app (push, fetch, quick action) was answered, and
    /// none answered twice by the app (a call after the system answered for it — at the deadline
    /// or the termination — is the kernel's `completionCalledTwice` diagnostic, not this).
    public static let completionsAnsweredOnce = ExplorerInvariant("completionsAnsweredOnce", timing: .atEnd) { world in
        if let twice = world.completions.first(where: { $0.answeredTwiceByApp() }) {
            return "the app called the completion handler of \(twice.event) twice"
        }
        return world.completions.first { !$0.isCompleted() }.map { "the completion of \($0.event) was never answered" }
    }

    /// At the end, after every background time has run out, no background task is still held.
    public static let backgroundTasksEnded = ExplorerInvariant("backgroundTasksEnded", timing: .atEnd) { world in
        guard let application = world.application, !application.runningBackgroundTasks.isEmpty,
              application.state != .terminated else { return nil }
        return "\(application.runningBackgroundTasks.count) background task(s) neither ended nor expired"
    }

    /// Every failure of a launch, a hook or a BootLoader phase was heard: by a handler
    /// (`launchErrorHandler`, `hookErrorHandler`) or, for an unhandled one, by the host.
    public static let noUnheardErrors = ExplorerInvariant("noUnheardErrors", timing: .atEnd) { world in
        if let error = world.host.unheardHookErrors.first { return "a hook failed and nothing heard it: \(error)" }
        return nil
    }
}

/// The invariants a ``LifecycleExplorer`` checks: ``standard`` (the world's built-in set) and
/// your own.
///
/// ```swift
/// let invariants: InvariantSet = .standard + [neverTwoScenes]
/// ```
public struct InvariantSet: Sendable, ExpressibleByArrayLiteral {
    /// Whether the world's ``ExplorerWorld/standardInvariants`` are checked.
    public var includesStandard: Bool
    /// The other invariants.
    public var invariants: [ExplorerInvariant]

    /// The world's built-in invariants: the kernel's, and those of the world's kind (the SDK
    /// testing kit's worlds add the SDK's).
    public static let standard = InvariantSet(includesStandard: true, invariants: [])

    /// Creates a set of `invariants` only.
    public init(arrayLiteral invariants: ExplorerInvariant...) { self.init(includesStandard: false, invariants: invariants) }

    /// Creates a set.
    public init(includesStandard: Bool, invariants: [ExplorerInvariant]) {
        self.includesStandard = includesStandard
        self.invariants = invariants
    }

    /// Both sets.
    public static func + (lhs: InvariantSet, rhs: InvariantSet) -> InvariantSet {
        InvariantSet(includesStandard: lhs.includesStandard || rhs.includesStandard, invariants: lhs.invariants + rhs.invariants)
    }

    /// The invariants checked in `world`, without repeats.
    @MainActor
    func resolved(in world: ExplorerWorld) -> [ExplorerInvariant] {
        var seen = Set<String>()
        return ((includesStandard ? world.standardInvariants : []) + invariants).filter { seen.insert($0.name).inserted }
    }
}
