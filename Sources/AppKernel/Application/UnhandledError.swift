/// A failure that nothing in the app handled — a launch that failed with no launch-error handler
/// set, say — reported to the application with ``Application/reportUnhandledError(_:subject:message:advice:exitStatus:)``
/// so that the host hears it instead of the app sitting there as if all were well.
///
/// A host decides what it means: `ProcessHost` logs it at error level and ends the process with
/// ``exitStatus`` (unless configured to stay up); `SimulatedHost` records it for the test to see.
/// The application keeps every one in ``Application/unhandledErrors`` and reports each as a
/// ``Diagnostic`` of kind ``Diagnostic/Kind/unhandledError``.
public struct UnhandledError: Sendable, CustomStringConvertible {
    /// The exit status a process host ends with for an unhandled error unless the reporter asks
    /// for another: 70, `EX_SOFTWARE` in sysexits(3).
    public static let defaultExitStatus: Int32 = 70

    /// Where it happened: the part of the app that reported it (`"sdk.launch"`).
    public var subject: String
    /// What failed.
    public var error: any Error
    /// What failed, in words for the person who reads the log (the error's description unless
    /// the reporter gave a better one).
    public var message: String
    /// What to do about it, for the person who reads the log.
    public var advice: String
    /// The exit status the reporter asks a process host to end with (sysexits(3)):
    /// ``defaultExitStatus`` unless it says otherwise (the SDK's single-instance refusal asks for
    /// 75, `EX_TEMPFAIL`: try again once the other instance has quit). Hosts that are not
    /// processes ignore it.
    public var exitStatus: Int32
    /// When it was reported, on the application's clock.
    public var time: Duration

    /// Creates a report.
    public init(subject: String, error: any Error, message: String? = nil, advice: String,
                exitStatus: Int32 = UnhandledError.defaultExitStatus, time: Duration) {
        self.subject = subject
        self.error = error
        self.message = message ?? "\(error)"
        self.advice = advice
        self.exitStatus = exitStatus
        self.time = time
    }

    /// `subject: message — advice`: what failed, where, and what to do.
    public var description: String { "\(subject): \(message)\(advice.isEmpty ? "" : " — \(advice)")" }
}
