import AppKernelCore

extension Application {
    /// Reports a failure nothing in the app handled, so that the host hears it: a process host
    /// logs it at error level and ends the process with `exitStatus` (unless the app opted to
    /// stay up); a simulated host records it. It is kept in ``unhandledErrors`` and reported as a
    /// ``Diagnostic`` (``Diagnostic/Kind/unhandledError``).
    ///
    /// Report only what no handler took: an error the app shows its user or retries is handled.
    /// The SDK manager reports a failed launch here when no `launchErrorHandler` is set.
    ///
    /// ```swift
    /// do { try await connectToBroker() } catch {
    ///     application.reportUnhandledError(error, subject: "broker", advice: "check BROKER_URL")
    /// }
    /// ```
    /// - Parameters:
    ///   - error: What failed.
    ///   - subject: Where: the part of the app that failed (`"sdk.launch"`).
    ///   - message: What failed, in words for the log; the error's description when `nil`.
    ///   - advice: What to do about it.
    ///   - exitStatus: The status a process host ends with (sysexits(3)); 70, `EX_SOFTWARE`, by default.
    public func reportUnhandledError(_ error: any Error, subject: String, message: String? = nil, advice: String = "",
                                     exitStatus: Int32 = UnhandledError.defaultExitStatus) {
        let report = UnhandledError(subject: subject, error: error, message: message, advice: advice, exitStatus: exitStatus, time: uptime)
        unhandledErrors.append(report)
        self.report(.unhandledError, subject: subject, report.description)
        unhandledErrorObservers.notify(report)
    }

    /// Calls `observer` with every unhandled error reported from now on — how a host hears them.
    /// Keep the token: cancelling or dropping it stops delivery.
    public func observeUnhandledErrors(_ observer: @escaping @MainActor (UnhandledError) -> Void) -> ListenerToken {
        unhandledErrorObservers.add(observer)
    }
}
