public import AppKernelSDK

/// A passcode provider answering from a script: each prompt takes the next answer, and a `nil`
/// answer — or an empty script — is the user giving up.
///
/// ```swift
/// let passcodes = ScriptedPasscodes(["wrong", "1234"])
/// // … after the launch:
/// #expect(passcodes.prompts.map(\.attempt) == [1, 2])
/// ```
@MainActor
public final class ScriptedPasscodes: PasscodeProvider {
    /// The answers still to give, first first.
    public var answers: [String?]
    /// Every prompt, oldest first: its attempt number and the wrong answers left.
    public var prompts: [(attempt: Int, remaining: Int)] = []

    /// Creates a provider giving `answers` in order.
    public init(_ answers: [String?]) { self.answers = answers }

    /// Records the prompt and gives the next answer (`nil` when the script is used up).
    public func passcode(attempt: Int, remaining: Int) async -> String? {
        prompts.append((attempt, remaining))
        return answers.isEmpty ? nil : answers.removeFirst()
    }
}
