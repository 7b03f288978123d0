import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Parent-children sync up (`SFParentChildrenSyncUpTarget`): one composite request per parent
/// with its changed children — the parent first (last when it is deleted), a created parent's
/// children pointing at it through `@{parentId.id}` — and the server ids written back into both
/// soups.
extension SyncManager {
    private struct Tree {
        var parent: RelatedObjectInfo
        var children: RelatedObjectInfo
        var relationship: RelationshipType

        init?(_ target: SyncUpTarget) {
            guard let parent = target.details.parent, let children = target.details.children else { return nil }
            self.parent = parent
            self.children = children
            relationship = target.details.relationshipType ?? .lookup
        }

        var parentIdField: String { children.parentIdFieldName ?? "" }
    }

    /// The entry ids of parents that changed or have a child that changed, in entry order.
    func dirtyParentEntryIds(target: SyncUpTarget) throws(SyncError) -> [Int] {
        guard let tree = Tree(target) else { return [] }
        var ids = Set(try values(of: "_soupEntryId", inSoup: tree.parent.soupName, local: true).compactMap { $0.first?.intValue })
        let parentIds = Set(try values(of: tree.parentIdField, inSoup: tree.children.soupName, local: true).compactMap { $0.first?.stringValue })
        for parentId in parentIds {
            let rows = try storeCall {
                try store.query(.exact(soupName: tree.parent.soupName, path: tree.parent.idFieldName, matchKey: .string(parentId),
                                       selectPaths: ["_soupEntryId"], pageSize: 1))
            }
            if let id = rows.first?[0]?.intValue { ids.insert(id) }
        }
        return ids.sorted()
    }

    /// A parent's children in their soup.
    private func children(of parent: [String: JSONValue], _ tree: Tree) throws(SyncError) -> [[String: JSONValue]] {
        guard let parentId = parent[tree.parent.idFieldName]?.stringValue else { return [] }
        return try storeCall {
            try store.query(.exact(soupName: tree.children.soupName, path: tree.parentIdField, matchKey: .string(parentId),
                                   orderPath: "_soupEntryId", pageSize: Int(Int32.max)))
        }.compactMap(\.objectValue)
    }

    /// For `LEAVE_IF_CHANGED`: whether each parent and every child of it is at least as new as the
    /// server's (one SOQL query with a subquery per parent).
    func treesAreNewerThanServer(_ parents: [[String: JSONValue]], target: SyncUpTarget, sync: SyncState) async throws(SyncError) -> [Int: Bool] {
        guard let tree = Tree(target) else { return [:] }
        var newer: [Int: Bool] = [:]
        for parent in parents {
            let entryId = parent["_soupEntryId"]?.intValue ?? 0
            guard !Self.flag(parent, MobileSync.locallyCreatedField), let parentId = parent[tree.parent.idFieldName]?.stringValue else {
                newer[entryId] = true
                continue
            }
            let parentDeleted = Self.flag(parent, MobileSync.locallyDeletedField)
            var local: [String: (date: Int64?, deleted: Bool)] = [parentId: (Self.date(parent[tree.parent.modificationDateFieldName]), parentDeleted)]
            for child in try children(of: parent, tree) {
                guard let id = child[tree.children.idFieldName]?.stringValue else { continue }
                local[id] = (Self.date(child[tree.children.modificationDateFieldName]),
                             Self.flag(child, MobileSync.locallyDeletedField) || (parentDeleted && tree.relationship == .masterDetail))
            }
            let soql = "SELECT \(tree.parent.idFieldName), \(tree.parent.modificationDateFieldName), (SELECT \(tree.children.idFieldName), "
                + "\(tree.children.modificationDateFieldName) FROM \(tree.children.sobjectTypePlural ?? "")) FROM \(tree.parent.sobjectType) "
                + "WHERE \(tree.parent.idFieldName) = '\(parentId)'"
            var remote: [String: Int64] = [:]
            if let row = try await send(restClient.request(forQuery: soql, apiVersion: nil))["records"]?[0] {
                remote[parentId] = Self.date(row[tree.parent.modificationDateFieldName])
                for child in row[tree.children.sobjectTypePlural ?? ""]?["records"]?.arrayValue ?? [] {
                    if let id = child[tree.children.idFieldName]?.stringValue { remote[id] = Self.date(child[tree.children.modificationDateFieldName]) }
                }
            }
            newer[entryId] = local.allSatisfy { id, mine in
                let theirs = remote[id]
                return (mine.date != nil && theirs != nil && mine.date! >= theirs!) || (mine.deleted && theirs == nil) || mine.date == nil
            }
        }
        return newer
    }

    private static func date(_ value: JSONValue?) -> Int64? { value?.stringValue.flatMap(SalesforceDateTime.millis(from:)) }

    /// Syncs up one parent and its children, rerunning once when the server no longer has a
    /// record that `OVERWRITE` creates again.
    func syncUpTree(_ parent: [String: JSONValue], target: SyncUpTarget, sync: SyncState, result: inout SyncUpResult,
                    writes: inout [LocalWrite]) async throws(SyncError) {
        guard let tree = Tree(target) else { return }
        let deleted = Self.flag(parent, MobileSync.locallyDeletedField), created = Self.flag(parent, MobileSync.locallyCreatedField)
        // Deleting a master deletes its details on the server: nothing to send for them.
        let children = tree.relationship == .masterDetail && deleted && !created ? [] : try self.children(of: parent, tree)
        var parentRecord = parent
        if parentRecord[tree.parent.idFieldName]?.stringValue == nil { parentRecord[tree.parent.idFieldName] = .string(MobileSync.createLocalID()) }
        try await syncUpTree(parentRecord, children: children, tree: tree, target: target, sync: sync, isReRun: false, result: &result, writes: &writes)
    }

    private func syncUpTree(_ parent: [String: JSONValue], children: [[String: JSONValue]], tree: Tree, target: SyncUpTarget, sync: SyncState,
                            isReRun: Bool, result: inout SyncUpResult, writes: inout [LocalWrite]) async throws(SyncError) {
        var parent = parent, children = children
        let parentId = parent[tree.parent.idFieldName]?.stringValue ?? ""
        let created = Self.flag(parent, MobileSync.locallyCreatedField), deleted = Self.flag(parent, MobileSync.locallyDeletedField)
        var requests: [RecordRequest] = []
        let parentRequest = try treeRequest(for: parent, info: tree.parent, createFieldlist: target.createFieldlist ?? sync.options.fieldlist,
                                            updateFieldlist: target.updateFieldlist ?? sync.options.fieldlist, parentId: nil, sync: sync)
        if let parentRequest, !deleted { requests.append(parentRequest) }
        for index in children.indices {
            if created {
                // The parent gets a server id: its children must be written again to point at it.
                children[index][MobileSync.localField] = true
                children[index][MobileSync.locallyUpdatedField] = true
            }
            if children[index][tree.children.idFieldName]?.stringValue == nil {
                children[index][tree.children.idFieldName] = .string(MobileSync.createLocalID())
            }
            let reference = created ? "@{\(parentId).id}" : parentId
            if let request = try treeRequest(for: children[index], info: tree.children, createFieldlist: target.details.childrenCreateFieldlist,
                                             updateFieldlist: target.details.childrenUpdateFieldlist, parentId: deleted ? nil : reference, sync: sync) {
                requests.append(request)
            }
        }
        if let parentRequest, deleted { requests.append(parentRequest) }
        let responses = requests.isEmpty ? [:] : try await sendComposite(requests)
        let serverIds = responses.compactMapValues { $0.success ? $0.objectId : nil }
        var rerun = false
        if Self.flag(parent, MobileSync.localField) {
            let response = responses[parentId]
            if deleted {
                if created || response?.success == true || response?.recordDoesNotExist == true {
                    if tree.relationship == .masterDetail {
                        for child in try self.children(of: parent, tree) {
                            writes.append(.remove(child["_soupEntryId"]?.intValue ?? 0, soup: tree.children.soupName))
                        }
                    }
                    writes.append(.remove(parent["_soupEntryId"]?.intValue ?? 0, soup: tree.parent.soupName))
                    result.deleted.append(parentId)
                } else {
                    keep(parent, response, action: .delete, soup: tree.parent.soupName, idFieldName: tree.parent.idFieldName, result: &result, writes: &writes)
                }
            } else if let response, response.success {
                if let serverId = serverIds[parentId] { parent[tree.parent.idFieldName] = .string(serverId) }
                writes.append(.save(Self.cleaned(parent, syncId: nil), soup: tree.parent.soupName))
                if created { result.created.append(parent[tree.parent.idFieldName]?.stringValue ?? "") } else { result.updated.append(parentId) }
            } else if response?.recordDoesNotExist == true {
                if sync.mergeMode == .overwrite {
                    parent[MobileSync.localField] = true
                    parent[MobileSync.locallyCreatedField] = true
                    for index in children.indices {
                        children[index][MobileSync.localField] = true
                        children[index][tree.relationship == .masterDetail ? MobileSync.locallyCreatedField : MobileSync.locallyUpdatedField] = true
                    }
                    rerun = true
                }
            } else {
                keep(parent, response, action: created ? .create : .update, soup: tree.parent.soupName, idFieldName: tree.parent.idFieldName,
                     result: &result, writes: &writes)
            }
        }
        for index in children.indices where Self.flag(children[index], MobileSync.localField) || created {
            var child = children[index]
            let childId = child[tree.children.idFieldName]?.stringValue ?? ""
            let response = responses[childId]
            let childCreated = Self.flag(child, MobileSync.locallyCreatedField)
            if Self.flag(child, MobileSync.locallyDeletedField) {
                if childCreated || response?.success == true || response?.recordDoesNotExist == true {
                    writes.append(.remove(child["_soupEntryId"]?.intValue ?? 0, soup: tree.children.soupName))
                    result.deleted.append(childId)
                } else {
                    keep(child, response, action: .delete, soup: tree.children.soupName, idFieldName: tree.children.idFieldName, result: &result, writes: &writes)
                }
            } else if let response, response.success {
                if let serverId = serverIds[childId] { child[tree.children.idFieldName] = .string(serverId) }
                if let parentRef = child[tree.parentIdField]?.stringValue, let serverId = serverIds[parentRef] {
                    child[tree.parentIdField] = .string(serverId)
                }
                writes.append(.save(Self.cleaned(child, syncId: nil), soup: tree.children.soupName))
                if childCreated { result.created.append(child[tree.children.idFieldName]?.stringValue ?? "") } else { result.updated.append(childId) }
            } else if response?.recordDoesNotExist == true, sync.mergeMode == .overwrite {
                children[index][MobileSync.localField] = true
                children[index][MobileSync.locallyCreatedField] = true
                rerun = true
            } else if response?.relatedRecordDoesNotExist == true, sync.mergeMode == .overwrite {
                parent[MobileSync.localField] = true
                parent[MobileSync.locallyCreatedField] = true
                rerun = true
            } else {
                keep(child, response, action: childCreated ? .create : .update, soup: tree.children.soupName, idFieldName: tree.children.idFieldName,
                     result: &result, writes: &writes)
            }
        }
        if rerun, !isReRun {
            // The rerun's writes come after this pass's and win.
            try await syncUpTree(parent, children: children, tree: tree, target: target, sync: sync, isReRun: true, result: &result, writes: &writes)
        }
    }

    /// A parent's or child's request (`buildRequestForRecord`); a child's parent-id field is set
    /// to `parentId` (`@{…}` when the parent is created in the same request).
    private func treeRequest(for record: [String: JSONValue], info: RelatedObjectInfo, createFieldlist: [String]?, updateFieldlist: [String]?,
                             parentId: String?, sync: SyncState) throws(SyncError) -> RecordRequest? {
        guard Self.flag(record, MobileSync.localField) else { return nil }
        let id = record[info.idFieldName]?.stringValue ?? ""
        let created = Self.flag(record, MobileSync.locallyCreatedField)
        if Self.flag(record, MobileSync.locallyDeletedField) {
            return created ? nil : RecordRequest(kind: .delete, objectType: info.sobjectType, objectId: id, referenceId: id)
        }
        var fields: [String: JSONValue] = [:]
        for field in (created ? createFieldlist : updateFieldlist) ?? [] where field != info.idFieldName && field != info.modificationDateFieldName {
            if let value = record[field] { fields[field] = value }
        }
        if let parentId, let field = info.parentIdFieldName { fields[field] = .string(parentId) }
        guard created else { return RecordRequest(kind: .update, objectType: info.sobjectType, fields: fields, objectId: id, referenceId: id) }
        if let field = info.externalIdFieldName, let external = record[field]?.stringValue, !MobileSync.isLocalID(external) {
            return RecordRequest(kind: .upsert, objectType: info.sobjectType, fields: fields.filter { $0.key != field }, externalId: external,
                                 externalIdFieldName: field, referenceId: id)
        }
        return RecordRequest(kind: .create, objectType: info.sobjectType, fields: fields, referenceId: id)
    }
}
