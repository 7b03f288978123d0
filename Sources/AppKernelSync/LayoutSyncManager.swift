import AppKernelCore
public import AppKernelStore

/// Fetches and caches objects' record layouts — the Mobile SDK's `SFLayoutSyncManager`.
///
/// Layouts are kept in the soup `sfdcLayouts` (indexed on `Id`, json1, as the SDK registers it),
/// one entry a layout: the UI API's answer with an `Id` of
/// `<object>-<formFactor>-<layoutType>-<mode>-<recordTypeId>` (an absent part written `(null)`,
/// as the SDK formats it). A fetch from the server is a sync down with a layout target
/// (``SyncDownTarget/layout(objectAPIName:formFactor:layoutType:mode:recordTypeId:)``) into
/// that soup, then the entry is read back.
///
/// ```swift
/// let layouts = try LayoutSyncManager(syncManager: syncs)
/// let layout = try await layouts.fetchLayout(forObjectAPIName: "Account", formFactor: "Medium", layoutType: "Compact",
///                                            mode: "Edit", fetchMode: .serverFirst)
/// ```
///
/// Unlike the SDK, whose completion block is never called when the layout's sync fails, a
/// failure throws the sync's ``SyncError``; and the one-off sync's state is deleted once it has
/// run (the SDK leaves one in `syncs_soup` per fetch).
public final class LayoutSyncManager: Sendable {
    /// The soup layouts are cached in (`sfdcLayouts`).
    public static let soupName = "sfdcLayouts"
    /// The manager whose syncs fetch the layouts.
    public let syncManager: SyncManager
    /// The store the layouts are cached in (the sync manager's).
    public var store: SmartStore { syncManager.store }

    /// Creates a manager over a sync manager's store, registering `sfdcLayouts` if it does not
    /// exist.
    /// - Throws: ``SyncError`` `storeFailed` when the soup cannot be registered.
    public init(syncManager: SyncManager) throws(SyncError) {
        self.syncManager = syncManager
        try syncManager.registerCacheSoup(Self.soupName)
    }

    /// An object's layout (`fetchLayoutForObjectAPIName:formFactor:layoutType:mode:recordTypeId:syncMode:completionBlock:`).
    /// - Parameters:
    ///   - objectAPIName: The object (`Account`).
    ///   - formFactor: `Large`, `Medium` or `Small` (the server's default when nil).
    ///   - layoutType: `Full` or `Compact` (the server's default, `Full`, when nil).
    ///   - mode: `Create`, `Edit` or `View` (the server's default, `View`, when nil).
    ///   - recordTypeId: The record type (the default one when nil).
    ///   - fetchMode: Where to look first.
    /// - Returns: The layout; nil when `cacheOnly` finds none cached.
    /// - Throws: ``SyncError`` from the sync that fetched it (`serverFailed` naming the answer),
    ///   or `storeFailed` reading the cache.
    public func fetchLayout(forObjectAPIName objectAPIName: String, formFactor: String? = nil, layoutType: String? = nil, mode: String? = nil,
                            recordTypeId: String? = nil, fetchMode: FetchMode) async throws(SyncError) -> Layout? {
        let id = [objectAPIName, formFactor, layoutType, mode, recordTypeId].map { $0 ?? "(null)" }.joined(separator: "-")
        let target = SyncDownTarget.layout(objectAPIName: objectAPIName, formFactor: formFactor, layoutType: layoutType, mode: mode,
                                           recordTypeId: recordTypeId)
        return try await syncManager.fetchCached(id, inSoup: Self.soupName, fetchMode: fetchMode, target: target).map(Layout.init(json:))
    }
}
