public import AppKernel
import AppKernelCore
import Dispatch
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs an `Application` as a Linux process: the process's signals, memory pressure and
/// systemd's notify protocol drive the same life cycle the simulated host drives in tests.
///
/// ```swift
/// @main enum Server {
///     @MainActor static func main() async {
///         exit(await ProcessHost.run(delegate: AppDelegate()))
///     }
/// }
/// ```
///
/// | signal | effect (defaults) |
/// |---|---|
/// | SIGTERM, SIGINT | terminate gracefully (resign, background, disconnect, `willTerminate`) within ``Configuration/terminationDeadline``; a second SIGINT, or the deadline, forces exit 1 and says which step was running |
/// | SIGTSTP | enter the background, then stop (as the shell expects) |
/// | SIGCONT | back to the foreground |
/// | SIGHUP | configuration changed: `RELOADING=1`, the application's `ApplicationEvent.didReceiveReloadRequest` (the SDK manager reloads its boot config), ``onConfigurationChange``, `READY=1` |
/// | SIGUSR1 | memory warning |
///
/// The mapping is ``Configuration/signalActions``; other signals are left to the system. Signals
/// that arrive together count once per kind.
///
/// Some system events have no source in a Linux process, so the host never sends them: a paired
/// watch app's request (`SystemEvent.watchKitExtensionRequest`) among them — there is no watch to
/// ask. A part of the app that bridges such a source sends the event itself through
/// ``application`` (`Application.handle(_:)`); `SimulatedHost` sends it in tests.
///
/// ### Failures speak
/// A failure nothing in the app handled — reported with `Application.reportUnhandledError(_:subject:message:advice:exitStatus:)`,
/// as the SDK manager does for a launch that failed with no `launchErrorHandler` — is logged at
/// error level (what failed, where, what to do) and ends the process gracefully with the status
/// the report asks for, unless ``Configuration/exitsOnUnhandledError`` is `false`. A launch that
/// failed so is never reported as launched, nor `READY=1` to systemd.
///
/// | exit status | when |
/// |---|---|
/// | 0 | the app terminated normally |
/// | 1 | a forced exit (a second SIGINT, the termination deadline) |
/// | 2 | the launch was refused (bad arguments or environment) |
/// | 70 (`EX_SOFTWARE`) | an unhandled error (`UnhandledError.defaultExitStatus`), a failed launch among them |
/// | 75 (`EX_TEMPFAIL`) | another instance holds the app's single-instance lock (the SDK manager's `requiresSingleInstance`) |
@MainActor
public final class ProcessHost {
    /// What a signal does.
    public enum SignalAction: String, Sendable, Hashable, CaseIterable {
        /// Terminate gracefully (a second SIGINT forces the exit).
        case terminate
        /// Enter the background, then stop the process (SIGSTOP), as a shell's Ctrl-Z expects.
        case backgroundAndStop
        /// Return to the foreground.
        case foreground
        /// Configuration changed: reload.
        case reloadConfiguration
        /// Send a memory warning.
        case memoryWarning
    }

    /// The default mapping: TERM and INT terminate, TSTP backgrounds and stops, CONT returns, HUP
    /// reloads, USR1 warns about memory.
    nonisolated public static let defaultSignalActions: [Int32: SignalAction] = [
        SIGTERM: .terminate, SIGINT: .terminate, SIGTSTP: .backgroundAndStop, SIGCONT: .foreground,
        SIGHUP: .reloadConfiguration, SIGUSR1: .memoryWarning,
    ]

    /// How the host runs.
    public struct Configuration: Sendable {
        /// Which signals the host handles and how; signals not listed are left to the system.
        public var signalActions: [Int32: SignalAction]
        /// How long a graceful termination may take. Default 5 s.
        public var terminationDeadline: Duration
        /// Memory-pressure input; `nil` turns it off.
        public var memoryPressure: MemoryPressureSource?
        /// The process's arguments (without the program name).
        public var arguments: [String]
        /// The process's environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `APPKERNEL_TRACE`, …).
        public var environment: [String: String]
        /// Where log lines go.
        public var log: any LogHandler
        /// The application's settings.
        public var application: ApplicationConfiguration
        /// Whether an unhandled error (`Application.reportUnhandledError(_:subject:message:advice:exitStatus:)`)
        /// ends the process — with the status it asks for, after a graceful termination. Default
        /// `true`: a service whose launch failed must not sit there as if it ran. `false` keeps
        /// the process up; the error is still logged at error level.
        public var exitsOnUnhandledError: Bool = true

        /// Creates a configuration from the process (arguments and environment) by default.
        public init(signalActions: [Int32: SignalAction] = ProcessHost.defaultSignalActions,
                    terminationDeadline: Duration = .seconds(5), memoryPressure: MemoryPressureSource? = MemoryPressureSource(),
                    arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                    environment: [String: String] = ProcessInfo.processInfo.environment,
                    log: any LogHandler = StandardErrorLogHandler(), application: ApplicationConfiguration = ApplicationConfiguration()) {
            self.signalActions = signalActions
            self.terminationDeadline = terminationDeadline
            self.memoryPressure = memoryPressure
            self.arguments = arguments
            self.environment = environment
            self.log = log
            self.application = application
        }
    }

    /// The application.
    public let application: Application
    /// The host's settings.
    public let configuration: Configuration
    /// The launch timeline (exported when `APPKERNEL_TRACE=path` is set: a picture for a path
    /// ending in `.html`, Chrome trace-event JSON otherwise).
    public let timeline = LaunchTimeline()
    /// The systemd connection, when `NOTIFY_SOCKET` is set.
    public let systemd: SystemdNotifier?
    /// Runs on SIGHUP, between `RELOADING=1` and `READY=1`, after the application heard
    /// `ApplicationEvent.didReceiveReloadRequest`.
    public var onConfigurationChange: (@MainActor () async -> Void)?

    private let state = SharedBox(SharedState())
    private var sources: [any DispatchSourceSignal] = []
    private var terminated: CheckedContinuation<Void, Never>?
    /// Whether the host got as far as `READY=1`; `nil` until it is decided.
    private var readiness: Bool?
    private var readinessWaiters: [CheckedContinuation<Bool, Never>] = []
    private var stepObserver: ListenerToken?
    var backgroundTasks: [Task<Void, Never>] = []
    private let launchArguments: LaunchArguments
    let clock = ContinuousClock()
    private var unhandledErrorObservation: ListenerToken?
    /// The unhandled error that ends the process, once one was reported (and the host exits on them).
    private var endingError: UnhandledError?
    /// How many unhandled errors were reported while the app stays up regardless.
    private var toleratedErrors = 0
    /// Whether the launch (and its gates) is over.
    private var launchOver = false
    /// The journal `APPKERNEL_JOURNAL` asks for (ProcessHost+Journal.swift).
    var journal: ProcessJournal?

    /// What the signal queue and the main actor share.
    struct SharedState {
        var terminating = false
        var currentStep = "idle"
        var sigintCount = 0
    }

    /// The shared state behind a lock, as a reference the signal queue can hold: the signal queue
    /// and the main actor both take it, so it is AppKernelCore's `Locked` (an `NSLock`, which
    /// ThreadSanitizer models; `Synchronization.Mutex` here was reported as racing).
    typealias SharedBox = Locked<SharedState>

    /// Runs `delegate`'s application until it terminates; returns the exit status.
    public static func run(delegate: any ApplicationDelegate, interface: (any FrameworkInterface)? = nil,
                           bootLoader: BootLoader = BootLoader(), configuration: Configuration = Configuration()) async -> Int32 {
        do {
            let host = try ProcessHost(delegate: delegate, interface: interface, bootLoader: bootLoader, configuration: configuration)
            return await host.run()
        } catch {
            configuration.log.log(.error, "\(error)")
            return 2
        }
    }

    /// A setting in the environment the host cannot use.
    public struct EnvironmentError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The variable.
        public var name: String
        /// What is wrong with it.
        public var message: String
        /// `NAME: what is wrong`.
        public var description: String { "\(name): \(message)" }
    }

    /// What became of the launch timeline `APPKERNEL_TRACE` asked for.
    public enum TimelineExport: Sendable, Hashable {
        /// Written to `path`.
        case written(path: String)
        /// Not written to `path`; `reason` says why.
        case failed(path: String, reason: String)
    }

    /// What became of the launch timeline: `nil` until the launch is over, or when
    /// `APPKERNEL_TRACE` is not set.
    public internal(set) var timelineExport: TimelineExport?

    /// Checks the host's environment variables before anything runs: an `APPKERNEL_TRACE` (the
    /// launch timeline) or `APPKERNEL_JOURNAL` (the journal of external events, which
    /// AppKernelTesting's `SimulatedHost.replay(journal:)` replays) that is set must name a file;
    /// the trace's folder must exist and be writable (`ProcessHost+Environment.swift`).
    /// - Throws: ``EnvironmentError`` naming the variable.
    public static func checkEnvironment(_ environment: [String: String]) throws(EnvironmentError) {
        if let trace = environment["APPKERNEL_TRACE"], trace.trimmingCharacters(in: .whitespaces).isEmpty {
            throw EnvironmentError(name: "APPKERNEL_TRACE", message: "set but empty; give it the path of the trace file to write, or unset it")
        }
        if let trace = environment["APPKERNEL_TRACE"] { try checkWritableFile(trace, variable: "APPKERNEL_TRACE", what: "the launch timeline") }
        if let journal = environment["APPKERNEL_JOURNAL"], journal.trimmingCharacters(in: .whitespaces).isEmpty {
            throw EnvironmentError(name: "APPKERNEL_JOURNAL", message: "set but empty; give it the path of the journal file to write, or unset it")
        }
    }

    /// Creates a host and its application (not launched yet).
    /// - Throws: ``LaunchArguments/Error`` for bad arguments, ``EnvironmentError`` for a bad
    ///   environment variable (``checkEnvironment(_:)``).
    public init(delegate: any ApplicationDelegate, interface: (any FrameworkInterface)? = nil, bootLoader: BootLoader = BootLoader(),
                configuration: Configuration = Configuration()) throws {
        try Self.checkEnvironment(configuration.environment)
        self.configuration = configuration
        self.launchArguments = try LaunchArguments(arguments: configuration.arguments, environment: configuration.environment)
        self.application = Application(delegate: delegate, interface: interface, bootLoader: bootLoader,
                                       clock: ContinuousClock(), configuration: configuration.application)
        self.systemd = SystemdNotifier(environment: configuration.environment)
        timeline.record(application)
        journal = try Self.openJournal(configuration: configuration, application: application)
        unhandledErrorObservation = application.observeUnhandledErrors { [weak self] in self?.heard($0) }
        // Kept: a dropped token would stop the observer at once.
        let systemd = self.systemd
        stepObserver = application.addPipelineObserver { [state] stage, event in
            state.withLock { $0.currentStep = "\(stage).\(event.name.rawValue)" }
            // Every phase engine's phases (the BootLoader's, the SDK manager's), read one way.
            if case .phases(let engine) = stage, case .phase(let phase) = event { systemd?.notify("STATUS=\(engine) \(phase)") }
        }
    }

    /// Launches the application and serves it until it terminates; returns the exit status: 0, or
    /// the status of the unhandled error that ended it (see the type's table).
    public func run() async -> Int32 {
        await installSignalHandlers()
        let launchStart = application.uptime
        do {
            _ = try journaled(launchArguments.inBackground ? "launchInBackground" : "launch") {
                try application.handle(.launch(launchArguments.options, inBackground: launchArguments.inBackground))
            }
        } catch {
            configuration.log.log(.error, "the launch was refused: \(error)")
            settleReadiness(false)
            return 2
        }
        // Ready once every launch gate (the SDK manager's launch, say) has opened.
        await application.waitForLaunchGates()
        launchOver = true
        timeline.finish(at: application.uptime)
        exportTimeline(launchStart: launchStart)
        if let endingError {
            // Not launched: say so, never READY=1, and end gracefully with the status asked for.
            systemd?.notify("STATUS=launch failed: \(endingError.subject)")
            settleReadiness(false)
            configuration.log.log(.error, "the launch failed (\(endingError.subject)) after \(application.uptime - launchStart); ending with exit status \(endingError.exitStatus)")
            terminate(cause: "the launch failed")
            return finish()
        }
        systemd?.notify("READY=1")
        settleReadiness(true)
        systemd?.notify("STATUS=running")
        if toleratedErrors > 0 {
            configuration.log.log(.warning, "launched with \(toleratedErrors) unhandled error(s) (\(application.state)) in \(application.uptime - launchStart); staying up as configured (exitsOnUnhandledError is false)")
        } else {
            configuration.log.log(.info, "launched (\(application.state)) in \(application.uptime - launchStart)")
        }
        startWatchdog()
        startMemoryMonitor()
        if application.state != .terminated {
            await withCheckedContinuation { terminated = $0 }
        }
        return finish()
    }

    /// Stops the host's tasks and signal sources; the exit status: the ending error's, else 0.
    private func finish() -> Int32 {
        for task in backgroundTasks { task.cancel() }
        for source in sources { source.cancel() }
        journal?.finish()
        return endingError?.exitStatus ?? 0
    }

    /// An unhandled error reached the host: it is logged at error level, then — unless the app
    /// opted to stay up — the process ends with its status (at once after the launch; during the
    /// launch, once the launch gates have opened, without reporting the app launched).
    private func heard(_ report: UnhandledError) {
        let ends = configuration.exitsOnUnhandledError
        let consequence = ends ? "the process ends with exit status \(report.exitStatus)"
            : "the app stays up (ProcessHost.Configuration.exitsOnUnhandledError is false)"
        let advice = report.advice.isEmpty ? "" : "; \(report.advice)"
        configuration.log.log(.error, "unhandled error in \(report.subject): \(report.message)\(advice) — \(consequence)")
        guard ends else {
            toleratedErrors += 1
            return
        }
        guard endingError == nil else { return }
        endingError = report
        if launchOver { terminate(cause: "unhandled error in \(report.subject)") }
    }

    /// Waits until the host has launched the application and every launch gate has opened — the
    /// moment it reports `READY=1` to systemd. Code that drives a running app (a script, a REPL)
    /// starts here rather than guessing when ``run()`` has got that far.
    ///
    /// ```swift
    /// Task { if await host.waitUntilReady() { print("ready:", host.application.state) } }
    /// let status = await host.run()
    /// ```
    /// - Returns: `true` when the app is ready; `false` when the launch was refused.
    public func waitUntilReady() async -> Bool {
        if let readiness { return readiness }
        return await withCheckedContinuation { readinessWaiters.append($0) }
    }

    private func settleReadiness(_ ready: Bool) {
        readiness = ready
        for waiter in readinessWaiters { waiter.resume(returning: ready) }
        readinessWaiters.removeAll()
    }

    // MARK: Signals

    /// Installs a dispatch source per mapped signal and returns once all are registered.
    ///
    /// Dispatch registers a source asynchronously, after `resume()`; until then the signal is
    /// ignored (`SIG_IGN`, so that it cannot kill the process) and one sent meanwhile is lost. The
    /// host therefore launches only when every source is registered: a signal sent after the
    /// first callback is always delivered.
    private func installSignalHandlers() async {
        let queue = DispatchQueue(label: "appkernel.signals")
        let reference = HostReference(self)
        let registered = DispatchGroup()
        for (number, action) in configuration.signalActions.sorted(by: { $0.key < $1.key }) {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: Self.signalHandler(number, action: action, state: state, host: reference))
            registered.enter()
            source.setRegistrationHandler(handler: Self.leaving(registered))
            source.resume()
            sources.append(source)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            registered.notify(queue: queue, execute: Self.resuming(continuation))
        }
    }

    /// Dispatch calls these on its own queue: they are made outside the main actor, so they
    /// carry no main-actor isolation to check there.
    nonisolated private static func leaving(_ group: DispatchGroup) -> @Sendable () -> Void {
        { group.leave() }
    }

    nonisolated private static func resuming(_ continuation: CheckedContinuation<Void, Never>) -> @Sendable () -> Void {
        { continuation.resume() }
    }

    /// The handler of one signal, made outside the main actor: it runs on the signal queue (a
    /// second SIGINT must work even when the main actor hangs) and hops to the main actor for the
    /// rest.
    nonisolated private static func signalHandler(_ number: Int32, action: SignalAction, state: SharedBox,
                                                  host: HostReference) -> @Sendable () -> Void {
        {
            if action == .terminate && number == SIGINT {
                let (count, terminating) = state.withLock { shared -> (Int, Bool) in
                    shared.sigintCount += 1
                    return (shared.sigintCount, shared.terminating)
                }
                if count > 1 && terminating { forceExit(state: state, reason: "a second SIGINT") }
            }
            Task { @MainActor in host.host?.perform(action, signal: number) }
        }
    }

    /// A weak reference to the host for the signal handlers.
    /// `@unchecked Sendable`: `host` is set once at creation and only read on the main actor.
    final class HostReference: @unchecked Sendable {
        weak var host: ProcessHost?
        init(_ host: ProcessHost) { self.host = host }
    }

    private func perform(_ action: SignalAction, signal number: Int32) {
        let name = Self.signalName(number)
        switch action {
        case .terminate: terminate(cause: name)
        case .backgroundAndStop:
            _ = try? journaled("background", comment: name) { try application.handle(.enterBackground(scene: nil)) }
            configuration.log.log(.info, "stopped (SIGTSTP)")
            kill(getpid(), SIGSTOP)
        case .foreground:
            if application.state == .background || application.state == .suspended {
                _ = try? journaled("foreground", comment: name) { try application.handle(.enterForeground(scene: nil)) }
            }
        case .reloadConfiguration:
            Task { await reloadConfiguration(signal: name) }
        case .memoryWarning:
            _ = try? journaled("memoryWarning", comment: name) { try application.handle(.memoryWarning) }
        }
    }

    /// Terminates gracefully, with the deadline enforced off the main actor.
    public func terminate() { terminate(cause: "ProcessHost.terminate()") }

    /// Terminates gracefully; `cause` (a signal, an unhandled error) is the journal's comment.
    func terminate(cause: String) {
        let alreadyTerminating = state.withLock { shared in
            defer { shared.terminating = true }
            return shared.terminating
        }
        guard !alreadyTerminating else { return }
        systemd?.notify("STOPPING=1")
        let deadline = configuration.terminationDeadline
        let components = deadline.components
        let nanoseconds = Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [state] in
            Self.forceExit(state: state, reason: "the termination deadline of \(deadline)")
        }
        _ = try? journaled("terminate", comment: cause) { try application.handle(.terminate) }
        state.withLock { $0.currentStep = "terminated" }
        terminated?.resume()
        terminated = nil
    }

    /// Exits at once with status 1, saying what was still running — unless termination finished.
    nonisolated static func forceExit(state: SharedBox, reason: String) {
        let step = state.withLock { $0.currentStep }
        guard step != "terminated" else { return }
        FileHandle.standardError.write(Data("appkernel: ERROR forced exit after \(reason); still running: \(step)\n".utf8))
        _exit(1)
    }

    private func reloadConfiguration(signal: String) async {
        systemd?.notify("RELOADING=1")
        configuration.log.log(.info, "reloading configuration (SIGHUP)")
        let known = application.diagnostics.count
        _ = try? journaled("reload", comment: signal) { try application.handle(.reloadConfiguration) }
        for diagnostic in application.diagnostics.dropFirst(known) where diagnostic.kind == .reloadFailed {
            configuration.log.log(.error, diagnostic.message)
        }
        await onConfigurationChange?()
        systemd?.notify("READY=1")
    }
}
