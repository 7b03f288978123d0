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
    /// for a new one (``askForNewPasscode(minimumLength:from:because:)``).
    /// - Throws: ``PasscodeUnavailable`` when no acceptable new passcode is given: the app stays
    ///   locked, and the next unlock asks again.
    func passcodeUnlocks(with entered: String, by provider: any PasscodeProvider) async throws -> Bool {
        switch passcode.unlock(with: entered) {
        case .unlocked: return true
        case .wrong: return false
        case .changeRequired(let minimum):
            try await askForNewPasscode(minimumLength: minimum, from: provider,
                                        because: "the passcode must be changed: the org's mobile policy requires at least \(minimum) characters")
            return true
        }
    }

    /// No passcode is set: `true` at once unless the mobile policy requires one
    /// (``PasscodeManager/isRequiredByPolicy``) — then the app is locked and the provider asked
    /// for one, as the Mobile SDK shows its create-passcode screen when a policy arrives.
    /// - Throws: ``PasscodeUnavailable`` when there is no provider or no acceptable passcode is
    ///   given: the app stays locked.
    func passcodeSetIfRequired() async throws -> Bool {
        guard passcode.isRequiredByPolicy, !passcode.isSet else { return true }
        passcode.lock()
        guard let provider = passcodeProvider else {
            throw PasscodeUnavailable(reason: "the org's mobile policy requires a passcode but SDKManager.passcodeProvider is nil; the app stays locked")
        }
        let minimum = passcode.enforcedMinimumLength
        try await askForNewPasscode(minimumLength: minimum, from: provider,
                                    because: "the org's mobile policy requires a passcode of at least \(minimum) characters")
        return true
    }

    /// After a login: when the mobile policy now requires a passcode and none is set, the app
    /// locks and asks for one (``unlock`` is that task; a failure goes to ``launchErrorHandler``).
    func askForPasscodeRequiredByPolicy() {
        guard passcode.isRequiredByPolicy, !passcode.isSet else { return }
        passcode.lock()
        unlock = Task { [weak self] in
            guard let self else { return }
            do { _ = try await self.passcodeSetIfRequired() } catch {
                self.reportLaunchError(LaunchError(phase: .passcode, cause: .threw(error)))
            }
        }
    }

    /// Asks the provider for a new passcode of at least `minimumLength` characters and sets it
    /// (which unlocks). A too-short answer is asked again, up to ``PasscodeManager/maximumAttempts``
    /// in a row.
    /// - Throws: ``PasscodeUnavailable`` (saying `reason`) when the user gives up, every answer
    ///   was too short, or the passcode cannot be stored: the app stays locked.
    func askForNewPasscode(minimumLength: Int, from provider: any PasscodeProvider, because reason: String) async throws {
        var refused = 0
        while refused < passcode.maximumAttempts {
            guard let new = await provider.newPasscode(minimumLength: minimumLength) else {
                throw PasscodeUnavailable(reason: "\(reason), and the user did not enter a new one; the app stays locked")
            }
            do {
                try passcode.setPasscode(new)
                return
            } catch .tooShort {
                refused += 1
            } catch {
                throw PasscodeUnavailable(reason: "\(reason), and the new one could not be set: \(error); the app stays locked")
            }
        }
        throw PasscodeUnavailable(reason: "\(reason), but \(refused) new passcodes in a row were shorter; the app stays locked")
    }
}
