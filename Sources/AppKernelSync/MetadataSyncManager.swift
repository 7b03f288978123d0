import AppKernelCore
public import AppKernelStore

/// Fetches and caches objects' describes — the Mobile SDK's `SFMetadataSyncManager`.
///
/// Describes are kept in the soup `sfdcMetadata` (indexed on `Id`, json1, as the SDK registers
/// it), one entry an object: the describe's answer with `Id` set to the object's name. A fetch
/// from the server is a sync down with a metadata target (``SyncDownTarget/metadata(objectType:)``)
/// into that soup, then the entry is read back.
///
/// ```swift
/// let metadata = try MetadataSyncManager(syncManager: syncs)
/// let account = try await metadata.fetchMetadata(forObject: "Account", fetchMode: .cacheFirst)
/// ```
///
/// Unlike the SDK, whose completion block gets nil when the sync fails, a failure throws the
/// sync's ``SyncError``; the one-off sync's state is deleted once it has run.
public final class MetadataSyncManager: Sendable {
    /// The soup describes are cached in (`sfdcMetadata`).
    public static let soupName = "sfdcMetadata"
    /// The manager whose syncs fetch the describes.
    public let syncManager: SyncManager
    /// The store the describes are cached in (the sync manager's).
    public var store: SmartStore { syncManager.store }

    /// Creates a manager over a sync manager's store, registering `sfdcMetadata` if it does not
    /// exist.
    /// - Throws: ``SyncError`` `storeFailed` when the soup cannot be registered.
    public init(syncManager: SyncManager) throws(SyncError) {
        self.syncManager = syncManager
        try syncManager.registerCacheSoup(Self.soupName)
    }

    /// An object's describe (`fetchMetadataForObject:mode:completionBlock:`).
    /// - Parameters:
    ///   - objectType: The object (`Account`).
    ///   - fetchMode: Where to look first.
    /// - Returns: The describe; nil when `cacheOnly` finds none cached.
    /// - Throws: ``SyncError`` from the sync that fetched it (`serverFailed` naming the answer),
    ///   or `storeFailed` reading the cache.
    public func fetchMetadata(forObject objectType: String, fetchMode: FetchMode) async throws(SyncError) -> Metadata? {
        try await syncManager.fetchCached(objectType, inSoup: Self.soupName, fetchMode: fetchMode, target: .metadata(objectType: objectType))
            .map(Metadata.init(json:))
    }
}
