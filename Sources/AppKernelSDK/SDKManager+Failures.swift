import AppKernel
import AppKernelCore
public import AppKernelStore
import Foundation

extension SDKManager {
    // MARK: Failures nobody awaited

    /// Starts the launch when the application finishes launching (nobody awaits it).
    func startAutomaticLaunch() {
        guard !launchState.isRunning else { return }
        automaticLaunch = Task { [weak self] in
            do throws(LaunchError) { _ = try await self?.launch() } catch {
                // `launch()` handed it to the handler, if one is set.
                guard let self else { return }
                self.launchFailedUnawaited(error, handlerHeardIt: self.launchErrorHandler != nil)
            }
        }
    }

    /// Hands a failure nobody awaits (a re-authentication's, an unlock's) to
    /// ``launchErrorHandler``, or — with none set — keeps it for the first handler set and reports
    /// it to the application as unhandled.
    func reportLaunchError(_ error: LaunchError) {
        launchErrorHandler?(error)
        launchFailedUnawaited(error, handlerHeardIt: launchErrorHandler != nil)
    }

    /// A failure nobody awaits: without a handler it is kept for the first one set and reported
    /// to the application as unhandled, so that its host hears it; a single-instance refusal is
    /// reported even with a handler (no launch of this process can succeed while the other runs).
    private func launchFailedUnawaited(_ error: LaunchError, handlerHeardIt: Bool) {
        if !handlerHeardIt { unheardLaunchErrors.append(error) }
        let refused = error.underlyingError is SingleInstanceError
        guard !handlerHeardIt || refused, let application else { return }
        let advice = refused ? "quit the other instance first, or run this one with another data home"
            : "fix the cause and start the app again; an app that handles launch failures itself sets SDKManager.launchErrorHandler"
        application.reportUnhandledError(error, subject: "sdk.launch", message: error.summary, advice: advice,
                                         exitStatus: refused ? SingleInstanceError.exitStatus : UnhandledError.defaultExitStatus)
    }

    // MARK: Single-instance mode

    /// Takes the single-instance lock in ``dataDirectory`` when ``requiresSingleInstance`` is on
    /// and it is not held yet.
    /// - Throws: ``LaunchError`` for the ``LaunchPhase/config`` phase with a ``SingleInstanceError``.
    func takeInstanceLockIfRequired() throws(LaunchError) {
        guard requiresSingleInstance, instanceLock?.isHeld != true else { return }
        guard let dataDirectory else {
            throw LaunchError(phase: .config, cause: .threw(SingleInstanceError(dataDirectory: nil, lockError: nil)))
        }
        do {
            instanceLock = try FileLock.acquire(at: dataDirectory.appendingPathComponent(Self.instanceLockFileName))
        } catch {
            throw LaunchError(phase: .config, cause: .threw(SingleInstanceError(dataDirectory: dataDirectory, lockError: error)))
        }
    }

    /// Whether this manager holds the single-instance lock of its ``dataDirectory`` (see
    /// ``requiresSingleInstance``): an app that shares nothing until it does — a refused second
    /// instance — writes nothing on its way out either.
    public var holdsInstanceLock: Bool { instanceLock?.isHeld == true }

    /// The single-instance lock's file name in the data home.
    public static let instanceLockFileName = "instance.lock"

    /// The stores under ``dataDirectory``, sealed with ``keyRing``'s keys: the process's
    /// `StoreManager.shared(root:keyRing:)` unless set.
    /// A test that plays two instances of the app on one data home gives each manager its own
    /// `StoreManager(root:)`, as two processes have; `nil` without a data directory.
    public var storeManager: StoreManager? {
        get { ownStoreManager ?? dataDirectory.map { StoreManager.shared(root: $0, keyRing: keyRing) } }
        set { ownStoreManager = newValue }
    }
}
