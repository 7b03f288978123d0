/// A hook or a BootLoader phase failed. Names the hook point, the kind of hook, the hook itself
/// (its label, or the file and line that registered it) and the cause.
///
/// ```
/// the 'before' hook 'loadFlags' (AppDelegate.swift:42) at hook point 'didFinishLaunching' threw:
/// Boom(). The event went on without it; fix the hook or cancel its token.
/// ```
public struct HookError: Error, CustomStringConvertible {
    /// What kind of hook failed.
    public enum Stage: String, Sendable, Hashable, CaseIterable {
        /// An observer that runs before the handlers.
        case before
        /// A handler.
        case handle
        /// An observer that runs after the delegate.
        case after
        /// A phase of a phase engine (the BootLoader's); ``HookError/point`` names the engine.
        case phase
    }

    /// How it failed.
    public enum Failure: Sendable {
        /// It threw this error.
        case threw(any Error)
        /// It did not finish within its deadline (async BootLoader phases).
        case timedOut(deadline: Duration)
    }

    /// The hook point (`"didFinishLaunching"`, `"openURL"`, `"passcode"`, `"bootLoader"`).
    public var point: String
    /// What kind of hook failed.
    public var stage: Stage
    /// The hook's label, or `File.swift:line` where it was registered; the phase's name for
    /// BootLoader phases.
    public var hook: String
    /// How it failed.
    public var failure: Failure

    /// Creates an error.
    public init(point: String, stage: Stage, hook: String, failure: Failure) {
        self.point = point
        self.stage = stage
        self.hook = hook
        self.failure = failure
    }

    /// The underlying error, when the hook threw.
    public var underlyingError: (any Error)? {
        if case .threw(let error) = failure { return error }
        return nil
    }

    /// What failed, where, and what to do about it.
    public var description: String {
        switch (stage, failure) {
        case (.phase, .threw(let error)):
            return "\(point == "bootLoader" ? "BootLoader" : point) phase '\(hook)' threw: \(error). The phases after it did not run; fix the phase, or replace or remove it by name."
        case (.phase, .timedOut(let deadline)):
            return "\(point == "bootLoader" ? "BootLoader" : point) phase '\(hook)' did not finish within its deadline of \(deadline). The phases after it did not run; make the phase finish sooner or give it a longer deadline (addPhase(_:deadline:_:))."
        case (_, .threw(let error)):
            return "the '\(stage.rawValue)' hook '\(hook)' at hook point '\(point)' threw: \(error). Fix the hook or cancel its token."
        case (_, .timedOut(let deadline)):
            return "the '\(stage.rawValue)' hook '\(hook)' at hook point '\(point)' did not finish within \(deadline)."
        }
    }
}
