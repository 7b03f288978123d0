import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Sync down (`SFSyncDownTask`): fetch page by page; with `LEAVE_IF_CHANGED`, leave records with
/// local changes alone; write each page and the sync's state in one transaction.
extension SyncManager {
    /// The fetcher of a target.
    /// - Throws: ``SyncError`` `unsupportedTarget` for a custom target no registry names.
    func fetcher(for target: SyncDownTarget, sync: SyncState) throws(SyncError) -> any SyncDownFetcher {
        switch target.queryType {
        case .soql:
            return SOQLFetcher(target: target, query: target.soqlToRun(maxTimeStamp:))
        case .parentChildren:
            return SOQLFetcher(target: target, query: { ParentChildren(target: target).query(maxTimeStamp: $0) },
                               reshape: ParentChildren(target: target).flatten)
        case .sosl:
            return SOSLFetcher(target: target)
        case .mru:
            return MRUFetcher(target: target)
        case .refresh:
            return RefreshFetcher(target: target, soupName: sync.soupName)
        case .layout, .metadata:
            return SingleRecordFetcher(target: target)
        case .briefcase:
            return BriefcaseFetcher(target: target)
        case .custom:
            let custom = try targets.makeSyncDown(target.details, json: target.json.objectValue ?? [:], sync: sync.label)
            return CustomSyncDownFetcher(target: custom, sync: sync.label)
        }
    }

    /// Runs a sync down, saving its state as it goes (the caller saves the end).
    func runSyncDown(_ sync: inout SyncState, target: SyncDownTarget, onUpdate: SyncUpdateBlock?) async throws(SyncError) {
        var fetcher = try fetcher(for: target, sync: sync)
        let sorted = target.isSortedByLatestModification || (fetcher as? CustomSyncDownFetcher)?.target.isSortedByLatestModification == true
        let skipped = sync.mergeMode == .leaveIfChanged ? try dirtyIds(target: target, soupName: sync.soupName) : []
        var newest = sync.maxTimeStamp
        var fetched = 0
        var page = try await fetcher.start(maxTimeStamp: sync.maxTimeStamp, self)
        sync.totalSize = fetcher.totalSize
        sync.progress = Self.progress(0, of: sync.totalSize)
        try save(sync)
        onUpdate?(sync)
        while let records = page.take() {   // the page variable lets go: a page is freed before the next is fetched
            let pageNewest = try latestModification(of: records, target: target, sync: sync)
            newest = max(newest, pageNewest)
            fetched += records.count
            if sorted || fetched == sync.totalSize { sync.maxTimeStamp = newest }
            sync.progress = Self.progress(fetched, of: sync.totalSize)
            let kept = skipped.isEmpty ? records : records.filter { record in
                guard let id = record[target.idFieldName]?.stringValue else { return true }
                return !skipped.contains(id)
            }
            let state = sync
            try transaction { transaction in
                try self.save(kept, target: target, sync: state, in: transaction)
                try transaction.upsert([state.json], intoSoup: MobileSync.syncsSoupName)
            }
            onUpdate?(sync)
            try checkNotStopping(sync)   // SFSyncDownTask: a stop requested ends the run after a whole page
            page = try await fetcher.next(self)
        }
        sync.maxTimeStamp = newest
    }

    /// Percent done, as the SDK counts it (100 when there is nothing to do).
    static func progress(_ done: Int, of total: Int) -> Int {
        total <= 0 ? 100 : min(done * 100 / total, 100)
    }

    /// The newest modification date of a page (milliseconds; `-1` when none): parents and
    /// children for a parent-children target.
    /// - Throws: ``SyncError`` `missingModificationDate` when the target selects the field and a
    ///   record lacks it.
    func latestModification(of records: [[String: JSONValue]], target: SyncDownTarget, sync: SyncState) throws(SyncError) -> Int64 {
        let required: Bool = switch target.queryType {
        case .soql, .parentChildren: true
        case .refresh: target.details.fieldlist?.contains(target.modificationDateFieldName) ?? false
        default: false
        }
        func newest(_ records: [[String: JSONValue]], field: String, idField: String, soup: String) throws(SyncError) -> Int64 {
            var newest: Int64 = -1
            for record in records {
                guard let text = record[field]?.stringValue, let millis = SalesforceDateTime.millis(from: text) else {
                    guard !required else {
                        throw SyncError(code: .missingModificationDate,
                                        reason: "the server's record \(record[idField]?.stringValue ?? "(no id)") has no \(field): the sync can't know where to resume",
                                        sync: sync.label, soup: soup, path: field)
                    }
                    continue
                }
                newest = max(newest, millis)
            }
            return newest
        }
        var result = try newest(records, field: target.modificationDateFieldName, idField: target.idFieldName,
                                soup: target.details.parent?.soupName ?? sync.soupName)
        if target.queryType == .parentChildren, let children = target.details.children {
            let plural = children.sobjectTypePlural ?? ""
            for record in records {
                let kids = record[plural]?.arrayValue?.compactMap(\.objectValue) ?? []
                result = max(result, try newest(kids, field: children.modificationDateFieldName, idField: children.idFieldName, soup: children.soupName))
            }
        }
        return result
    }

    /// Writes server records into their soup: local-change flags cleared, `__last_error__`
    /// removed, `__sync_id__` set; matched to stored entries by the id field.
    func save(_ records: [[String: JSONValue]], target: SyncDownTarget, sync: SyncState, in transaction: borrowing StoreTransaction) throws {
        guard !records.isEmpty else { return }
        if target.queryType == .parentChildren {
            let (parents, children) = ParentChildren(target: target).split(records)
            if let parent = target.details.parent, let child = target.details.children {
                try transaction.upsert(parents.map { Self.cleaned($0, syncId: sync.id) }, intoSoup: parent.soupName, externalIdPath: parent.idFieldName)
                if !children.isEmpty {
                    try transaction.upsert(children.map { Self.cleaned($0, syncId: sync.id) }, intoSoup: child.soupName, externalIdPath: child.idFieldName)
                }
            }
            return
        }
        if target.queryType == .briefcase {
            // BriefcaseSyncDownTarget cleanAndSaveRecordsToLocalStore: each record into its type's soup.
            for info in target.details.briefcaseInfos {
                let mine = records.filter { $0["attributes"]?["type"]?.stringValue == info.sobjectType }
                guard !mine.isEmpty else { continue }
                try transaction.upsert(mine.map { Self.cleaned($0, syncId: sync.id) }, intoSoup: info.soupName, externalIdPath: info.idFieldName)
            }
            return
        }
        try transaction.upsert(records.map { Self.cleaned($0, syncId: sync.id) }, intoSoup: sync.soupName, externalIdPath: target.idFieldName)
    }

    /// A record as a sync writes it (`cleanRecord` and `addSyncId`).
    static func cleaned(_ record: [String: JSONValue], syncId: Int?) -> [String: JSONValue] {
        var record = record
        for flag in [MobileSync.localField, MobileSync.locallyCreatedField, MobileSync.locallyUpdatedField, MobileSync.locallyDeletedField] {
            record[flag] = false
        }
        record[MobileSync.lastErrorField] = nil
        if let syncId { record[MobileSync.syncIDField] = .int(syncId) }
        return record
    }

    /// The ids of records with local changes (`getIdsToSkip`): a `LEAVE_IF_CHANGED` sync down
    /// leaves them alone. For a parent-children target, the parents that changed or have a
    /// child that changed.
    func dirtyIds(target: SyncDownTarget, soupName: String) throws(SyncError) -> Set<String> {
        if target.queryType == .briefcase {   // BriefcaseSyncDownTarget getIdsToSkip: every info's soup
            var ids: Set<String> = []
            for info in target.details.briefcaseInfos {
                ids.formUnion(try values(of: info.idFieldName, inSoup: info.soupName, local: true).compactMap { $0[0].stringValue })
            }
            return ids
        }
        guard target.queryType == .parentChildren, let parent = target.details.parent, let children = target.details.children else {
            return Set(try values(of: target.idFieldName, inSoup: soupName, local: true).compactMap { $0[0].stringValue })
        }
        var ids = Set(try values(of: parent.idFieldName, inSoup: parent.soupName, local: true).compactMap { $0[0].stringValue })
        ids.formUnion(try values(of: children.parentIdFieldName ?? "", inSoup: children.soupName, local: true).compactMap { $0[0].stringValue })
        return ids
    }

    /// The values at `paths` of every entry whose `__local__` is `local`, in entry order, a page at a time.
    func values(of paths: String..., inSoup soup: String, local: Bool) throws(SyncError) -> [[JSONValue]] {
        let spec = QuerySpec.exact(soupName: soup, path: MobileSync.localField, matchKey: .bool(local), selectPaths: paths,
                                   orderPath: "_soupEntryId", pageSize: MobileSync.pageSize)
        var rows: [[JSONValue]] = []
        for pageIndex in 0... {
            let page = try storeCall { try store.query(spec, pageIndex: pageIndex) }
            rows += page.map { $0.arrayValue ?? [$0] }
            if page.count < MobileSync.pageSize { break }
        }
        return rows
    }
}

/// A parent-children target's SOQL and records (`SFParentChildrenSyncDownTarget`).
struct ParentChildren {
    let target: SyncDownTarget

    private var parent: RelatedObjectInfo { target.details.parent ?? RelatedObjectInfo(sobjectType: "", soupName: "") }
    private var children: RelatedObjectInfo { target.details.children ?? RelatedObjectInfo(sobjectType: "", soupName: "") }
    private var plural: String { children.sobjectTypePlural ?? "" }

    /// `SELECT <parent fields>, Id, LastModifiedDate, (SELECT <children fields>, Id,
    /// LastModifiedDate FROM <Children> [WHERE LastModifiedDate > t]) FROM <Parent> [WHERE
    /// LastModifiedDate > t AND <filter>] ORDER BY LastModifiedDate`. A resync fetches the
    /// parents changed since `t` and their children changed since `t` (SOQL can't ask for
    /// parents whose children changed).
    func query(maxTimeStamp: Int64) -> String {
        var childrenWhere: [String] = [], parentWhere: [String] = []
        if maxTimeStamp > 0 {
            let since = SalesforceDateTime.string(fromMillis: maxTimeStamp)
            childrenWhere.append("\(children.modificationDateFieldName) > \(since)")
            parentWhere.append("\(parent.modificationDateFieldName) > \(since)")
        }
        if let filter = target.details.parentSoqlFilter, !filter.trimmingWhitespace.isEmpty { parentWhere.append(filter) }
        var childFields = target.details.childrenFieldlist ?? []
        for field in [children.idFieldName, children.modificationDateFieldName] where !childFields.contains(field) { childFields.append(field) }
        var parentFields = target.details.parentFieldlist ?? []
        for field in [parent.idFieldName, parent.modificationDateFieldName] where !parentFields.contains(field) { parentFields.append(field) }
        let nested = "SELECT \(childFields.joined(separator: ", ")) FROM \(plural)" + Self.clause("WHERE", childrenWhere)
        return "SELECT \(parentFields.joined(separator: ", ")), (\(nested)) FROM \(parent.sobjectType)" + Self.clause("WHERE", parentWhere)
            + " ORDER BY \(parent.modificationDateFieldName)"
    }

    /// The parents' ids query (ghosts): `SELECT Id FROM <Parent> [WHERE <filter>]`.
    var parentIdsQuery: String {
        "SELECT \(parent.idFieldName) FROM \(parent.sobjectType)" + filterClause
    }

    /// The children's ids query (ghosts): `SELECT Id, (SELECT Id FROM <Children>) FROM <Parent> [WHERE <filter>]`.
    var childIdsQuery: String {
        "SELECT \(parent.idFieldName), (SELECT \(children.idFieldName) FROM \(plural)) FROM \(parent.sobjectType)" + filterClause
    }

    private var filterClause: String {
        let filter = target.details.parentSoqlFilter?.trimmingWhitespace ?? ""
        return filter.isEmpty ? "" : " WHERE \(filter)"
    }

    private static func clause(_ keyword: String, _ predicates: [String]) -> String {
        predicates.isEmpty ? "" : " \(keyword) " + predicates.joined(separator: " AND ")
    }

    /// Records with their subquery result replaced by its records (`[]` when there are none).
    func flatten(_ records: [[String: JSONValue]]) -> [[String: JSONValue]] {
        records.map { record in
            var record = record
            record[plural] = .array(record[plural]?["records"]?.arrayValue ?? [])
            return record
        }
    }

    /// Parents without their children, and the children with their parent's id.
    func split(_ trees: [[String: JSONValue]]) -> (parents: [[String: JSONValue]], children: [[String: JSONValue]]) {
        var parents: [[String: JSONValue]] = [], kids: [[String: JSONValue]] = []
        for tree in trees {
            var parentRecord = tree
            let childRecords = parentRecord.removeValue(forKey: plural)?.arrayValue?.compactMap(\.objectValue) ?? []
            parents.append(parentRecord)
            for var child in childRecords {
                if let field = children.parentIdFieldName { child[field] = parentRecord[parent.idFieldName] ?? .null }
                kids.append(child)
            }
        }
        return (parents, kids)
    }
}
