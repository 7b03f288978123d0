import AppKernelAuth
public import AppKernelCore
public import AppKernelStore
import Foundation

extension KeyValueEncryptedStore {
    /// The global store `name` of ``SDKManager/shared`` (`sharedGlobal(withName:)`): under its
    /// data directory, sealed with its key ring's global key.
    /// - Throws: ``StoreError``: `cannotOpen` when the manager has no data directory or key ring,
    ///   and what ``global(named:in:keyRing:)`` throws.
    @MainActor
    public static func global(named name: String) throws(StoreError) -> KeyValueEncryptedStore {
        let (root, keyRing) = try sharedHome()
        return try global(named: name, in: root, keyRing: keyRing)
    }

    /// The current user's store `name` (`shared(withName:)`), sealed with the user's key.
    /// - Throws: ``StoreError`` `cannotOpen` when nobody is logged in, and what
    ///   ``forUser(_:named:)`` throws.
    @MainActor
    public static func forCurrentUser(named name: String) throws(StoreError) -> KeyValueEncryptedStore {
        guard let user = SDKManager.shared.accountManager?.currentAccount else {
            throw StoreError(code: .cannotOpen, reason: "nobody is logged in: there is no current user's key-value store '\(name)'")
        }
        return try forUser(user.identity, named: name)
    }

    /// `identity`'s store `name` (`shared(withName:forUserAccount:)`), under ``SDKManager/shared``'s
    /// data directory, sealed with the user's key.
    /// - Throws: ``StoreError`` as ``global(named:)``.
    @MainActor
    public static func forUser(_ identity: UserAccountIdentity, named name: String) throws(StoreError) -> KeyValueEncryptedStore {
        let (root, keyRing) = try sharedHome()
        return try forUser(identity, named: name, in: root, keyRing: keyRing)
    }

    /// Removes `owner`'s store `name` and its entries under ``SDKManager/shared``'s data directory
    /// (`removeShared(withName:forUserAccount:)`, `removeSharedGlobal(withName:)`).
    /// - Throws: ``StoreError``: no data directory or key ring, or what
    ///   ``remove(named:for:in:)`` throws.
    @MainActor
    public static func remove(named name: String, for owner: StoreOwner) throws(StoreError) {
        let (root, _) = try sharedHome()
        try remove(named: name, for: owner, in: root)
    }

    @MainActor
    private static func sharedHome() throws(StoreError) -> (root: URL, keyRing: KeyRing) {
        let manager = SDKManager.shared
        guard let root = manager.dataDirectory, let keyRing = manager.keyRing else {
            throw StoreError(code: .cannotOpen, reason: "SDKManager.shared has no dataDirectory and keyRing: set both before the launch "
                             + "(keyRing = try KeyRing(dataHome:provider:))")
        }
        return (root, keyRing)
    }
}
