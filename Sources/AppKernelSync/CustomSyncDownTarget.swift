public import AppKernelCore

/// An app's own sync-down target — what a Mobile SDK app writes as a subclass of
/// `SFSyncDownTarget` and names in `usersyncs.json`'s `iOSImpl`. Register its factory by that
/// class name (``SyncTargetRegistry/registerSyncDown(_:factory:)``); the factory gets the target's
/// JSON object, every key of it, as `initWithDict:` does.
///
/// ```swift
/// struct RecentAccountsTarget: CustomSyncDownTarget {
///     init(dict: [String: JSONValue]) {}
///     func startFetch(syncManager: SyncManager, maxTimeStamp: Int64) async throws -> [[String: JSONValue]] {
///         let request = syncManager.restClient.request(forQuery: "SELECT Id, Name, LastModifiedDate FROM Account ORDER BY LastModifiedDate DESC LIMIT 10", apiVersion: nil)
///         return try await syncManager.restClient.send(request: request).asJSON()["records"]?.arrayValue?.compactMap(\.objectValue) ?? []
///     }
/// }
/// ```
///
/// The manager writes each page into the sync's soup (by the target's `idFieldName`, `Id` unless
/// its JSON names another), with the sync's state, in one transaction, as for the SDK's targets;
/// `LEAVE_IF_CHANGED` leaves records with local changes alone. An error the target throws fails
/// the sync (a ``SyncError`` as it is; a REST error as `serverFailed`; any other as
/// `customTargetFailed`).
public protocol CustomSyncDownTarget: Sendable {
    /// The first page of records (`startFetch:maxTimeStamp:`); `maxTimeStamp` is the newest
    /// modification date of the last run (milliseconds; not positive: none).
    mutating func startFetch(syncManager: SyncManager, maxTimeStamp: Int64) async throws -> [[String: JSONValue]]
    /// The next page (`continueFetch:`), `nil` when done. Default: `nil` (one page).
    mutating func continueFetch(syncManager: SyncManager) async throws -> [[String: JSONValue]]?
    /// How many records the run fetches (`totalSize`); negative: the first page's count. Default: -1.
    var totalSize: Int { get }
    /// Which of `localIds` the server still has (`getRemoteIds:`, for ghost cleaning); `nil`:
    /// the target cannot tell, nothing is a ghost. Default: `nil`.
    func remoteIds(syncManager: SyncManager, localIds: [String]) async throws -> Set<String>?
    /// Whether records come newest last by modification date, so `maxTimeStamp` may advance
    /// page by page (`isSyncDownSortedByLatestModification`). Default: `false`.
    var isSortedByLatestModification: Bool { get }
}

extension CustomSyncDownTarget {
    /// One page: no more.
    public mutating func continueFetch(syncManager: SyncManager) async throws -> [[String: JSONValue]]? { nil }
    /// The first page's count.
    public var totalSize: Int { -1 }
    /// No ghost cleaning.
    public func remoteIds(syncManager: SyncManager, localIds: [String]) async throws -> Set<String>? { nil }
    /// Not sorted: `maxTimeStamp` moves at the run's end.
    public var isSortedByLatestModification: Bool { false }
}
