public import AppKernelCore
public import Foundation

extension StoreManager {
    /// Removes what crypto-shredding left: every user folder under the root
    /// (`<root>/<org>/<user>/`, holding `stores/` or `key_value_stores/`) whose owner has no data
    /// key in ``keyRing`` — its key was destroyed at a logout or a passcode lockout, and the
    /// process ended before the files were removed. Such files are ciphertext nobody can open;
    /// they are removed, never opened. A launch calls this once its key ring has opened (the
    /// master key verified against every wrapped key).
    ///
    /// Left alone: a folder holding a plain file of an earlier version (a plain SQLite store or
    /// JSON: it is sealed when first opened, with a new key, not thrown away), a folder with no
    /// sealed file at all (being made by another instance right now), and anything that is not
    /// a folder of this layout. Nothing happens without a key ring, or when its owners cannot be
    /// listed.
    /// - Returns: The folders removed.
    /// - Throws: ``StoreError`` `cannotOpen` naming a folder that is refused (a link, another
    ///   user's) or cannot be removed; the ones before it are gone.
    @discardableResult
    public func removeLeftovers() throws(StoreError) -> [URL] {
        guard let keyRing, let owners = try? Set(keyRing.owners()) else { return [] }
        var removed: [URL] = []
        for org in Self.folders(in: root) where ![KeyRing.directoryName, "stores", KeyValueEncryptedStore.directoryName].contains(org.lastPathComponent) {
            for user in Self.folders(in: org) {
                let marks = ["stores", KeyValueEncryptedStore.directoryName].map { user.appendingPathComponent($0).path }
                guard marks.contains(where: { FileManager.default.fileExists(atPath: $0) }) else { continue }
                let identity = UserAccountIdentity(userID: user.lastPathComponent, orgID: org.lastPathComponent)
                guard !owners.contains(KeyRing.owner(of: identity)), Self.holdsOnlyCiphertext(user) else { continue }
                do {
                    guard try PrivateDirectory.check(user, home: root) else { continue }
                    try FileManager.default.removeItem(at: user)
                } catch let error as DataHomeError {
                    throw StoreError(code: .cannotOpen, reason: "a shredded user's leftover folder: \(error.description)", file: error.path)
                } catch {
                    throw StoreError(code: .cannotOpen, reason: "a shredded user's leftover folder cannot be removed: \(error.localizedDescription)",
                                     file: user.path)
                }
                removed.append(user)
            }
            if (try? FileManager.default.contentsOfDirectory(atPath: org.path))?.isEmpty == true { try? FileManager.default.removeItem(at: org) }
        }
        return removed
    }

    /// Removes `<root>/<org>/<user>/` once it is empty (the user's stores and key-value stores
    /// removed at a logout), then `<root>/<org>/` if that is empty too: a logged-out user leaves
    /// no folder behind. `rmdir` removes only an empty folder and never follows a link; a folder
    /// still holding something (a store another instance holds, marked for wiping) stays.
    public func removeEmptyFolders(of identity: UserAccountIdentity) {
        guard let stores = try? directory(for: .user(identity)) else { return }   // names checked there
        let user = stores.deletingLastPathComponent()
        for folder in [user, user.deletingLastPathComponent()] where rmdir(folder.path) != 0 { return }
    }

    /// The folders (not links) directly in `directory`, sorted; none if it cannot be listed.
    private static func folders(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.map { directory.appendingPathComponent($0) }.filter { url in
            (try? url.resourceValues(forKeys: [.isDirectoryKey, .isSymbolicLinkKey])).map { $0.isDirectory == true && $0.isSymbolicLink != true } ?? false
        }
    }

    /// Whether `folder` holds at least one sealed file (a sealed file's `AKSF`, a sealed store's
    /// `AKS1`) and no plain store or JSON file of an earlier version.
    private static func holdsOnlyCiphertext(_ folder: URL) -> Bool {
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return false }
        var sealed = false
        for case let file as URL in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
            let head = Array((try? handle.read(upToCount: 16)) ?? Data())
            try? handle.close()
            if head.starts(with: Array("SQLite format 3\0".utf8)) || head.first == UInt8(ascii: "{") || head.first == UInt8(ascii: "[") { return false }
            if head.starts(with: SealedFile.magic) || head.starts(with: Array("AKS1".utf8)) { sealed = true }
        }
        return sealed
    }
}
