/// Where ``LayoutSyncManager`` and ``MetadataSyncManager`` look first — the Mobile SDK's
/// `SFSDKFetchMode`.
public enum FetchMode: String, Sendable, Hashable, CaseIterable {
    /// The cached copy only; nil when there is none (no request is sent).
    case cacheOnly
    /// The cached copy; the server when there is none (then cached).
    case cacheFirst
    /// The server (the answer cached), then the cached copy is read back.
    case serverFirst
}
