import AppKernelCore
import AppKernelStore

extension SyncManager {
    /// Registers a cache soup of the layout and metadata managers (indexed on `Id`, json1, as the
    /// SDK registers `sfdcLayouts` and `sfdcMetadata`) unless it exists.
    func registerCacheSoup(_ soupName: String) throws(SyncError) {
        let store = store
        try storeCall {
            if !store.soupExists(soupName) {
                try store.registerSoup(SoupSpec(name: soupName, indexes: [IndexSpec(path: "Id", type: .json1)]))
            }
        }
    }

    /// The cached entry `id` of `soupName` as `fetchMode` finds it: from the cache (cache only,
    /// cache first when cached) or fetched by a one-off sync down of `target` and read back.
    func fetchCached(_ id: String, inSoup soupName: String, fetchMode: FetchMode,
                     target: SyncDownTarget) async throws(SyncError) -> [String: JSONValue]? {
        if fetchMode != .serverFirst, let cached = try cachedEntry(id, inSoup: soupName) { return cached }
        if fetchMode == .cacheOnly { return nil }
        try await runOnce(target, soupName: soupName)
        return try cachedEntry(id, inSoup: soupName)
    }

    /// The entry of `soupName` whose `Id` is `id` (an exact query, the key bound), if any.
    private func cachedEntry(_ id: String, inSoup soupName: String) throws(SyncError) -> [String: JSONValue]? {
        let store = store
        return try storeCall {
            try store.query(.exact(soupName: soupName, path: "Id", matchKey: .string(id), pageSize: 1)).first?.objectValue
        }
    }

    /// Runs a one-off sync down of `target` into `soupName` (overwriting), then deletes its
    /// state, whether it succeeded or failed — how the layout and metadata managers fetch.
    private func runOnce(_ target: SyncDownTarget, soupName: String) async throws(SyncError) {
        let sync = try createSyncDown(target: target, soupName: soupName)
        do {
            try await reSync(id: sync.id)
        } catch {
            try? deleteSync(forId: sync.id)
            throw error
        }
        try deleteSync(forId: sync.id)
    }
}
