import AppKernel
public import AppKernelAuth

/// A change of the current user, as user-change observers see it.
public struct UserChange: Sendable, Hashable {
    /// What changed.
    public enum Kind: String, Sendable, Hashable {
        /// Another user became current.
        case switched
        /// The current user logged out (`to` is who became current instead, if anyone).
        case loggedOut
    }

    /// What changed.
    public var kind: Kind
    /// The user before.
    public var from: UserAccountIdentity?
    /// The user after.
    public var to: UserAccountIdentity?
    /// Why the user logged out (`nil` for a switch): `LogoutReason.passcodeFailures` when too
    /// many wrong passcodes logged every user out, `LogoutReason.passcodeTampered` when the
    /// stored passcode could not be trusted (``PasscodeDamage``) and every user was logged out,
    /// `LogoutReason.loggedOutElsewhere` when another instance of the app on the same data home
    /// logged the user out (``SDKManager/reloadUsersChangedElsewhere()``).
    public var reason: LogoutReason?

    /// Creates a change.
    public init(kind: Kind, from: UserAccountIdentity?, to: UserAccountIdentity?, reason: LogoutReason? = nil) {
        self.kind = kind
        self.from = from
        self.to = to
        self.reason = reason
    }
}

extension SDKManager {
    // MARK: Deferred login

    /// Logs in if nobody is logged in (deferred login: `shouldAuthenticate = false`), then sets
    /// up the user's stores and root controller again. With a current user, answers with them;
    /// while the launch runs, waits for it first (its auth phase may log in). Calls `completion`
    /// exactly once per call, on success and on failure (the Mobile SDK never called it on
    /// failure), on the main actor. Concurrent calls share one login.
    ///
    /// The template calls `setupRootViewController()` in this completion: when the call waited
    /// for the launch or logged in, the root was just built for this user, and a
    /// ``setupRootController()`` made by the completion does nothing — the root is built once.
    /// After a failed launch (the one it waited for, or the last one) it logs nobody in, builds
    /// nothing and answers with that launch's ``LaunchError``, until a launch succeeds.
    public func loginIfRequired(completion: @escaping @MainActor (Result<UserAccount, any Error>) -> Void) {
        Task { @MainActor in
            do {
                let (account, rootBuilt) = try await self.loginIfRequiredReportingRoot()
                rootRebuildPending = rootBuilt ? false : nil
                defer { rootRebuildPending = nil }
                completion(.success(account))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Logs in if nobody is logged in, then rebuilds the stores and root controller; returns
    /// the current user. While the launch runs, waits for it first.
    @discardableResult
    public func loginIfRequired() async throws -> UserAccount {
        try await loginIfRequiredReportingRoot().account
    }

    /// ``loginIfRequired()``, saying whether the root was built for the user on the way (by the
    /// launch it waited for, or after logging in).
    private func loginIfRequiredReportingRoot() async throws -> (account: UserAccount, rootBuilt: Bool) {
        var rootBuilt = false
        if launchState.isRunning {
            await withCheckedContinuation { launchWaiters.append($0) }
            rootBuilt = launchState == .finished
        }
        // A failed launch is the answer: no login, no root, until a launch succeeds.
        if let error = failedLaunch { throw error }
        if let current = accountManager?.currentAccount { return (current, rootBuilt) }
        if let inFlight = loginTask { return (try await inFlight.value, true) }
        let task = Task { @MainActor () throws -> UserAccount in
            defer { self.loginTask = nil }
            guard let bootConfig = self.bootConfig else {
                throw ConfigError(code: .unreadableFile, file: BootConfig.fileNames[0], keyPath: "", reason: "launch first: there is no boot config to log in with")
            }
            let account = try await self.logIn(with: bootConfig)
            try self.setupRootController()
            return account
        }
        loginTask = task
        return (try await task.value, true)
    }

    /// Logs in through the account manager with the boot config's OAuth settings.
    func logIn(with bootConfig: BootConfig) async throws -> UserAccount {
        guard let accountManager else {
            throw ConfigError(code: .invalidValue, file: BootConfig.fileNames[0], keyPath: "shouldAuthenticate",
                              reason: "login is required but the SDK manager has no account manager")
        }
        (accountManager as? UserAccountManager)?.userAgent = userAgent
        return try await accountManager.logIn(config: bootConfig.oauthConfig, using: loginMethod, loginHint: nil, makeCurrent: true)
    }

    // MARK: User-change observers

    /// Calls `block` whenever the current user changes (logout, switch) — the template's
    /// `AuthHelper.registerBlock(forCurrentUserChangeNotifications:)`. The block stays for the
    /// manager's lifetime; use ``addCurrentUserChangeObserver(_:)`` for one you can remove.
    public func registerBlock(forCurrentUserChangeNotifications block: @escaping @MainActor () -> Void) {
        permanentObservations.append(userChangeObservers.add { _ in block() })
    }

    /// Calls `handler` once per change of the current user, on the main actor. Keep the token:
    /// cancelling or dropping it stops delivery.
    public func addCurrentUserChangeObserver(_ handler: @escaping @MainActor (UserChange) -> Void) -> ListenerToken {
        userChangeObservers.add(handler)
    }

    /// Tells the user-change observers, then rebuilds the root for the new user unless one of
    /// them did (see ``setupRootController()``): exactly one rebuild per change.
    func deliverUserChange(_ change: UserChange, rebuildingRoot: Bool) {
        rootRebuildPending = rebuildingRoot
        defer { rootRebuildPending = nil }
        userChangeObservers.notify(change)
        if rootRebuildPending == true { try? setupRootController() }
    }

    // MARK: Account events

    func observeAccounts() {
        accountObservation = accountManager?.observe { [weak self] event in self?.handle(event) }
        (accountManager as? UserAccountManager)?.userAgent = userAgent
        reevaluateMobilePolicy(keepingStored: true)
    }

    private func handle(_ event: AccountEvent) {
        switch event {
        case .didLogin:
            reevaluateMobilePolicy(keepingStored: false)
            askForPasscodeRequiredByPolicy()
        case .didLogout: reevaluateMobilePolicy(keepingStored: false)
        default: break
        }
        switch event {
        case .willLogout(let identity, _):
            stores.wipe(.user(identity))
            if ownedSyncManager?.owner == .user(identity) { ownedSyncManager = nil }
            shred(identity)
            if accountManager?.currentAccount?.identity == identity { loggingOutCurrentUser = identity }
        case .didLogout(let identity, let reason):
            guard loggingOutCurrentUser == identity else { return }
            loggingOutCurrentUser = nil
            currentUserLoggedOut(identity, reason: reason)
        case .didSwitch(let from?, let to?):
            deliverUserChange(UserChange(kind: .switched, from: from, to: to), rebuildingRoot: true)
        default:
            break
        }
    }

    /// The rule after the current user logs out: with other users left, the first of them (in
    /// the account manager's order: org id, then user id) becomes current; with none, the app
    /// returns to login — the auth and root-controller phases run again (or, during a launch,
    /// the launch's own auth phase logs in).
    private func currentUserLoggedOut(_ identity: UserAccountIdentity, reason: LogoutReason) {
        if let next = accountManager?.allAccounts.first {
            try? accountManager?.switchTo(next.identity)
            deliverUserChange(UserChange(kind: .loggedOut, from: identity, to: next.identity, reason: reason), rebuildingRoot: true)
            return
        }
        deliverUserChange(UserChange(kind: .loggedOut, from: identity, to: nil, reason: reason), rebuildingRoot: false)
        rootController = nil
        if let window { window.rootController = PlaceholderController(message: "Logging in…") }
        // During a launch (too many wrong passcodes), the launch's own auth phase comes next.
        guard !launchState.isRunning else { return }
        reauthentication = Task { [weak self] in
            guard let self else { return }
            do throws(LaunchError) {
                try await self.runPhases(only: [.auth, .rootController])
            } catch {
                self.reportLaunchError(error)
            }
        }
    }

    // MARK: The passcode lock

    /// Asks for the passcode until it is right (`true`) or the attempts run out (`false`: every
    /// user was logged out and their data wiped). A stored record that cannot be trusted, or
    /// attempts already used up by earlier launches, wipe at once, without asking. With no
    /// passcode set while the mobile policy requires one, asks for a new one.
    /// - Throws: ``PasscodeUnavailable`` when there is no provider, or the user gave up.
    func askForPasscode() async throws -> Bool {
        while true {
            let stored: PasscodeRecord?
            do { stored = try passcode.record() } catch {
                await passcodeTampered(error)
                return false
            }
            guard stored != nil else { return try await passcodeSetIfRequired() }
            if passcode.hasExhaustedAttempts {
                await passcodeAttemptsExhausted()
                return false
            }
            guard let provider = passcodeProvider else {
                throw PasscodeUnavailable(reason: "a passcode is set but SDKManager.passcodeProvider is nil")
            }
            guard let entered = await provider.passcode(attempt: passcode.failedAttempts + 1, remaining: passcode.remainingAttempts) else {
                throw PasscodeUnavailable(reason: "the user did not enter the passcode")
            }
            if try await passcodeUnlocks(with: entered, by: provider) { return true }
        }
    }

    /// Too many wrong passcodes: the passcode protects the app, not one user — it is forgotten
    /// and every user is logged out (their stores and credentials wiped on the way). Observers
    /// hear one ``UserChange`` with reason `LogoutReason.passcodeFailures`, and the app returns to
    /// login.
    func passcodeAttemptsExhausted() async {
        await logEveryoneOut(reason: .passcodeFailures)
    }

    /// The stored passcode cannot be trusted: it is not "no passcode" — fail closed. The record is
    /// removed and every user logged out and wiped; observers hear one ``UserChange`` with reason
    /// `LogoutReason.passcodeTampered`, and the app returns to login. A record missing while no
    /// user is left protects nothing: the stale marker is cleared and nobody is logged out.
    func passcodeTampered(_ damage: PasscodeDamage) async {
        if damage.kind == .missing, accountManager?.allAccounts.isEmpty ?? true {
            passcode.reset()
            return
        }
        await logEveryoneOut(reason: .passcodeTampered)
    }

    /// Forgets the passcode and logs every user out, the others first and the current one last,
    /// so no other user ever becomes current on the way.
    private func logEveryoneOut(reason: LogoutReason) async {
        passcode.reset()
        guard let accountManager else { return }
        let current = accountManager.currentAccount?.identity
        for account in accountManager.allAccounts where account.identity != current {
            await accountManager.logout(account.identity, reason: reason)
        }
        if let current { await accountManager.logout(current, reason: reason) }
    }

    /// Locks the app when it returns after more than ``PasscodeManager/enforcedLockTimeout`` in
    /// the background (the app's own timeout, or the mobile policy's when shorter), and asks for
    /// the passcode.
    func returnedToForeground(at time: Duration) {
        defer { backgroundedAt = nil }
        guard passcode.isSet || passcode.isRequiredByPolicy, let since = backgroundedAt, time - since > passcode.enforcedLockTimeout else { return }
        passcode.lock()
        unlock = Task { [weak self] in
            guard let self else { return }
            do { _ = try await self.askForPasscode() } catch {
                self.reportLaunchError(LaunchError(phase: .passcode, cause: .threw(error)))
            }
        }
    }
}

/// The passcode could not be asked for.
public struct PasscodeUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why.
    public var reason: String
    /// Why.
    public var description: String { reason }
}
