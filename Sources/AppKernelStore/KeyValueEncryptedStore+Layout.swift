public import AppKernelCore
public import Foundation

extension KeyValueEncryptedStore {
    /// The folder of `owner`'s key-value stores under the data home `root`, beside its SmartStores:
    ///
    /// ```
    /// <root>/key_value_stores/<name>/                    global stores
    /// <root>/<orgID>/<userID>/key_value_stores/<name>/   a user's stores
    /// ```
    /// - Throws: ``StoreError`` `invalidName` for an org or user id that cannot name a folder.
    public static func directory(for owner: StoreOwner, in root: URL) throws(StoreError) -> URL {
        let stores = try StoreManager(root: root).directory(for: owner)
        return stores.deletingLastPathComponent().appendingPathComponent(directoryName)
    }

    /// The global store `name` under `root` (`sharedGlobal(withName:)`), sealed with the global key.
    /// - Throws: ``StoreError`` as ``init(parentDirectory:name:owner:key:home:)``, `wrongKey` when
    ///   the key ring does not give the key.
    public static func global(named name: String, in root: URL, keyRing: KeyRing) throws(StoreError) -> KeyValueEncryptedStore {
        try open(name, for: .global, in: root, keyRing: keyRing)
    }

    /// `identity`'s store `name` under `root` (`shared(withName:forUserAccount:)`), sealed with the
    /// user's key (created if the user has none yet).
    /// - Throws: ``StoreError`` as ``global(named:in:keyRing:)``.
    public static func forUser(_ identity: UserAccountIdentity, named name: String, in root: URL, keyRing: KeyRing) throws(StoreError) -> KeyValueEncryptedStore {
        try open(name, for: .user(identity), in: root, keyRing: keyRing)
    }

    /// The names of `owner`'s stores, sorted (`allNames(forUserAccount:)`, `allGlobalNames()`).
    public static func allNames(for owner: StoreOwner, in root: URL) -> [String] {
        guard let directory = try? directory(for: owner, in: root),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.filter(isValidName).sorted()
    }

    /// Removes `owner`'s store `name` and its entries (`removeShared(withName:forUserAccount:)`,
    /// `removeSharedGlobal(withName:)`); nothing there is no error.
    /// - Throws: ``StoreError``: `invalidName`, or `cannotOpen` when a folder is refused or cannot be removed.
    public static func remove(named name: String, for owner: StoreOwner, in root: URL) throws(StoreError) {
        guard isValidName(name) else { throw StoreError(code: .invalidName, reason: "'\(name)' cannot name a key-value store", file: root.path) }
        try removeFolder(directory(for: owner, in: root).appendingPathComponent(name), home: root)
    }

    /// Removes every store of `owner` (`removeAll(forUserAccount:)`, `removeAllGlobal()`): what a
    /// logout does for the user who leaves, after their key is destroyed.
    /// - Throws: ``StoreError`` `cannotOpen` when a folder is refused or cannot be removed.
    public static func removeAll(for owner: StoreOwner, in root: URL) throws(StoreError) {
        try removeFolder(directory(for: owner, in: root), home: root)
    }

    private static func open(_ name: String, for owner: StoreOwner, in root: URL, keyRing: KeyRing) throws(StoreError) -> KeyValueEncryptedStore {
        let identity: UserAccountIdentity? = if case .user(let identity) = owner { identity } else { nil }
        let parent = try directory(for: owner, in: root)
        let key: SecretKey
        do { key = try keyRing.dataKey(of: identity, creatingIfMissing: true) } catch {
            throw StoreError(code: .wrongKey, reason: "the key-value store's data key could not be had: \(error)", file: parent.path)
        }
        return try KeyValueEncryptedStore(parentDirectory: parent, name: name, owner: identity.map(KeyRing.owner(of:)) ?? KeyRing.globalOwner,
                                          key: key, home: root.standardizedFileURL)
    }

    /// Removes `folder` after checking every folder down to it from `home`: nothing is removed through a link.
    private static func removeFolder(_ folder: URL, home: URL) throws(StoreError) {
        do {
            guard try PrivateDirectory.check(folder, home: home.standardizedFileURL) else { return }
            try FileManager.default.removeItem(at: folder)
        } catch let error as DataHomeError {
            throw StoreError(code: .cannotOpen, reason: error.description, file: error.path)
        } catch {
            throw StoreError(code: .cannotOpen, reason: "cannot be removed: \(error.localizedDescription)", file: folder.path)
        }
    }
}
