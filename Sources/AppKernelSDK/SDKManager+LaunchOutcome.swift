import AppKernel
import AppKernelCore
import Foundation

extension SDKManager {
    // MARK: Awaiting the launch

    /// Waits for the manager's launch to end — the automatic one (started when its application
    /// finished launching) or one ``launch()`` is running — and answers with its result; at once
    /// when it has already ended. What a test awaits after `host.launch(delegate:)`.
    ///
    /// ```swift
    /// try host.launch(delegate: AppDelegate())          // initializeSDK() in the delegate's init
    /// let result = try await SDKManager.shared.launchFinished()
    /// ```
    /// - Returns: The last launch's result.
    /// - Throws: The last launch's ``LaunchError`` when it failed (the same one its handler or the
    ///   application's unhandled errors got: awaiting it reports nothing more);
    ///   ``LaunchError/Cause/notStarted`` when no launch has started.
    @discardableResult
    public func launchFinished() async throws(LaunchError) -> LaunchResult {
        await automaticLaunch?.value
        while launchState.isRunning {
            await withCheckedContinuation { launchWaiters.append($0) }
        }
        switch lastOutcome {
        case .success(let result): return result
        case .failure(let error): throw error
        case nil: throw LaunchError(phase: nil, cause: .notStarted)
        }
    }

    /// The last launch's failure — from the moment its engine failed, before ``launch()``
    /// resumes to record it (a main-actor turn later: a user change arriving in between must
    /// not build a root after a failed launch); `nil` when it did not fail.
    var failedLaunch: LaunchError? {
        if case .failure(let error) = lastOutcome { return error }
        if launchAwaitingOutcome, !launchState.isRunning, let failure = launchEngine.lastFailure { return LaunchError(failure) }
        return nil
    }

    // MARK: Settings without effect

    /// Reports, as the application's ``Diagnostic/Kind/settingIgnored`` diagnostics, config files
    /// the launch will not act on: a `userstore.json` (or `usersyncs.json`) while ``dataDirectory``
    /// is `nil` — its soups and syncs stay specs in ``stores``, no SmartStore holds them.
    func warnAboutIgnoredSettings() {
        guard dataDirectory == nil, let configDirectory, let application else { return }
        let ignored = [StoreConfig.soupsFileName, SyncConfig.syncsFileName].filter {
            FileManager.default.fileExists(atPath: configDirectory.appendingPathComponent($0).path)
        }
        guard !ignored.isEmpty else { return }
        application.reportDiagnostic(
            .settingIgnored, subject: "sdk.dataDirectory",
            message: "\(ignored.joined(separator: " and ")) in \(configDirectory.path) will not reach a SmartStore: SDKManager.dataDirectory is nil, so its soups and syncs are kept as specs only. "
                + "Set dataDirectory (and keyRing) before the launch, e.g. to try DataHome.forApp(\"MyApp\").url")
    }
}
