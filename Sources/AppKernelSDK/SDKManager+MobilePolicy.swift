import AppKernelAuth

extension SDKManager {
    // MARK: The org's mobile policy

    /// The strictest mobile policy over the logged-in users, as their identities say
    /// (`UserAccount.userIdentity?.mobilePolicy`, kept with each account); `nil` when no user has
    /// one. ``PasscodeManager/mobilePolicy`` is what is in force.
    public var usersMobilePolicy: PasscodePolicy? {
        let policies = accountManager?.allAccounts.compactMap { $0.userIdentity?.mobilePolicy.flatMap(PasscodePolicy.init) } ?? []
        return PasscodePolicy.strictest(policies)
    }

    /// Puts the users' strictest mobile policy in force on the passcode — the Mobile SDK's
    /// screen-lock manager re-evaluating its global policy. After a login or a logout the users'
    /// policies alone decide (the last user with a policy gone: the app's own settings hold
    /// again). When the accounts are (re)loaded — a launch — the policy the passcode's record
    /// kept stays in force beside them, so a relaunch never enforces less than the last run did
    /// (an account file that lost its identity does not loosen the lock).
    func reevaluateMobilePolicy(keepingStored: Bool) {
        var policies = usersMobilePolicy.map { [$0] } ?? []
        if keepingStored, let stored = passcode.mobilePolicy { policies.append(stored) }
        passcode.enforce(PasscodePolicy.strictest(policies))
    }

    /// Judges an answer to the passcode prompt: `true` when it unlocked the app. A right passcode
    /// shorter than the mobile policy's minimum must be changed first (the old Mobile SDK's
    /// change-passcode screen, shown when a stricter `pin_length` arrived): the provider is asked
    /// for a new one until it gives one long enough.
    /// - Throws: ``PasscodeUnavailable`` when the user gives up the change, or gives
    ///   ``PasscodeManager/maximumAttempts`` passcodes in a row that are too short, or the new one
    ///   cannot be stored: the app stays locked, and the next unlock asks again.
    func passcodeUnlocks(with entered: String, by provider: any PasscodeProvider) async throws -> Bool {
        switch passcode.unlock(with: entered) {
        case .unlocked: return true
        case .wrong: return false
        case .changeRequired(let minimum):
            var refused = 0
            while refused < passcode.maximumAttempts {
                guard let new = await provider.newPasscode(minimumLength: minimum) else {
                    throw PasscodeUnavailable(reason: "the passcode must be changed (the org's mobile policy requires at least \(minimum) characters) and the user did not enter a new one; the app stays locked")
                }
                do {
                    try passcode.setPasscode(new)
                    return true
                } catch .tooShort {
                    refused += 1
                } catch {
                    throw PasscodeUnavailable(reason: "the new passcode could not be set: \(error); the app stays locked")
                }
            }
            throw PasscodeUnavailable(reason: "the passcode must be changed, but \(refused) new passcodes in a row were shorter than the \(minimum) characters the org's mobile policy requires; the app stays locked")
        }
    }
}
