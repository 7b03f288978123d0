import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Sync up (`SFSyncUpTask`, `SFAdvancedSyncUpTask`): the soup's dirty records, in entry order, a
/// request each (`singleRecord`) or a batch at a time (`batch`: composite, `collection`: sObject
/// collections). Each record's outcome and the sync's progress are written together.
extension SyncManager {
    /// A write to make in a soup once a record or batch is answered.
    enum LocalWrite {
        /// Upsert the entry (it has its `_soupEntryId`).
        case save([String: JSONValue], soup: String)
        /// Remove the entry.
        case remove(Int, soup: String)
    }

    /// Runs a sync up, saving its state as it goes (the caller saves the end).
    func runSyncUp(_ sync: inout SyncState, target: SyncUpTarget, onUpdate: SyncUpdateBlock?) async throws(SyncError) -> SyncUpResult {
        let custom = target.kind == .custom ? try targets.makeSyncUp(target.details, json: target.json.objectValue ?? [:], sync: sync.label) : nil
        let batchSize = (custom as? any AdvancedSyncUpTarget).map { max($0.maxBatchSize, 1) } ?? target.maxBatchSize
        let ids = target.kind == .parentChildren ? try dirtyParentEntryIds(target: target) : try dirtyEntryIds(inSoup: sync.soupName)
        sync.totalSize = ids.count
        sync.progress = Self.progress(0, of: ids.count)
        try save(sync)
        onUpdate?(sync)
        var result = SyncUpResult(state: sync)
        var done = 0
        for start in stride(from: 0, to: ids.count, by: batchSize) {
            let chunk = Array(ids[start..<min(start + batchSize, ids.count)])
            let records = try storeCall { try store.retrieve(chunk, fromSoup: sync.soupName) }
            let newer = sync.mergeMode == .overwrite ? [:]
                : target.kind == .parentChildren ? try await treesAreNewerThanServer(records, target: target, sync: sync)
                : try await areNewerThanServer(records, target: target, sync: sync)
            var toSend: [[String: JSONValue]] = []
            for record in records {
                let entryId = record["_soupEntryId"]?.intValue ?? 0
                if sync.mergeMode == .leaveIfChanged, newer[entryId] == false {
                    result.skipped.append(entryId)
                } else {
                    toSend.append(record)
                }
            }
            var writes: [LocalWrite] = []
            if let custom {
                try await syncUpCustom(toSend, custom, target: target, sync: sync, result: &result, writes: &writes)
            } else if target.kind == .singleRecord {
                for record in toSend { try await syncUpOne(record, target: target, sync: sync, result: &result, writes: &writes) }
            } else if target.kind == .parentChildren {
                for record in toSend { try await syncUpTree(record, target: target, sync: sync, result: &result, writes: &writes) }
            } else {
                try await syncUpBatch(toSend, target: target, sync: sync, isReRun: false, result: &result, writes: &writes)
            }
            done += chunk.count
            sync.progress = Self.progress(done, of: ids.count)
            let state = sync
            try transaction { transaction in
                for write in writes {
                    switch write {
                    case .save(let entry, let soup): try transaction.upsert([entry], intoSoup: soup)
                    case .remove(let id, let soup): try transaction.remove([id], fromSoup: soup)
                    }
                }
                try transaction.upsert([state.json], intoSoup: MobileSync.syncsSoupName)
            }
            onUpdate?(sync)
            if done < ids.count { try checkNotStopping(sync) }   // SFSyncUpTask shouldStop: after a whole batch
        }
        result.state = sync
        return result
    }

    /// The soup entry ids of records with local changes, in entry order.
    func dirtyEntryIds(inSoup soup: String) throws(SyncError) -> [Int] {
        try values(of: "_soupEntryId", inSoup: soup, local: true).compactMap { $0.first?.intValue }
    }

    // MARK: One request a record

    private func syncUpOne(_ record: [String: JSONValue], target: SyncUpTarget, sync: SyncState, result: inout SyncUpResult,
                           writes: inout [LocalWrite]) async throws(SyncError) {
        var record = record
        let entryId = record["_soupEntryId"]?.intValue ?? 0
        let id = record[target.idFieldName]?.stringValue
        let created = Self.flag(record, MobileSync.locallyCreatedField)
        if Self.flag(record, MobileSync.locallyDeletedField) {
            if created {
                writes.append(.remove(entryId, soup: sync.soupName))
                result.deleted.append(id ?? "")
                return
            }
            let type = try objectType(of: record, sync: sync)
            do throws(SyncError) {
                _ = try await send(restClient.requestForDelete(withObjectType: type, objectId: id ?? "", apiVersion: nil))
                writes.append(.remove(entryId, soup: sync.soupName))
                result.deleted.append(id ?? "")
            } catch {
                if Self.status(of: error) == 404 {
                    writes.append(.remove(entryId, soup: sync.soupName))
                    result.deleted.append(id ?? "")
                } else {
                    try keep(record, error, action: .delete, target: target, soup: sync.soupName, result: &result, writes: &writes)
                }
            }
            return
        }
        if created {
            try await createOne(&record, target: target, sync: sync, result: &result, writes: &writes)
            return
        }
        guard Self.flag(record, MobileSync.locallyUpdatedField) else { return }
        let type = try objectType(of: record, sync: sync)
        let fields = Self.fields(of: record, target.updateFieldlist ?? sync.options.fieldlist ?? [], target: target)
        do throws(SyncError) {
            _ = try await send(restClient.requestForUpdate(withObjectType: type, objectId: id ?? "", fields: fields, apiVersion: nil))
            writes.append(.save(Self.cleaned(record, syncId: nil), soup: sync.soupName))
            result.updated.append(id ?? "")
        } catch {
            guard Self.status(of: error) == 404 else {
                try keep(record, error, action: .update, target: target, soup: sync.soupName, result: &result, writes: &writes)
                return
            }
            // Deleted on the server: OVERWRITE creates it again; LEAVE_IF_CHANGED leaves it.
            if sync.mergeMode == .overwrite { try await createOne(&record, target: target, sync: sync, result: &result, writes: &writes) }
        }
    }

    private func createOne(_ record: inout [String: JSONValue], target: SyncUpTarget, sync: SyncState, result: inout SyncUpResult,
                           writes: inout [LocalWrite]) async throws(SyncError) {
        let type = try objectType(of: record, sync: sync)
        let fields = Self.fields(of: record, target.createFieldlist ?? sync.options.fieldlist ?? [], target: target)
        let request: RestRequest
        if let field = target.externalIdFieldName, let external = record[field]?.stringValue, !MobileSync.isLocalID(external) {
            // Salesforce refuses the external-id field in an upsert's body (the URL carries it).
            request = restClient.requestForUpsert(withObjectType: type, externalIdField: field, externalId: external,
                                                  fields: fields.filter { $0.key != field }, apiVersion: nil)
        } else {
            request = restClient.requestForCreate(withObjectType: type, fields: fields, apiVersion: nil)
        }
        do throws(SyncError) {
            let answer = try await send(request)
            if let newId = answer["id"] { record[target.idFieldName] = newId }
            writes.append(.save(Self.cleaned(record, syncId: nil), soup: sync.soupName))
            result.created.append(record[target.idFieldName]?.stringValue ?? "")
        } catch {
            try keep(record, error, action: .create, target: target, soup: sync.soupName, result: &result, writes: &writes)
        }
    }

    /// Keeps a refused record dirty with the server's error in `__last_error__`; a failure that
    /// is not the server's answer (no connection, a refused token refresh) fails the sync.
    private func keep(_ record: [String: JSONValue], _ error: SyncError, action: SyncUpFailure.Action, target: SyncUpTarget, soup: String,
                      result: inout SyncUpResult, writes: inout [LocalWrite]) throws(SyncError) {
        guard let rest = error.restError, Self.status(of: error) != nil else { throw error }
        let lastError = rest.responseBody ?? rest.description
        keep(record, lastError: lastError, message: rest.serverErrors.first?.message ?? rest.description, action: action, soup: soup,
             idFieldName: target.idFieldName, result: &result, writes: &writes)
    }

    func keep(_ record: [String: JSONValue], lastError: String, message: String, action: SyncUpFailure.Action, soup: String, idFieldName: String,
              result: inout SyncUpResult, writes: inout [LocalWrite]) {
        var record = record
        record[MobileSync.lastErrorField] = .string(lastError)
        writes.append(.save(record, soup: soup))
        result.failed.append(SyncUpFailure(soupEntryId: record["_soupEntryId"]?.intValue ?? 0, recordId: record[idFieldName]?.stringValue,
                                           action: action, lastError: lastError, message: message))
    }

    /// The HTTP status of a server's refusal (`nil` when the server did not answer).
    static func status(of error: SyncError) -> Int? {
        error.restError?.statusCode
    }

    static func flag(_ record: [String: JSONValue], _ field: String) -> Bool {
        record[field]?.boolValue ?? (record[field]?.intValue == 1)
    }

    /// The record's object type (`attributes.type`).
    /// - Throws: ``SyncError`` `missingObjectType` naming the soup and the entry.
    func objectType(of record: [String: JSONValue], sync: SyncState) throws(SyncError) -> String {
        guard let type = record["attributes"]?["type"]?.stringValue, !type.isEmpty else {
            throw SyncError(code: .missingObjectType,
                            reason: "entry \(record["_soupEntryId"]?.intValue ?? 0) has no attributes.type: a sync up can't tell which object to write",
                            sync: sync.label, soup: sync.soupName, path: "attributes.type")
        }
        return type
    }

    /// The fields a create or update sends (`buildFieldsMap`): each listed path with a value,
    /// but the id and modification date.
    static func fields(of record: [String: JSONValue], _ fieldlist: [String], target: SyncUpTarget) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for field in fieldlist where field != target.idFieldName && field != target.modificationDateFieldName {
            var value: JSONValue? = .object(record)
            for part in field.split(separator: ".") { value = value?[String(part)] }
            if let value { fields[field] = value }
        }
        return fields
    }

    // MARK: Conflicts

    /// For `LEAVE_IF_CHANGED`: whether each record (by soup entry id) is at least as new as the
    /// server's (`areNewerThanServer`). A record created locally always is; one the server
    /// deleted is not, unless it was deleted locally too.
    func areNewerThanServer(_ records: [[String: JSONValue]], target: SyncUpTarget, sync: SyncState) async throws(SyncError) -> [Int: Bool] {
        var newer: [Int: Bool] = [:]
        var byType: [String: [[String: JSONValue]]] = [:]
        for record in records {
            let entryId = record["_soupEntryId"]?.intValue ?? 0
            if Self.flag(record, MobileSync.locallyCreatedField) || record[target.idFieldName]?.stringValue == nil {
                newer[entryId] = true
            } else {
                byType[try objectType(of: record, sync: sync), default: []].append(record)
            }
        }
        for (type, group) in byType.sorted(by: { $0.key < $1.key }) {
            let remote = try await remoteModificationDates(group, type: type, target: target, sync: sync)
            for record in group {
                let entryId = record["_soupEntryId"]?.intValue ?? 0
                let local = (date: record[target.modificationDateFieldName]?.stringValue.flatMap(SalesforceDateTime.millis(from:)),
                             deleted: Self.flag(record, MobileSync.locallyDeletedField))
                let server = remote[entryId] ?? (nil, true)
                newer[entryId] = (local.date != nil && server.date != nil && local.date! >= server.date!) || (local.deleted && server.deleted)
                    || local.date == nil
            }
        }
        return newer
    }

    /// The server's modification date of each record (by soup entry id), `deleted` when the
    /// server no longer has it: one collection retrieve per 2000 records, or one retrieve per
    /// record for other targets.
    private func remoteModificationDates(_ records: [[String: JSONValue]], type: String, target: SyncUpTarget,
                                         sync: SyncState) async throws(SyncError) -> [Int: (date: Int64?, deleted: Bool)] {
        var dates: [Int: (date: Int64?, deleted: Bool)] = [:]
        let field = target.modificationDateFieldName
        func date(_ answer: JSONValue, of record: [String: JSONValue]) throws(SyncError) -> Int64 {
            guard let text = answer[field]?.stringValue, let millis = SalesforceDateTime.millis(from: text) else {
                throw SyncError(code: .missingModificationDate,
                                reason: "the server's answer for \(record[target.idFieldName]?.stringValue ?? "") has no \(field): LEAVE_IF_CHANGED can't compare",
                                sync: sync.label, soup: sync.soupName, path: field)
            }
            return millis
        }
        if target.kind == .collection {
            for start in stride(from: 0, to: records.count, by: 2000) {
                let slice = Array(records[start..<min(start + 2000, records.count)])
                let ids = slice.compactMap { $0[target.idFieldName]?.stringValue }
                let answer = try await send(restClient.requestForCollectionRetrieve(withObjectType: type, objectIds: ids, fieldList: [field], apiVersion: nil))
                for (index, record) in slice.enumerated() {
                    let entryId = record["_soupEntryId"]?.intValue ?? 0
                    guard let found = answer[index], found != .null else {
                        dates[entryId] = (nil, true)
                        continue
                    }
                    dates[entryId] = (try date(found, of: record), false)
                }
            }
            return dates
        }
        for record in records {
            let entryId = record["_soupEntryId"]?.intValue ?? 0
            let id = record[target.idFieldName]?.stringValue ?? ""
            do throws(SyncError) {
                let answer = try await send(restClient.requestForRetrieve(withObjectType: type, objectId: id, fieldList: [field], apiVersion: nil))
                dates[entryId] = (try date(answer, of: record), false)
            } catch where error.code == .serverFailed {
                guard let status = Self.status(of: error) else { throw error }
                dates[entryId] = (nil, status == 404)
            }
        }
        return dates
    }
}
