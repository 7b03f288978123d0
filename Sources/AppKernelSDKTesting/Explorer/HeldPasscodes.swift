public import AppKernelSDK

/// A passcode provider whose prompts wait until someone answers them — a person looking at the
/// passcode screen: the lifecycle explorer's `passcode(…)` steps answer, in any order with the
/// other steps.
///
/// ```swift
/// let passcodes = HeldPasscodes()
/// manager.passcodeProvider = passcodes
/// // … a prompt opened during the launch:
/// #expect(passcodes.isWaiting)
/// passcodes.answer("1111")
/// ```
@MainActor
public final class HeldPasscodes: PasscodeProvider {
    /// The prompt waiting for an answer, if any.
    private var waiting: CheckedContinuation<String?, Never>?
    /// Every prompt, oldest first: its attempt number and the wrong answers left (a request for
    /// a new passcode is attempt 0).
    public private(set) var prompts: [(attempt: Int, remaining: Int)] = []

    /// Creates a provider with no prompt open.
    public init() {}

    /// Whether a prompt waits for an answer.
    public var isWaiting: Bool { waiting != nil }
    /// Whether the screen is closed: every prompt, the waiting one and later ones, is answered
    /// `nil` (the user gave up) — the end of a world, so no prompt waits for ever.
    public private(set) var isClosed = false

    /// Answers the waiting prompt `nil` and every later one at once.
    public func close() {
        isClosed = true
        answer(nil)
    }

    /// Answers the waiting prompt: the passcode typed, or `nil` (the user gave up).
    /// - Returns: Whether a prompt was waiting.
    @discardableResult
    public func answer(_ passcode: String?) -> Bool {
        guard let waiting else { return false }
        self.waiting = nil
        waiting.resume(returning: passcode)
        return true
    }

    /// Opens a prompt and waits for its answer.
    public func passcode(attempt: Int, remaining: Int) async -> String? {
        prompts.append((attempt, remaining))
        if isClosed { return nil }
        return await withCheckedContinuation { continuation in
            answer(nil)
            waiting = continuation
        }
    }

    /// Opens a prompt for a new passcode and waits for its answer.
    public func newPasscode(minimumLength: Int) async -> String? {
        await passcode(attempt: 0, remaining: 0)
    }
}
