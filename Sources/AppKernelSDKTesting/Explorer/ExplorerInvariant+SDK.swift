public import AppKernelTesting
import AppKernel
import AppKernelCore
import AppKernelSDK

extension ExplorerInvariant {
    /// No other user's data shows: the root controller and the app's screens
    /// (``SDKWorld/screenShows``) show only the current user's data — and nobody's after the
    /// passcode locked everyone out, until someone logs in again (the Mobile SDK logs every user
    /// out after too many wrong passcodes, and never makes another user current on the way).
    public static let noOtherUsersData = ExplorerInvariant("noOtherUsersData") { world in
        guard let world = world as? SDKWorld, let application = world.application, application.state.isRunning else { return nil }
        let allowed = world.isLockedOut ? nil : world.accounts.currentIdentity
        guard let shown = world.shownUsers.first(where: { $0 != allowed }) else { return nil }
        if world.isLockedOut {
            return "\(shown.userID)'s data shows after the passcode locked every user out"
        }
        return "\(shown.userID)'s data shows while \(allowed?.userID ?? "nobody") is the current user"
    }

    /// Each user change (a switch, a logout with a user left) rebuilds the root exactly once
    /// (the SDK rebuilds it once, whoever asks — the template's user-change block asks too);
    /// after a failed launch, none is built until a launch succeeds.
    public static let rootRebuiltOncePerUserChange = ExplorerInvariant("rootRebuiltOncePerUserChange") { world in
        guard let world = world as? SDKWorld else { return nil }
        if let twice = world.userChanges.first(where: { $0.rootsBuilt > 1 }) {
            return "the root was built \(twice.rootsBuilt) times for one user change (\(twice.change.kind) to \(twice.change.to?.userID ?? "nobody"))"
        }
        // At the end, the last change to a user has its root — unless the app is gone, still
        // launching, or its launch failed (the SDK builds no root until a launch succeeds).
        guard world.isFinished, let last = world.userChanges.last, last.rootsBuilt == 0, let user = last.change.to,
              world.application?.state.isRunning == true, !world.manager.launchState.isRunning,
              world.manager.launchState.failedPhase == nil else { return nil }
        return "the root was never rebuilt after the user change (\(last.change.kind) to \(user.userID))"
    }

    /// No user's data shows while the launch waits at the passcode prompt: what the app shows
    /// before the passcode phase ends is the placeholder.
    public static let nothingShownBeforeUnlock = ExplorerInvariant("nothingShownBeforeUnlock") { world in
        guard let world = world as? SDKWorld, world.passcodes.isWaiting, world.manager.launchState.isRunning,
              let shown = world.shownUsers.first else { return nil }
        return "\(shown.userID)'s data shows while the launch waits for the passcode"
    }
}

extension ExplorerInvariant {
    /// The app is reported ready (its launch gates opened: a `ProcessHost` tells systemd READY)
    /// only once the SDK's launch ended, in success or failure.
    public static let readyOnlyAfterLaunch = ExplorerInvariant("readyOnlyAfterLaunch") { world in
        guard let world = world as? SDKWorld, world.isReady, world.manager.lastResult == nil, world.manager.lastError == nil else { return nil }
        return "the launch gates opened while the SDK's launch had not ended (at \(world.manager.launchState))"
    }

    /// After a failed launch, the app relaunches: the relaunch is not refused and does not hang
    /// (it runs to its end, or waits for the login or passcode a person must give).
    public static let failedLaunchRelaunches = ExplorerInvariant("failedLaunchRelaunches", timing: .atEnd) { world in
        (world as? SDKWorld)?.relaunchFailure
    }
}
