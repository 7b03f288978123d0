import AppKernel
import AppKernelAuth
import AppKernelCore
public import AppKernelStore
public import AppKernelSync
import Foundation

extension SDKManager {
    // MARK: The user's stores and syncs

    /// Registers the soups of `userstore.json` (in ``configDirectory``) for the current user (or
    /// globally, before anyone logs in) — in ``stores`` and, with a ``dataDirectory``, in the
    /// owner's SmartStore (soups that exist with the same indexes are left as they are, as the
    /// Mobile SDK's `setupUserStoreFromDefaultConfig` does). No file: nothing to do.
    /// - Throws: `ConfigError` for the file, `StoreError` from the store; nothing is registered then.
    public func setupUserStoreFromDefaultConfig() throws {
        guard let data = try defaultConfigFile(StoreConfig.soupsFileName) else { return }
        let config = try StoreConfig.load(data)
        try userStore()?.registerSoups(config.soups)
        try stores.register(soups: config.soups, for: currentStoreOwner)
        report(config.warnings)
    }

    /// Registers the syncs of `usersyncs.json` for the current user (each sync's soup must exist)
    /// — in ``stores`` and, with a ``dataDirectory`` and a REST client, as MobileSync syncs in the
    /// user's store (a sync that exists by name is kept, with its state).
    /// - Throws: `ConfigError` for the file, `SyncError` from MobileSync; nothing is registered then.
    public func setupUserSyncsFromDefaultConfig() throws {
        guard let data = try defaultConfigFile(SyncConfig.syncsFileName) else { return }
        let owner = currentStoreOwner
        let syncManager = try syncManager()
        let config = try SyncConfig.load(data, soupNames: Set(stores.soups(for: owner).map(\.name)), targets: syncManager?.targets)
        if let syncManager {
            _ = try syncManager.createSyncs(config.syncs.filter { !syncManager.hasSync(forName: $0.name) })
        }
        try stores.register(syncs: config.syncs, for: owner)
        report(config.warnings)
    }

    /// Keeps `warnings` in ``configWarnings`` (once each) and reports each new one as the
    /// application's ``Diagnostic/Kind/configDefaulted`` diagnostic.
    private func report(_ warnings: [ConfigWarning]) {
        for warning in warnings where !configWarnings.contains(warning) {
            configWarnings.append(warning)
            application?.reportDiagnostic(.configDefaulted, subject: "\(warning.file):\(warning.keyPath)", message: warning.description)
        }
    }

    /// The current owner's default SmartStore in ``dataDirectory`` (opened once, then shared, by
    /// ``storeManager``); `nil` without a data directory. A store another instance of the app
    /// marked for wiping (its user logged out there) is not handed out: the users are reloaded
    /// first (``reloadUsersChangedElsewhere()``), and the store of whoever is current after is.
    /// - Throws: `StoreError` when the store cannot be opened; `CredentialStoreError` when the
    ///   users cannot be reloaded.
    public func userStore() throws -> SmartStore? {
        guard let storeManager else { return nil }
        try requireKeyRing(for: storeManager)
        if storeManager.isWipePending(named: SmartStore.defaultStoreName, for: currentStoreOwner) { try reloadUsersChangedElsewhere() }
        return try storeManager.store(named: SmartStore.defaultStoreName, for: currentStoreOwner)
    }

    /// MobileSync over the current owner's store, with the current user's REST client — made
    /// once per owner and kept until that user logs out; `nil` without a data directory or a
    /// logged-in user.
    /// - Throws: `StoreError` / `SyncError` when the store cannot be opened or read.
    public func syncManager() throws -> SyncManager? {
        let owner = currentStoreOwner
        if let owned = ownedSyncManager, owned.owner == owner { return owned.manager }
        guard let store = try userStore(), let client = restClientForCurrentUser() else { return nil }
        let manager = try SyncManager(store: store, restClient: client)
        ownedSyncManager = (owner, manager)
        return manager
    }
}
