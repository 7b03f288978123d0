/// Something the application tolerated but a developer should know about: a completion handler
/// (or a restoration handler) called twice, a background task that expired without being ended, an unknown task ended, a
/// hook that failed or ran slowly.
/// Read them from ``Application/diagnostics``; none of them is a crash.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A completion handler was called again; the later call was ignored.
        case completionCalledTwice
        /// A completion handler was not called in time; the system answered with the default.
        case completionDeadlineExceeded
        /// A continued user activity's restoration handler was called again; the later call was
        /// ignored (``UserActivityRestoration``).
        case restorationHandlerCalledTwice
        /// A background task expired and its expiration handler did not end it; the system ended it.
        case backgroundTaskExpired
        /// `endBackgroundTask` named a task that is unknown or already ended; nothing happened.
        case unknownBackgroundTaskEnded
        /// `beginBackgroundTask` was refused (suspended or terminated, or no background time left).
        case backgroundTaskRefused
        /// A system event requested while another was being delivered was refused when its turn came.
        case queuedEventRejected
        /// A hook or a BootLoader phase failed (see ``Application/hookErrors``).
        case hookFailed
        /// A synchronous hook or BootLoader phase ran longer than its budget.
        case slowHook
        /// A module refused a request: a duplicate micro-app or service name, a micro-app start
        /// or exit its rules or delegate refused (AppKernelModules' `Context`).
        case moduleRefused
        /// A part of the app could not reload its configuration after a reload request (a
        /// process host's SIGHUP); it kept the previous one.
        case reloadFailed
        /// Something that observes the application from outside was attached too late to hear
        /// an event it acts on (an SDK manager attached after `didFinishLaunching`: its launch
        /// does not start by itself).
        case attachedLate
        /// A setting or file the app provides has no effect, so what it asks for silently does
        /// not happen (an SDK app's `userstore.json` without a data directory: no SmartStore).
        case settingIgnored
        /// A configuration file lacks a value, or has one, that the SDK it ports accepts with a
        /// default (a sync without `options` runs in overwrite mode): the default applies, and
        /// this says where (AppKernelCore's `ConfigWarning`).
        case configDefaulted
        /// A failure nothing in the app handled was reported to the host
        /// (``Application/reportUnhandledError(_:subject:message:advice:exitStatus:)``).
        case unhandledError
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// The event, task or handler concerned.
    public var subject: String
    /// A sentence saying what happened and what to do about it.
    public var message: String
    /// When it happened, on the application's clock (time since the application was created).
    public var time: Duration

    /// Creates a diagnostic.
    public init(kind: Kind, subject: String, message: String, time: Duration) {
        self.kind = kind
        self.subject = subject
        self.message = message
        self.time = time
    }

    /// "[kind] subject: message".
    public var description: String { "[\(kind.rawValue)] \(subject): \(message)" }
}
