public import AppKernelCore
public import Foundation
import Synchronization
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

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "credential store: <path>: <reason>".
    public var description: String { "credential store: \(path): \(reason)" }
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
}

extension CredentialStore {
    /// A store written before pending revocations existed keeps none: they are retried only
    /// while the manager lives. Implement both methods to keep them across launches.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {}
    /// A store written before pending revocations existed has none.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] { [] }
}

/// Stores each account as JSON in `<root>/<orgId>/<userId>/account.json`.
///
/// - Directories are created `0700` and files `0600` from their first byte: each write creates a
///   temporary file with mode 0600 (`O_CREAT | O_EXCL`), writes it, `fsync`s it, renames it over
///   the old one and `fsync`s the directory — so a reader, or a process killed mid-write, sees
///   the old file or the new one, never a torn one. (`Data.write(options: .atomic)` would reset
///   the mode to the umask's default on Linux.)
/// - A file that cannot be read is moved aside (`account.json.corrupt-<n>`) and reported in
///   ``CredentialStoreContents/problems``: never dropped silently, never a crash.
/// - The current user is kept in `<root>/current-user.json` and survives a restart.
/// - Revocations that failed and wait to be retried are kept in
///   `<root>/pending-revocations.json` (`0600`; it holds the tokens still to revoke).
public struct FileCredentialStore: CredentialStore {
    /// The store's root directory.
    public let root: URL

    /// Creates a store rooted at `root` (created, `0700`, on first write).
    public init(root: URL) { self.root = root }

    private static let accountFile = "account.json"
    private static let currentUserFile = "current-user.json"
    private static let pendingRevocationsFile = "pending-revocations.json"

    /// Writes the account atomically, `0600`, under `0700` directories.
    public func save(_ account: UserAccount) throws(CredentialStoreError) {
        let directory = try accountDirectory(account.identity)
        try POSIX.makePrivateDirectory(root)
        try POSIX.makePrivateDirectory(directory.deletingLastPathComponent())
        try POSIX.makePrivateDirectory(directory)
        let data: Data
        do { data = try JSONEncoder.sorted.encode(account) } catch {
            throw CredentialStoreError(path: directory.path, reason: "the account could not be encoded: \(error)")
        }
        try POSIX.writePrivateFileAtomically(data, to: directory.appendingPathComponent(Self.accountFile))
    }

    /// Deletes the account's directory (and its org's, when it was the org's last account).
    public func delete(_ identity: UserAccountIdentity) throws(CredentialStoreError) {
        let directory = try accountDirectory(identity)
        do {
            if FileManager.default.fileExists(atPath: directory.path) { try FileManager.default.removeItem(at: directory) }
            let orgDirectory = directory.deletingLastPathComponent()
            if let rest = try? FileManager.default.contentsOfDirectory(atPath: orgDirectory.path), rest.isEmpty {
                try FileManager.default.removeItem(at: orgDirectory)
            }
        } catch {
            throw CredentialStoreError(path: directory.path, reason: "could not be deleted: \(error.localizedDescription)")
        }
    }

    /// Writes the current user's identity atomically (or removes the file for nobody).
    public func saveCurrentUser(_ identity: UserAccountIdentity?) throws(CredentialStoreError) {
        let file = root.appendingPathComponent(Self.currentUserFile)
        guard let identity else {
            try? FileManager.default.removeItem(at: file)
            return
        }
        try writeJSON(identity, to: file)
    }

    /// Reads every account; unreadable files are moved aside and reported.
    public func load() throws(CredentialStoreError) -> CredentialStoreContents {
        var contents = CredentialStoreContents()
        let manager = FileManager.default
        guard manager.fileExists(atPath: root.path) else { return contents }
        let orgs: [String]
        do { orgs = try manager.contentsOfDirectory(atPath: root.path).sorted() } catch {
            throw CredentialStoreError(path: root.path, reason: "could not be listed: \(error.localizedDescription)")
        }
        for org in orgs where org != Self.currentUserFile && org != Self.pendingRevocationsFile && !org.hasPrefix(".") {
            let orgDirectory = root.appendingPathComponent(org)
            let users = (try? manager.contentsOfDirectory(atPath: orgDirectory.path).sorted()) ?? []
            for user in users where !user.hasPrefix(".") {
                let file = orgDirectory.appendingPathComponent(user).appendingPathComponent(Self.accountFile)
                guard manager.fileExists(atPath: file.path) else { continue }
                do {
                    let account = try JSONDecoder().decode(UserAccount.self, from: Data(contentsOf: file))
                    guard account.identity == UserAccountIdentity(userID: user, orgID: org) else {
                        throw CredentialStoreError(path: file.path, reason: "it holds the account \(account.identity), not \(org)/\(user)")
                    }
                    contents.accounts.append(account)
                } catch {
                    contents.problems.append(setAside(file, reason: Self.reason(error)))
                }
            }
        }
        let currentFile = root.appendingPathComponent(Self.currentUserFile)
        if manager.fileExists(atPath: currentFile.path) {
            do {
                let identity = try JSONDecoder().decode(UserAccountIdentity.self, from: Data(contentsOf: currentFile))
                contents.currentUser = contents.accounts.contains { $0.identity == identity } ? identity : nil
            } catch {
                contents.problems.append(setAside(currentFile, reason: Self.reason(error)))
            }
        }
        return contents
    }

    /// Writes the pending revocations atomically, `0600` (removes the file for none).
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(CredentialStoreError) {
        let file = root.appendingPathComponent(Self.pendingRevocationsFile)
        guard !revocations.isEmpty else {
            if FileManager.default.fileExists(atPath: file.path) {
                do { try FileManager.default.removeItem(at: file) } catch {
                    throw CredentialStoreError(path: file.path, reason: "could not be deleted: \(error.localizedDescription)")
                }
            }
            return
        }
        try writeJSON(revocations, to: file)
    }

    /// Writes `value` as JSON to `file`, a file at the root: atomically, `0600`, under a `0700` root.
    private func writeJSON(_ value: some Encodable, to file: URL) throws(CredentialStoreError) {
        try POSIX.makePrivateDirectory(root)
        let data: Data
        do { data = try JSONEncoder.sorted.encode(value) } catch {
            throw CredentialStoreError(path: file.path, reason: "could not be encoded: \(error)")
        }
        try POSIX.writePrivateFileAtomically(data, to: file)
    }

    /// Reads the pending revocations; an unreadable file is moved aside and the error thrown.
    public func loadPendingRevocations() throws(CredentialStoreError) -> [PendingRevocation] {
        let file = root.appendingPathComponent(Self.pendingRevocationsFile)
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        do {
            return try JSONDecoder().decode([PendingRevocation].self, from: Data(contentsOf: file))
        } catch {
            let problem = setAside(file, reason: Self.reason(error))
            throw CredentialStoreError(path: file.path, reason: problem.description)
        }
    }

    // MARK: Files

    private func accountDirectory(_ identity: UserAccountIdentity) throws(CredentialStoreError) -> URL {
        for component in [identity.orgID, identity.userID] {
            guard !component.isEmpty, component != ".", component != "..", !component.contains("/"), !component.hasPrefix(".") else {
                throw CredentialStoreError(path: root.path, reason: "'\(component)' cannot name a directory of the store")
            }
        }
        return root.appendingPathComponent(identity.orgID).appendingPathComponent(identity.userID)
    }

    private func setAside(_ file: URL, reason: String) -> CredentialStoreProblem {
        var number = 1
        var destination = file.appendingPathExtension("corrupt-\(number)")
        while FileManager.default.fileExists(atPath: destination.path) {
            number += 1
            destination = file.appendingPathExtension("corrupt-\(number)")
        }
        let moved = rename(file.path, destination.path) == 0
        return CredentialStoreProblem(path: file.path, reason: reason, movedTo: moved ? destination.path : nil)
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as CredentialStoreError: error.reason
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
    private let contents = Mutex(CredentialStoreContents())
    private let pending = Mutex<[PendingRevocation]>([])

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

/// Writes files that hold secrets the way the credential store does: owner-only (0600) from the
/// first byte, replaced atomically (a reader, or a process killed mid-write, sees the old file or
/// the new one), `fsync`ed with its folder.
public enum PrivateFile {
    /// Replaces `file` with `data`.
    /// - Throws: ``CredentialStoreError`` naming the file.
    public static func write(_ data: Data, to file: URL) throws(CredentialStoreError) {
        try POSIX.writePrivateFileAtomically(data, to: file)
    }
}
