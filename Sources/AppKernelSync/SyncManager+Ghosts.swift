import AppKernelCore
import AppKernelStore
import AppKernelREST

/// `cleanResyncGhosts`: records a sync down wrote that the server no longer has (deleted, or no
/// longer matched by the target) leave the soup; records with local changes stay.
extension SyncManager {
    /// Removes the ghosts of a sync down (`cleanResyncGhosts(forName:onComplete:)`).
    /// - Returns: How many records left the soup(s).
    /// - Throws: ``SyncError``: `unknownSync`, `wrongSyncType` (a sync up), `syncAlreadyRunning`,
    ///   `soupNotFound`, `serverFailed` (nothing is removed then), `unsupportedTarget`.
    @discardableResult
    public func cleanResyncGhosts(forName name: String) async throws(SyncError) -> Int {
        guard let sync = try syncStatus(forName: name) else {
            throw SyncError(code: .unknownSync, reason: "no sync has this name", sync: name)
        }
        return try await cleanGhosts(sync)
    }

    /// ``cleanResyncGhosts(forName:)`` by id.
    @discardableResult
    public func cleanResyncGhosts(forId id: Int) async throws(SyncError) -> Int {
        guard let sync = try syncStatus(forId: id) else { throw SyncError(code: .unknownSync, reason: "no sync has this id", sync: "#\(id)") }
        return try await cleanGhosts(sync)
    }

    private func cleanGhosts(_ sync: SyncState) async throws(SyncError) -> Int {
        guard case .down(let target) = sync.target else {
            throw SyncError(code: .wrongSyncType, reason: "only a sync down has ghosts", sync: sync.label)
        }
        return try await whileRunning(sync) { () async throws(SyncError) -> Int in
            do throws(SyncError) {
                try requireSoups(of: sync)
                let fetcher = try fetcher(for: target, sync: sync)
                if target.queryType == .parentChildren, let parent = target.details.parent, let children = target.details.children {
                    return try await cleanParentChildrenGhosts(sync, target: target, parent: parent, children: children)
                }
                if target.queryType == .briefcase { return try await cleanBriefcaseGhosts(sync, target: target) }
                let local = try cleanRecords(inSoup: sync.soupName, idField: target.idFieldName, syncId: sync.id)
                guard !local.isEmpty, let remote = try await fetcher.remoteIds(local.map(\.id), self) else { return 0 }
                return try remove(local.filter { !remote.contains($0.id) }, fromSoup: sync.soupName)
            } catch {
                throw error.naming(sync: sync.label)
            }
        }
    }

    private func cleanParentChildrenGhosts(_ sync: SyncState, target: SyncDownTarget, parent: RelatedObjectInfo,
                                           children: RelatedObjectInfo) async throws(SyncError) -> Int {
        let shape = ParentChildren(target: target)
        let dirtyParents = try dirtyIds(target: target, soupName: parent.soupName)
        let localParents = try cleanRecords(inSoup: parent.soupName, idField: parent.idFieldName, syncId: sync.id).filter { !dirtyParents.contains($0.id) }
        let localChildren = try cleanRecords(inSoup: children.soupName, idField: children.idFieldName, syncId: sync.id)
        let remoteParents = try await SOQLFetcher.ids(shape.parentIdsQuery, idField: parent.idFieldName, self)
        var remoteChildren: Set<String> = []
        for tree in shape.flatten(try await SOQLFetcher.allRecords(shape.childIdsQuery, self)) {
            for child in tree[children.sobjectTypePlural ?? ""]?.arrayValue ?? [] {
                if let id = child[children.idFieldName]?.stringValue { remoteChildren.insert(id) }
            }
        }
        let parents = try remove(localParents.filter { !remoteParents.contains($0.id) }, fromSoup: parent.soupName)
        return parents + (try remove(localChildren.filter { !remoteChildren.contains($0.id) }, fromSoup: children.soupName))
    }

    /// BriefcaseSyncDownTarget cleanGhosts: each info's soup loses the clean records whose ids
    /// the briefcases no longer prime (every page read first; a rule error removes nothing).
    private func cleanBriefcaseGhosts(_ sync: SyncState, target: SyncDownTarget) async throws(SyncError) -> Int {
        let remote = try await BriefcaseFetcher.allIds(target, self)
        var removed = 0
        for info in target.details.briefcaseInfos {
            let local = try cleanRecords(inSoup: info.soupName, idField: info.idFieldName, syncId: sync.id)
            let primed = remote[info.sobjectType] ?? []
            removed += try remove(local.filter { !primed.contains($0.id) }, fromSoup: info.soupName)
        }
        return removed
    }

    /// The records of a soup without local changes (`__local__` false) — of this sync only when
    /// the soup indexes `__sync_id__`, as in the SDK.
    private func cleanRecords(inSoup soup: String, idField: String, syncId: Int) throws(SyncError) -> [(entry: Int, id: String)] {
        let bySync = try storeCall { try store.indexSpecs(forSoup: soup) }.contains { $0.path == MobileSync.syncIDField }
        return try values(of: "_soupEntryId", idField, MobileSync.syncIDField, inSoup: soup, local: false).compactMap { row in
            guard let entry = row[0].intValue, let id = row[1].stringValue else { return nil }
            if bySync, row.count > 2, row[2].intValue != syncId { return nil }
            return (entry, id)
        }
    }

    private func remove(_ records: [(entry: Int, id: String)], fromSoup soup: String) throws(SyncError) -> Int {
        guard !records.isEmpty else { return 0 }
        return try storeCall { try store.remove(records.map(\.entry), fromSoup: soup) }
    }
}
