public import AppKernelSDK

/// A passcode provider answering from a script: each prompt takes the next answer, and a `nil`
/// answer — or an empty script — is the user giving up. A request for a new passcode (the mobile
/// policy's minimum rose above the passcode's length) takes the next answer too.
///
/// ```swift
/// let passcodes = ScriptedPasscodes(["wrong", "1234"])
/// // … after the launch:
/// #expect(passcodes.prompts.map(\.attempt) == [1, 2])
///
/// let changing = ScriptedPasscodes(["1234", "123456"])   // the old one, then a new one
/// // … pin_length 6 in force, after the unlock:
/// #expect(changing.newPasscodeRequests == [6])
/// ```
@MainActor
public final class ScriptedPasscodes: PasscodeProvider {
    /// The answers still to give, first first.
    public var answers: [String?]
    /// Every prompt, oldest first: its attempt number and the wrong answers left.
    public var prompts: [(attempt: Int, remaining: Int)] = []
    /// Every request for a new passcode, oldest first: the minimum length asked for.
    public var newPasscodeRequests: [Int] = []

    /// Creates a provider giving `answers` in order.
    public init(_ answers: [String?]) { self.answers = answers }

    /// Records the prompt and gives the next answer (`nil` when the script is used up).
    public func passcode(attempt: Int, remaining: Int) async -> String? {
        prompts.append((attempt, remaining))
        return answers.isEmpty ? nil : answers.removeFirst()
    }

    /// Records the request and gives the next answer (`nil` when the script is used up).
    public func newPasscode(minimumLength: Int) async -> String? {
        newPasscodeRequests.append(minimumLength)
        return answers.isEmpty ? nil : answers.removeFirst()
    }
}
