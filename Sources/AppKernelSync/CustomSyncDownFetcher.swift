import AppKernelCore

/// A custom target's fetcher: the app's ``CustomSyncDownTarget`` made by the manager's registry.
struct CustomSyncDownFetcher: SyncDownFetcher {
    var target: any CustomSyncDownTarget
    let sync: String
    private(set) var totalSize = 0

    init(target: any CustomSyncDownTarget, sync: String) {
        self.target = target
        self.sync = sync
    }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        do {
            let records = try await target.startFetch(syncManager: manager, maxTimeStamp: maxTimeStamp)
            totalSize = target.totalSize >= 0 ? target.totalSize : records.count
            return records
        } catch {
            throw SyncError.custom(error, sync: sync, doing: "its startFetch")
        }
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        do { return try await target.continueFetch(syncManager: manager) } catch { throw SyncError.custom(error, sync: sync, doing: "its continueFetch") }
    }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        do { return try await target.remoteIds(syncManager: manager, localIds: localIds) } catch {
            throw SyncError.custom(error, sync: sync, doing: "its remoteIds")
        }
    }
}
