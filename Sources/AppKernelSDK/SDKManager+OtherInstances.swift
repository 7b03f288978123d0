import AppKernel
public import AppKernelAuth
import Foundation

extension SDKManager {
    // MARK: Other instances on the same data home

    /// Learns what another instance of the app on the same data home did to the users: reloads
    /// the account manager's list. A user gone from it (logged out elsewhere) is logged out here:
    /// observers hear a ``UserChange`` with reason `LogoutReason.loggedOutElsewhere`, the user's
    /// stores are closed — a query on one handed out before fails with `StoreError` `storeClosed`
    /// — and the wipe the other instance left pending finishes; with nobody left, the app returns
    /// to login, as after any last logout.
    ///
    /// It runs when the application becomes active, and before ``userStore()`` hands out a store
    /// another instance marked for wiping. Call it yourself when the app learns otherwise.
    /// - Returns: The users logged out elsewhere.
    /// - Throws: `CredentialStoreError` when the users cannot be read again (nothing changes).
    @discardableResult
    public func reloadUsersChangedElsewhere() throws(CredentialStoreError) -> [UserAccountIdentity] {
        guard let accountManager else { return [] }
        return try accountManager.reloadAccounts()
    }

    /// The app became active: another instance may have logged a user out meanwhile. Not during
    /// the launch (it has just read the users).
    func becameActive() {
        guard !launchState.isRunning else { return }
        do { try reloadUsersChangedElsewhere() } catch {
            application?.reportDiagnostic(.reloadFailed, subject: "sdk.accounts",
                                          message: "the users could not be read again to learn of logouts in other instances: \(error)")
        }
    }
}
