public import AppKernelCore
public import Foundation

extension SmartStore {
    /// Opens the store file `fileURL` of a ``StoreManager`` layout with its owner's data key,
    /// found from the path:
    ///
    /// ```
    /// <root>/stores/<name>/store.sqlite                   the global key
    /// <root>/<org>/<user>/stores/<name>/store.sqlite      KeyRing.owner(of: <org>/<user>)'s key
    /// ```
    ///
    /// with the key ring in `<root>/keys` opened with `keyProvider`. What a tool, a test or a
    /// support script uses on one file; an app opens its stores through ``StoreManager``.
    /// Nothing is created: not the file, not a key.
    ///
    /// ```swift
    /// let store = try SmartStore(fileURL: url, keyProvider: .keyFile(application: "AccountsApp"))
    /// ```
    /// - Throws: ``StoreError``: `keyDestroyed` when the owner's key is gone (a logout or lockout
    ///   destroyed it: the file is leftover ciphertext), `wrongKey` for a master key that does not
    ///   open the key ring, `cannotOpen` for a path outside the layout or a file that is not there,
    ///   and what ``init(fileURL:configuration:key:)`` throws.
    public convenience init(fileURL: URL, keyProvider: KeyProvider, configuration: Configuration = Configuration()) throws(StoreError) {
        let file = fileURL.standardizedFileURL
        let (root, identity) = try Self.layout(of: file)
        let owner = identity.map(KeyRing.owner(of:)) ?? KeyRing.globalOwner
        let key: SecretKey
        do {
            let ring = try KeyRing(dataHome: root, provider: keyProvider)
            key = try ring.dataKey(for: owner)
        } catch {
            if case .missingDataKey = error.problem {
                throw StoreError(code: .keyDestroyed, reason: "the data key of its owner (\(identity?.description ?? "global")) is gone — "
                                 + "destroyed at a logout or lockout: the store is leftover ciphertext; nothing was opened or created — remove it",
                                 file: file.path)
            }
            throw StoreError(code: .wrongKey, reason: "the store's key ring \(root.appendingPathComponent(KeyRing.directoryName).path) "
                             + "does not open: \(error)", file: file.path)
        }
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw StoreError(code: .cannotOpen, reason: "there is no store file here; nothing was created", file: file.path)
        }
        try self.init(fileURL: file, configuration: configuration, key: EncryptionKey(key))
    }

    /// The data home and the owner of a store file of the ``StoreManager`` layout.
    private static func layout(of file: URL) throws(StoreError) -> (root: URL, identity: UserAccountIdentity?) {
        let parts = file.pathComponents
        let hasKeys = { (root: URL) in FileManager.default.fileExists(atPath: root.appendingPathComponent(KeyRing.directoryName).path) }
        if parts.count >= 4, parts[parts.count - 3] == "stores" {
            let global = file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            if hasKeys(global) { return (global, nil) }
            if parts.count >= 7 {
                let userFolder = global, orgFolder = global.deletingLastPathComponent()
                let root = orgFolder.deletingLastPathComponent()
                if hasKeys(root) {
                    return (root, UserAccountIdentity(userID: userFolder.lastPathComponent, orgID: orgFolder.lastPathComponent))
                }
            }
        }
        throw StoreError(code: .cannotOpen, reason: "not a store of a StoreManager's layout with a key ring "
                         + "(<root>/stores/<name>/store.sqlite or <root>/<org>/<user>/stores/<name>/store.sqlite, <root>/keys beside)",
                         file: file.path)
    }
}
