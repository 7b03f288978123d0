public import AppKernelCore

/// A custom sync-up target that sends records a batch at a time — the Mobile SDK's
/// `SFAdvancedSyncUpTarget` (`syncUpRecords:…` with `maxBatchSize`). The manager hands it up to
/// ``maxBatchSize`` records with local changes (after the `LEAVE_IF_CHANGED` check), and writes
/// what it says happened to each, with the sync's state, in one transaction.
public protocol AdvancedSyncUpTarget: CustomSyncUpTarget {
    /// The most records one call takes (at least 1).
    var maxBatchSize: Int { get }
    /// Sends `records` (soup entries with their local flags) and says what happened to each, in
    /// the same order. `fieldlist` is the options' field list.
    func syncUpRecords(_ records: [[String: JSONValue]], fieldlist: [String]?, mergeMode: MergeMode,
                       syncManager: SyncManager) async throws -> [SyncUpOutcome]
}

/// What an ``AdvancedSyncUpTarget`` did with one record.
public enum SyncUpOutcome: Sendable, Hashable {
    /// Created on the server with this id (the entry gets it, and is clean).
    case created(id: String)
    /// Updated on the server (the entry is clean).
    case updated
    /// Deleted on the server, or locally created and deleted (the entry leaves the soup).
    case deleted
    /// Refused: the entry stays dirty, the message in `__last_error__`.
    case failed(message: String)
}
