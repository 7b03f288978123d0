public import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps each account sealed in `<root>/<orgId>/<userId>/account.sealed`: Core's `SealedFile`
/// (AES-256-GCM, the header — purpose, owner, key id — authenticated) under that user's data key
/// from a `KeyRing`; the current user and the pending revocations are sealed with the ring's
/// global key. No token, username or id is readable in any file it writes.
///
/// ```swift
/// let keys = try KeyRing(dataHome: dataHome, provider: .keyFile(application: "MyApp"))
/// let store = FileCredentialStore(root: dataHome.appendingPathComponent("accounts"), keyRing: keys)
/// ```
///
/// - The root is a data home of its own, checked as Core's `PrivateDirectory` says (ssh's
///   `StrictModes`): the root and every folder down to a file is a real folder (a symbolic link
///   is refused, never followed), owned by the user and not writable by others; missing ones are
///   created `0700`; nothing found is `chmod`ed. A refusal is a ``CredentialStoreError`` whose
///   ``CredentialStoreError/dataHome`` names the folder and the fix.
/// - Files are written by Core's `SealedFile` through `PrivateFile`: `0600` from their first
///   byte, replaced atomically and `fsync`ed, so a reader, or a process killed mid-write, sees the
///   old file or the new one.
/// - Every change, and every load, runs under an advisory lock (Core's `FileLock`, `<root>/.lock`), so
///   two instances of the app on one data home never interleave: a logout in one never removes
///   the org folder the other is writing an account into, and ``updatePendingRevocations(_:)``
///   is a read-modify-write that loses neither instance's revocations. A user's data key is
///   created under that lock too.
/// - A file that does not open — truncated, edited, another user's file copied over this one,
///   another kind of sealed file, an older copy from before the user's key was replaced — is
///   moved aside (`account.sealed.corrupt-<n>`) and reported in
///   ``CredentialStoreContents/problems`` with its typed ``CredentialStoreProblem/sealedFile``:
///   nothing of it is decrypted, it never blocks the other users, it is never dropped silently.
///   A whole file whose key cannot be had is reported and left where it is.
/// - ``delete(_:)`` crypto-shreds: the user's data key is destroyed first (`fsync`ed), then the
///   files are removed; an account folder whose key is gone (a crash in between, or the key
///   destroyed by the app) is leftover ciphertext, removed by the next ``load()``.
/// - The plain files of earlier versions (`account.json`, `current-user.json`,
///   `pending-revocations.json`) are sealed when read, then overwritten with zeros, `fsync`ed and
///   unlinked — sealed copy first, so a migration killed midway loses nothing.
/// - An older copy of a file sealed with the same key (no logout in between) opens: replay is
///   not detected, as DESIGN says; a copy from before a logout and a new login does not.
public struct FileCredentialStore: CredentialStore {
    /// The store's root directory.
    public let root: URL
    /// The keys the files are sealed with: each user's data key for their account, the global
    /// key for the current user and the pending revocations.
    public let keyRing: KeyRing
    /// How long a change waits for another instance's change to finish before it gives up
    /// (nothing changed). Default 5 seconds.
    public var lockTimeout: Duration

    /// Creates a store rooted at `root` (created, `0700`, on first write) whose files are sealed
    /// with `keyRing`'s keys.
    /// - Parameters:
    ///   - root: The store's folder, e.g. `<data home>/accounts`.
    ///   - keyRing: The data home's key ring (`KeyRing(dataHome:provider:)`); its folder may be
    ///     inside `root` or beside it.
    ///   - lockTimeout: How long a change waits for another instance's change.
    public init(root: URL, keyRing: KeyRing, lockTimeout: Duration = .seconds(5)) {
        self.root = root.standardizedFileURL
        self.keyRing = keyRing
        self.lockTimeout = lockTimeout
    }

    /// Each user's sealed account file, in `<root>/<orgId>/<userId>/`.
    public static let accountFileName = "account.sealed"
    /// The sealed current-user file, in the root.
    public static let currentUserFileName = "current-user.sealed"
    /// The sealed pending revocations, in the root.
    public static let pendingRevocationsFileName = "pending-revocations.sealed"
    /// The purpose sealed in every account file's header.
    public static let accountPurpose = "account"
    /// The purpose sealed in the current-user file's header.
    public static let currentUserPurpose = "current-user"
    /// The purpose sealed in the pending revocations' header.
    public static let pendingRevocationsPurpose = "pending-revocations"

    /// The plain files of earlier versions, sealed when found.
    static let plainAccountFileName = "account.json"
    static let plainCurrentUserFileName = "current-user.json"
    static let plainPendingRevocationsFileName = "pending-revocations.json"
    /// A small file sealed with the global key at the store's first sealed write: it shows at
    /// load that the key ring is the one the store was written with.
    static let keyCheckFileName = "key-check.sealed"
    static let keyCheckPurpose = "credential-store-key-check"
    static let lockFile = ".lock"
    /// The largest file the store reads; a bigger one is damage.
    static let maximumFileSize = 1 << 20

    /// Seals the account with its user's data key (created on the user's first save) and
    /// replaces its file atomically, `0600`, under `0700` directories.
    public func save(_ account: UserAccount) throws(CredentialStoreError) {
        let directory = try accountDirectory(account.identity)
        let file = directory.appendingPathComponent(Self.accountFileName)
        let plaintext = try encode(account, for: file)
        try locked { () throws(CredentialStoreError) in
            try checked { () throws(DataHomeError) in try PrivateDirectory.create(directory, home: root) }
            let key = try dataKey(of: account.identity, creating: true, for: file)
            try seal(plaintext, to: file, purpose: Self.accountPurpose, owner: KeyRing.owner(of: account.identity), key: key)
            try shred(directory.appendingPathComponent(Self.plainAccountFileName))
        }
    }

    /// Crypto-shreds the account: destroys the user's data key first (overwritten, `fsync`ed,
    /// unlinked: whatever is left of the user's files is ciphertext nobody can open), then
    /// deletes the account's directory (and its org's, when it was the org's last account).
    ///
    /// The key is the user's for all their sealed data (their stores too): call this at a
    /// logout, after the user's stores were closed.
    public func delete(_ identity: UserAccountIdentity) throws(CredentialStoreError) {
        let directory = try accountDirectory(identity)
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return try destroyKey(of: identity, for: directory) }
        try locked { () throws(CredentialStoreError) in
            try destroyKey(of: identity, for: directory)
            try removeAccountDirectory(directory)
        }
    }

    /// Seals the current user's identity with the global key and writes it atomically (or
    /// removes the file for nobody).
    public func saveCurrentUser(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        let file = root.appendingPathComponent(Self.currentUserFileName)
        let plain = root.appendingPathComponent(Self.plainCurrentUserFileName)
        guard let identity else {
            guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return }
            return try locked { () throws(CredentialStoreError) in
                try checked { () throws(DataHomeError) in try PrivateFile.remove(file) }
                try shred(plain)
            }
        }
        let plaintext = try encode(identity, for: file)
        try locked { () throws(CredentialStoreError) in
            let key = try dataKey(of: nil, creating: true, for: file)
            try seal(plaintext, to: file, purpose: Self.currentUserPurpose, owner: KeyRing.globalOwner, key: key)
            try shred(plain)
        }
    }

    /// Reads every account; files that do not open are moved aside and reported, leftovers of
    /// shredded users removed, plain files of earlier versions sealed.
    /// - Throws: ``CredentialStoreError`` when the root or a folder in it is refused (a link,
    ///   another user's, writable by others) or cannot be listed.
    public func load() throws(CredentialStoreError) -> CredentialStoreContents {
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return CredentialStoreContents() }
        return try locked { () throws(CredentialStoreError) in try loadLocked() }
    }

    private func loadLocked() throws(CredentialStoreError) -> CredentialStoreContents {
        var contents = CredentialStoreContents()
        let manager = FileManager.default
        let orgs: [String]
        do { orgs = try manager.contentsOfDirectory(atPath: root.path).sorted() } catch {
            throw CredentialStoreError(path: root.path, reason: "could not be listed: \(error.localizedDescription)")
        }
        let rootFiles: Set = [Self.keyCheckFileName, Self.currentUserFileName, Self.pendingRevocationsFileName, Self.plainCurrentUserFileName, Self.plainPendingRevocationsFileName]
        let keyFolder = keyRing.directory.standardizedFileURL.path
        for org in orgs where !rootFiles.contains(org) && !org.hasPrefix(".") && !org.contains(".corrupt-") {
            let orgDirectory = root.appendingPathComponent(org)
            guard orgDirectory.path != keyFolder else { continue }
            let users = (try? manager.contentsOfDirectory(atPath: orgDirectory.path).sorted()) ?? []
            for user in users where !user.hasPrefix(".") {
                let identity = UserAccountIdentity(userID: user, orgID: org)
                let directory = orgDirectory.appendingPathComponent(user)
                do {
                    guard try PrivateDirectory.check(directory, home: root) else { continue }
                    let opened = try openFile(UserAccount.self, directory.appendingPathComponent(Self.accountFileName),
                                          plain: directory.appendingPathComponent(Self.plainAccountFileName),
                                          purpose: Self.accountPurpose, of: identity) { (account, file) throws(CredentialStoreError) in
                        guard account.identity == identity else {
                            throw CredentialStoreError(path: file.path, reason: "it holds the account \(account.identity), not \(org)/\(user)")
                        }
                    }
                    switch opened {
                    case .value(let account): contents.accounts.append(account)
                    case .absent: continue
                    case .leftover: if let problem = removeLeftover(directory) { contents.problems.append(problem) }
                    }
                } catch let error as DataHomeError {
                    // A refused folder is reported, not moved: what is in it is not the store's.
                    contents.problems.append(CredentialStoreProblem(path: error.path, reason: error.description, movedTo: nil))
                } catch {
                    contents.problems.append(problem(error))
                }
            }
        }
        do {
            let opened = try openFile(UserAccountIdentity.self, root.appendingPathComponent(Self.currentUserFileName),
                                  plain: root.appendingPathComponent(Self.plainCurrentUserFileName), purpose: Self.currentUserPurpose, of: nil)
            if case .value(let identity) = opened {
                contents.currentUser = contents.accounts.contains { $0.identity == identity } ? identity : nil
            }
        } catch {
            contents.problems.append(problem(error))
        }
        return contents
    }

    /// Seals the pending revocations with the global key and writes them atomically, `0600`
    /// (removes the file for none).
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {
        _ = try updatePendingRevocations { _ in revocations }
    }

    /// Reads, changes and writes the pending revocations under the store's lock, so another
    /// instance's change in between is kept, not overwritten.
    /// - Throws: ``CredentialStoreError`` when the lock stays taken (nothing changed), the file
    ///   does not open (moved aside; nothing changed), its key cannot be had, or it cannot be written.
    public func updatePendingRevocations(_ change: ([PendingRevocation]) -> [PendingRevocation]) throws(CredentialStoreError) -> [PendingRevocation] {
        let file = root.appendingPathComponent(Self.pendingRevocationsFileName)
        return try locked { () throws(CredentialStoreError) -> [PendingRevocation] in
            let updated = change(try loadPendingLocked())
            if updated.isEmpty {
                try checked { () throws(DataHomeError) in try PrivateFile.remove(file) }
            } else {
                let plaintext = try encode(updated, for: file)
                let key = try dataKey(of: nil, creating: true, for: file)
                try seal(plaintext, to: file, purpose: Self.pendingRevocationsPurpose, owner: KeyRing.globalOwner, key: key)
            }
            try shred(root.appendingPathComponent(Self.plainPendingRevocationsFileName))
            return updated
        }
    }

    /// Reads the pending revocations; a file that does not open is moved aside and the error thrown.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] {
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return [] }
        return try locked { () throws(CredentialStoreError) in try loadPendingLocked() }
    }

    private func loadPendingLocked() throws(CredentialStoreError) -> [PendingRevocation] {
        do {
            let opened = try openFile([PendingRevocation].self, root.appendingPathComponent(Self.pendingRevocationsFileName),
                                  plain: root.appendingPathComponent(Self.plainPendingRevocationsFileName), purpose: Self.pendingRevocationsPurpose, of: nil)
            if case .value(let revocations) = opened { return revocations }
            return []
        } catch {
            let problem = problem(error)
            var failure = CredentialStoreError(path: problem.path, reason: problem.description)
            failure.sealedFile = problem.sealedFile
            failure.key = problem.key
            throw failure
        }
    }

    // MARK: Files

    /// Runs `body` holding the store's lock, the root made (`0700`) or checked first.
    func locked<T>(_ body: () throws(CredentialStoreError) -> T) throws(CredentialStoreError) -> T {
        try checked { () throws(DataHomeError) in try PrivateDirectory.create(root) }
        let lock = root.appendingPathComponent(Self.lockFile)
        do {
            return try FileLock.withExclusiveLock(at: lock, timeout: lockTimeout) { () throws -> T in try body() }
        } catch let error as CredentialStoreError {
            throw error
        } catch let error as FileLockError {
            throw CredentialStoreError(path: lock.path, reason: error.description)
        } catch {
            throw CredentialStoreError(path: lock.path, reason: "\(error)")
        }
    }

    /// `body`'s result, its ``DataHomeError`` wrapped as a ``CredentialStoreError``.
    func checked<T>(_ body: () throws(DataHomeError) -> T) throws(CredentialStoreError) -> T {
        do { return try body() } catch { throw CredentialStoreError(error) }
    }

    private func encode(_ value: some Encodable, for file: URL) throws(CredentialStoreError) -> [UInt8] {
        do { return Array(try JSONEncoder.sorted.encode(value)) } catch {
            throw CredentialStoreError(path: file.path, reason: "could not be encoded: \(error)")
        }
    }

    private func accountDirectory(_ identity: UserAccountIdentity) throws(CredentialStoreError) -> URL {
        for component in [identity.orgID, identity.userID] {
            guard !component.isEmpty, component != ".", component != "..", !component.contains("/"), !component.hasPrefix("."), !component.contains("\0") else {
                throw CredentialStoreError(path: root.path, reason: "'\(component)' cannot name a directory of the store")
            }
        }
        return root.appendingPathComponent(identity.orgID).appendingPathComponent(identity.userID)
    }

    /// Removes an account's directory, then its org's when that is empty.
    func removeAccountDirectory(_ directory: URL) throws(CredentialStoreError) {
        let orgDirectory = directory.deletingLastPathComponent()
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(orgDirectory, home: root) }) else { return }
        do {
            // removeItem removes a link in the user's place, never what it points at.
            if (try? FileManager.default.attributesOfItem(atPath: directory.path)) != nil { try FileManager.default.removeItem(at: directory) }
        } catch {
            throw CredentialStoreError(path: directory.path, reason: "could not be deleted: \(error.localizedDescription)")
        }
        // rmdir(2) removes the org's folder only when it is empty.
        if rmdir(orgDirectory.path) != 0, errno != ENOTEMPTY, errno != EEXIST, errno != ENOENT {
            throw CredentialStoreError(DataHomeError(path: orgDirectory.path, call: "rmdir", code: errno))
        }
    }

    func setAside(_ file: URL, reason: String) -> CredentialStoreProblem {
        var number = 1
        var destination = file.appendingPathExtension("corrupt-\(number)")
        while (try? FileManager.default.attributesOfItem(atPath: destination.path)) != nil {
            number += 1
            destination = file.appendingPathExtension("corrupt-\(number)")
        }
        let moved = rename(file.path, destination.path) == 0
        return CredentialStoreProblem(path: file.path, reason: reason, movedTo: moved ? destination.path : nil)
    }
}
