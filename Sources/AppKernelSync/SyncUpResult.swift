import AppKernelCore

/// What a sync up did: its final state, and each record's outcome.
///
/// A record the server refused stays dirty in its soup with the server's error in
/// `__last_error__` and is listed in ``failed``; the next sync up tries it again. A record left
/// alone because the server changed it since it was synced down (`LEAVE_IF_CHANGED`) stays dirty
/// and is listed in ``skipped``.
public struct SyncUpResult: Sendable, Hashable {
    /// The sync's state.
    public var state: SyncState
    /// Records created on the server: their new ids.
    public var created: [String] = []
    /// Records updated on the server: their ids.
    public var updated: [String] = []
    /// Records deleted (on the server, or only locally when they were created locally): their ids.
    public var deleted: [String] = []
    /// Records not sent because the server changed them since they were synced down: their soup
    /// entry ids.
    public var skipped: [Int] = []
    /// Records the server refused.
    public var failed: [SyncUpFailure] = []

    /// A result with nothing done yet.
    public init(state: SyncState) {
        self.state = state
    }
}

/// A record a sync up could not send, and the server's error.
public struct SyncUpFailure: Sendable, Hashable {
    /// What the sync up tried.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// A create (or an upsert on the external id).
        case create
        /// An update.
        case update
        /// A delete.
        case delete
    }

    /// The record's soup entry id.
    public var soupEntryId: Int
    /// The record's id (a local id for a record created locally).
    public var recordId: String?
    /// What was tried.
    public var action: Action
    /// The server's error as stored in `__last_error__` (its JSON text).
    public var lastError: String
    /// The server's message.
    public var message: String

    /// Creates a failure.
    public init(soupEntryId: Int, recordId: String?, action: Action, lastError: String, message: String) {
        self.soupEntryId = soupEntryId
        self.recordId = recordId
        self.action = action
        self.lastError = lastError
        self.message = message
    }
}
