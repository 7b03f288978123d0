import AppKernelCore
import AppKernelStore
import Foundation

extension SDKManager {
    // MARK: Sealed at rest

    /// Refuses a data directory without a key ring (nothing may be kept in clear).
    /// - Throws: ``LaunchError`` for the ``LaunchPhase/config`` phase with a ``KeyRingRequiredError``.
    func requireKeyRing() throws(LaunchError) {
        guard let dataDirectory, keyRing == nil else { return }
        throw LaunchError(phase: .config, cause: .threw(KeyRingRequiredError(dataDirectory: dataDirectory)))
    }

    /// Refuses to open stores under the data directory without a key ring, unless the app handed
    /// in a store manager of its own.
    func requireKeyRing(for storeManager: StoreManager) throws(KeyRingRequiredError) {
        guard ownStoreManager == nil, storeManager.keyRing == nil, let dataDirectory else { return }
        throw KeyRingRequiredError(dataDirectory: dataDirectory)
    }

    /// At launch, once the key ring has opened: removes the user folders whose key is gone (a
    /// logout or lockout destroyed it, and the process ended before the files went), as
    /// ``removedLeftovers`` says. Never an error that stops the launch: a folder that cannot be
    /// removed stays, unreadable, for the next launch.
    func removeShreddedLeftovers() {
        removedLeftovers = []
        guard let storeManager, storeManager.keyRing != nil else { return }
        removedLeftovers = (try? storeManager.removeLeftovers()) ?? []
    }

    /// Crypto-shreds the user who logs out: their data key is destroyed first (overwritten,
    /// `fsync`ed, unlinked), then their stores and key-value stores are removed. Killed between,
    /// what is left is ciphertext without a key, which the next launch removes.
    func shred(_ identity: UserAccountIdentity) {
        try? keyRing?.destroy(owner: KeyRing.owner(of: identity))
        // A store another live instance has open is marked for wiping, not deleted under it.
        _ = try? storeManager?.removeStores(for: .user(identity))
        if let dataDirectory { try? KeyValueEncryptedStore.removeAll(for: .user(identity), in: dataDirectory) }
        storeManager?.removeEmptyFolders(of: identity)
    }
}
