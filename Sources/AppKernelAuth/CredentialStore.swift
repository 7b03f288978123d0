public import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the credential store could not do something. Never carries a token.
public struct CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file or directory concerned.
    public var path: String
    /// What went wrong.
    public var reason: String
    /// The data home's refusal or failure behind it (a linked, foreign or open folder, a full
    /// disk), when that is the cause.
    public var dataHome: DataHomeError?

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// The error for a folder or file of the data home that was refused or could not be written.
    public init(_ error: DataHomeError) {
        self.init(path: error.path, reason: error.description)
        dataHome = error
    }

    /// "credential store: <path>: <reason>", or "credential store: <the data home's error>".
    public var description: String { dataHome.map { "credential store: \($0)" } ?? "credential store: \(path): \(reason)" }
}

/// A file the store could not read, and what it did with it.
public struct CredentialStoreProblem: Sendable, Hashable, CustomStringConvertible {
    /// The unreadable file.
    public var path: String
    /// Why it could not be read.
    public var reason: String
    /// Where it was moved, so that nothing is lost and a later load does not trip on it again.
    public var movedTo: String?

    /// "<path>: <reason> (moved to <movedTo>)".
    public var description: String { "\(path): \(reason)\(movedTo.map { " (moved to \($0))" } ?? "")" }
}

/// What a load found: the readable accounts, the current user, and the files it set aside.
public struct CredentialStoreContents: Sendable, Hashable {
    /// The accounts, ordered by org id then user id.
    public var accounts: [UserAccount]
    /// The user who was current when the store was last written.
    public var currentUser: UserAccountIdentity?
    /// Files that could not be read; each was moved aside and is reported here.
    public var problems: [CredentialStoreProblem]

    /// Creates contents.
    public init(accounts: [UserAccount] = [], currentUser: UserAccountIdentity? = nil, problems: [CredentialStoreProblem] = []) {
        self.accounts = accounts
        self.currentUser = currentUser
        self.problems = problems
    }
}

/// Where accounts live between launches.
public protocol CredentialStore: Sendable {
    /// Writes `account` (replacing its earlier version) so that a crash leaves either version, whole.
    func save(_ account: UserAccount) throws(CredentialStoreError)
    /// Deletes the account's files.
    func delete(_ identity: UserAccountIdentity) throws(CredentialStoreError)
    /// Remembers who the current user is (`nil`: nobody).
    func saveCurrentUser(_ identity: UserAccountIdentity?) throws(CredentialStoreError)
    /// Reads everything back.
    func load() throws(CredentialStoreError) -> CredentialStoreContents
    /// Keeps the revocations that failed and wait to be retried (an empty list: none).
    func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError)
    /// Reads back the revocations waiting to be retried.
    func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation]
    /// Reads the pending revocations, changes them with `change` and keeps the result, as one
    /// step that another instance of the app sharing the store cannot interleave with (so
    /// neither loses what the other added), and returns what was kept.
    func updatePendingRevocations(_ change: ([PendingRevocation]) -> [PendingRevocation]) throws(CredentialStoreError) -> [PendingRevocation]
}

extension CredentialStore {
    /// A store written before pending revocations existed keeps none: they are retried only
    /// while the manager lives. Implement both methods to keep them across launches.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {}
    /// A store written before pending revocations existed has none.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] { [] }

    /// Loads, changes and saves — one step for a store that only one process uses.
    public func updatePendingRevocations(_ change: ([PendingRevocation]) -> [PendingRevocation]) throws(CredentialStoreError) -> [PendingRevocation] {
        let updated = change(try loadPendingRevocations())
        try savePendingRevocations(updated)
        return updated
    }
}

/// Stores each account as JSON in `<root>/<orgId>/<userId>/account.json`.
///
/// - The root is a data home of its own, checked as Core's `PrivateDirectory` says (ssh's
///   `StrictModes`): the root and every folder down to a file is a real folder (a symbolic link
///   is refused, never followed), owned by the user and not writable by others; missing ones are
///   created `0700`; nothing found is `chmod`ed. A refusal is a ``CredentialStoreError`` whose
///   ``CredentialStoreError/dataHome`` names the folder and the fix.
/// - Files are written by Core's `PrivateFile`: `0600` from their first byte, replaced atomically and
///   `fsync`ed, so a reader, or a process killed mid-write, sees the old file or the new one.
/// - Every change, and every load, runs under an advisory lock (Core's `FileLock`, `<root>/.lock`), so
///   two instances of the app on one data home never interleave: a logout in one never removes
///   the org folder the other is writing an account into, and ``updatePendingRevocations(_:)``
///   is a read-modify-write that loses neither instance's revocations.
/// - A file that cannot be read is moved aside (`account.json.corrupt-<n>`) and reported in
///   ``CredentialStoreContents/problems``: never dropped silently, never a crash.
/// - The current user is kept in `<root>/current-user.json` and survives a restart.
/// - Revocations that failed and wait to be retried are kept in
///   `<root>/pending-revocations.json` (`0600`; it holds the tokens still to revoke).
public struct FileCredentialStore: CredentialStore {
    /// The store's root directory.
    public let root: URL
    /// How long a change waits for another instance's change to finish before it gives up
    /// (nothing changed). Default 5 seconds.
    public var lockTimeout: Duration

    /// Creates a store rooted at `root` (created, `0700`, on first write).
    public init(root: URL, lockTimeout: Duration = .seconds(5)) {
        self.root = root.standardizedFileURL
        self.lockTimeout = lockTimeout
    }

    private static let accountFile = "account.json"
    private static let currentUserFile = "current-user.json"
    private static let pendingRevocationsFile = "pending-revocations.json"
    private static let lockFile = ".lock"
    /// The largest file the store reads; a bigger one is damage.
    private static let maximumFileSize = 1 << 20

    /// Writes the account atomically, `0600`, under `0700` directories.
    public func save(_ account: UserAccount) throws(CredentialStoreError) {
        let directory = try accountDirectory(account.identity)
        let data: Data
        do { data = try JSONEncoder.sorted.encode(account) } catch {
            throw CredentialStoreError(path: directory.path, reason: "the account could not be encoded: \(error)")
        }
        try locked { () throws(CredentialStoreError) in
            try checked { () throws(DataHomeError) in
                try PrivateDirectory.create(directory, home: root)
                try PrivateFile.write(data, to: directory.appendingPathComponent(Self.accountFile))
            }
        }
    }

    /// Deletes the account's directory (and its org's, when it was the org's last account).
    public func delete(_ identity: UserAccountIdentity) throws(CredentialStoreError) {
        let directory = try accountDirectory(identity)
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return }
        try locked { () throws(CredentialStoreError) in
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
    }

    /// Writes the current user's identity atomically (or removes the file for nobody).
    public func saveCurrentUser(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        let file = root.appendingPathComponent(Self.currentUserFile)
        guard let identity else {
            guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return }
            return try locked { () throws(CredentialStoreError) in try checked { () throws(DataHomeError) in try PrivateFile.remove(file) } }
        }
        let data = try encode(identity, for: file)
        try locked { () throws(CredentialStoreError) in try checked { () throws(DataHomeError) in try PrivateFile.write(data, to: file) } }
    }

    /// Reads every account; unreadable files are moved aside and reported.
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
        for org in orgs where org != Self.currentUserFile && org != Self.pendingRevocationsFile && !org.hasPrefix(".") {
            let orgDirectory = root.appendingPathComponent(org)
            let users = (try? manager.contentsOfDirectory(atPath: orgDirectory.path).sorted()) ?? []
            for user in users where !user.hasPrefix(".") {
                let directory = orgDirectory.appendingPathComponent(user)
                let file = directory.appendingPathComponent(Self.accountFile)
                do {
                    guard try PrivateDirectory.check(directory, home: root), let data = try PrivateFile.read(file, maximumSize: Self.maximumFileSize) else {
                        continue
                    }
                    let account = try JSONDecoder().decode(UserAccount.self, from: data)
                    guard account.identity == UserAccountIdentity(userID: user, orgID: org) else {
                        throw CredentialStoreError(path: file.path, reason: "it holds the account \(account.identity), not \(org)/\(user)")
                    }
                    contents.accounts.append(account)
                } catch let error as DataHomeError where error.path != file.path {
                    // A refused folder is reported, not moved: what is in it is not the store's.
                    contents.problems.append(CredentialStoreProblem(path: error.path, reason: error.description, movedTo: nil))
                } catch {
                    contents.problems.append(setAside(file, reason: Self.reason(error)))
                }
            }
        }
        let currentFile = root.appendingPathComponent(Self.currentUserFile)
        do {
            if let data = try PrivateFile.read(currentFile, maximumSize: Self.maximumFileSize) {
                let identity = try JSONDecoder().decode(UserAccountIdentity.self, from: data)
                contents.currentUser = contents.accounts.contains { $0.identity == identity } ? identity : nil
            }
        } catch {
            contents.problems.append(setAside(currentFile, reason: Self.reason(error)))
        }
        return contents
    }

    /// Writes the pending revocations atomically, `0600` (removes the file for none).
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {
        _ = try updatePendingRevocations { _ in revocations }
    }

    /// Reads, changes and writes the pending revocations under the store's lock, so another
    /// instance's change in between is kept, not overwritten.
    /// - Throws: ``CredentialStoreError`` when the lock stays taken (nothing changed), the file
    ///   is unreadable (moved aside; nothing changed) or cannot be written.
    public func updatePendingRevocations(_ change: ([PendingRevocation]) -> [PendingRevocation]) throws(CredentialStoreError) -> [PendingRevocation] {
        let file = root.appendingPathComponent(Self.pendingRevocationsFile)
        return try locked { () throws(CredentialStoreError) -> [PendingRevocation] in
            let updated = change(try loadPendingLocked(file))
            if updated.isEmpty {
                try checked { () throws(DataHomeError) in try PrivateFile.remove(file) }
            } else {
                let data = try encode(updated, for: file)
                try checked { () throws(DataHomeError) in try PrivateFile.write(data, to: file) }
            }
            return updated
        }
    }

    /// Reads the pending revocations; an unreadable file is moved aside and the error thrown.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] {
        guard try checked({ () throws(DataHomeError) in try PrivateDirectory.check(root) }) else { return [] }
        return try locked { () throws(CredentialStoreError) in try loadPendingLocked(root.appendingPathComponent(Self.pendingRevocationsFile)) }
    }

    private func loadPendingLocked(_ file: URL) throws(CredentialStoreError) -> [PendingRevocation] {
        do {
            guard let data = try PrivateFile.read(file, maximumSize: Self.maximumFileSize) else { return [] }
            return try JSONDecoder().decode([PendingRevocation].self, from: data)
        } catch {
            let problem = setAside(file, reason: Self.reason(error))
            throw CredentialStoreError(path: file.path, reason: problem.description)
        }
    }

    // MARK: Files

    /// Runs `body` holding the store's lock, the root made (`0700`) or checked first.
    private func locked<T>(_ body: () throws(CredentialStoreError) -> T) throws(CredentialStoreError) -> T {
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
    private func checked<T>(_ body: () throws(DataHomeError) -> T) throws(CredentialStoreError) -> T {
        do { return try body() } catch { throw CredentialStoreError(error) }
    }

    private func encode(_ value: some Encodable, for file: URL) throws(CredentialStoreError) -> Data {
        do { return try JSONEncoder.sorted.encode(value) } catch {
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

    private func setAside(_ file: URL, reason: String) -> CredentialStoreProblem {
        var number = 1
        var destination = file.appendingPathExtension("corrupt-\(number)")
        while (try? FileManager.default.attributesOfItem(atPath: destination.path)) != nil {
            number += 1
            destination = file.appendingPathExtension("corrupt-\(number)")
        }
        let moved = rename(file.path, destination.path) == 0
        return CredentialStoreProblem(path: file.path, reason: reason, movedTo: moved ? destination.path : nil)
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as CredentialStoreError: error.reason
        case let error as DataHomeError: error.description
        case DecodingError.dataCorrupted(let context): "not valid JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "the field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "unreadable: \(error.localizedDescription)"
        }
    }
}

/// A store that keeps accounts in memory: for tests and for apps that must not persist tokens.
public final class InMemoryCredentialStore: CredentialStore {
    private let contents = Locked(CredentialStoreContents())
    private let pending = Locked<[PendingRevocation]>([])

    /// Creates an empty store.
    public init() {}

    /// Keeps the account.
    public func save(_ account: UserAccount) throws(CredentialStoreError) {
        contents.withLock { contents in
            contents.accounts.removeAll { $0.identity == account.identity }
            contents.accounts.append(account)
            contents.accounts.sort { ($0.identity.orgID, $0.identity.userID) < ($1.identity.orgID, $1.identity.userID) }
        }
    }

    /// Forgets the account.
    public func delete(_ identity: UserAccountIdentity) throws(CredentialStoreError) {
        contents.withLock { $0.accounts.removeAll { $0.identity == identity } }
    }

    /// Keeps the current user.
    public func saveCurrentUser(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        contents.withLock { $0.currentUser = identity }
    }

    /// Returns what it keeps.
    public func load() throws(CredentialStoreError) -> CredentialStoreContents {
        contents.withLock { $0 }
    }

    /// Keeps the pending revocations.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {
        pending.withLock { $0 = revocations }
    }

    /// Returns the pending revocations it keeps.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] {
        pending.withLock { $0 }
    }
}

extension JSONEncoder {
    /// An encoder with sorted keys, so files are stable.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
