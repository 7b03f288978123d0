public import AppKernelCore
import Foundation
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
    /// The sealed file's failure behind it (damaged, truncated, another user's or another
    /// purpose's file, sealed with another key), when that is the cause.
    public var sealedFile: SealedFileError?
    /// The key ring's failure behind it (a data key missing, destroyed or unreadable), when that
    /// is the cause.
    public var key: KeyError?

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

    /// The error for a sealed file that could not be opened or written.
    public init(_ error: SealedFileError) {
        self.init(path: error.path, reason: error.description)
        sealedFile = error
    }

    /// The error for the data key of the file at `path` that could not be had.
    public init(_ error: KeyError, path: String) {
        self.init(path: path, reason: error.description)
        key = error
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
    /// Why the sealed file did not open, typed (nothing of it was decrypted), when that is the cause.
    public var sealedFile: SealedFileError? = nil
    /// Why its data key could not be had, typed, when that is the cause (the file is left where
    /// it is: it is whole, its key is not there).
    public var key: KeyError? = nil

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
