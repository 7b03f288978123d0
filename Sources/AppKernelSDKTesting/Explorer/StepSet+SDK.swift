public import AppKernelTesting
import AppKernelAuth
import AppKernel
import AppKernelSDK

extension StepSet {
    /// The SDK's steps, for an ``SDKWorld``: a waiting login answered (`login(<user>)`, users
    /// `005A` and `005B` unless given) or denied (`login(denied)`); the open passcode prompt answered with
    /// each of `passcodeAnswers` or abandoned (`passcode(abandon)`); another user made current
    /// (`switchUser(<user>)`) and the current user logging out (`logout`) once no launch runs.
    /// Each is enabled only when it can happen: a login or a prompt waits, a user is current.
    /// - Parameters:
    ///   - passcodeAnswers: The passcodes to try at a prompt (right and wrong ones).
    ///   - users: The users to log in as and switch to; `005A` and `005B` when `nil`.
    public static func sdk(passcodeAnswers: [String] = [], users: [String]? = nil) -> StepSet {
        func sdkWorld(_ world: ExplorerWorld) -> SDKWorld? { world as? SDKWorld }
        let userChoices: [String?] = users ?? ["005A", "005B"]
        return StepSet([
            StepDefinition("login", arguments: userChoices + ["denied"], isEnabled: { world, _ in
                (sdkWorld(world)?.accounts.waitingLogins ?? 0) > 0
            }, code: { $0 == "denied" ? "world.denyLogin()" : "world.answerLogin(\(literal($0)))" }) { world, argument in
                guard let world = sdkWorld(world) else { throw StepArgumentError(step: "login", argument: argument ?? "", expected: "an SDKWorld") }
                if argument == "denied" { world.denyLogin() } else { world.answerLogin(argument ?? "") }
            },
            StepDefinition("passcode", arguments: passcodeAnswers.map { Optional($0) } + ["abandon"], isEnabled: { world, _ in
                sdkWorld(world)?.passcodes.isWaiting ?? false
            }, code: { $0 == "abandon" ? "world.answerPasscode(nil)" : "world.answerPasscode(\(literal($0)))" }) { world, argument in
                guard let world = sdkWorld(world) else { throw StepArgumentError(step: "passcode", argument: argument ?? "", expected: "an SDKWorld") }
                world.answerPasscode(argument == "abandon" ? nil : argument)
            },
            StepDefinition("switchUser", arguments: userChoices, isEnabled: { world, argument in
                guard let world = sdkWorld(world), world.isSettledApp, let current = world.accounts.currentIdentity else { return false }
                return current.userID != argument && world.accounts.allAccounts.contains { $0.identity.userID == argument }
            }, code: { "try world.switchUser(\(literal($0)))" }) { world, argument in
                guard let world = sdkWorld(world) else { throw StepArgumentError(step: "switchUser", argument: argument ?? "", expected: "an SDKWorld") }
                try world.switchUser(argument ?? "")
            },
            StepDefinition("logout", isEnabled: { world, _ in
                guard let world = sdkWorld(world) else { return false }
                return world.isSettledApp && world.accounts.currentIdentity != nil
            }, code: { _ in "await world.logoutCurrentUser()" }) { world, _ in
                await sdkWorld(world)?.logoutCurrentUser()
            },
        ])
    }
}

extension SDKWorld {
    /// Whether the app runs and no launch phase runs: where a person can switch users or log out.
    var isSettledApp: Bool {
        guard let application, application.state.isRunning, application.state != .suspended else { return false }
        return !manager.launchState.isRunning
    }
}
