import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Sync up through an app's target (``CustomSyncUpTarget``, ``AdvancedSyncUpTarget``): the
/// manager picks the records and the fields, the target talks to the server, the manager writes
/// each outcome with the sync's state.
extension SyncManager {
    func syncUpCustom(_ records: [[String: JSONValue]], _ custom: any CustomSyncUpTarget, target: SyncUpTarget, sync: SyncState,
                      result: inout SyncUpResult, writes: inout [LocalWrite]) async throws(SyncError) {
        guard !records.isEmpty else { return }
        var outcomes: [SyncUpOutcome] = []
        if let advanced = custom as? any AdvancedSyncUpTarget {
            do {
                outcomes = try await advanced.syncUpRecords(records, fieldlist: sync.options.fieldlist, mergeMode: sync.mergeMode, syncManager: self)
            } catch {
                throw SyncError.custom(error, sync: sync.label, doing: "its syncUpRecords")
            }
            guard outcomes.count == records.count else {
                throw SyncError(code: .customTargetFailed, reason: "its syncUpRecords said what happened to \(outcomes.count) of \(records.count) records: "
                                    + "it must return one outcome a record, in order; nothing of this batch was written", sync: sync.label)
            }
        } else {
            for record in records { outcomes.append(try await syncUpOne(record, custom, target: target, sync: sync)) }
        }
        for (record, outcome) in zip(records, outcomes) {
            let entryId = record["_soupEntryId"]?.intValue ?? 0
            let id = record[target.idFieldName]?.stringValue ?? ""
            switch outcome {
            case .created(let newId):
                var saved = Self.cleaned(record, syncId: nil)
                saved[target.idFieldName] = .string(newId)
                writes.append(.save(saved, soup: sync.soupName))
                result.created.append(newId)
            case .updated:
                writes.append(.save(Self.cleaned(record, syncId: nil), soup: sync.soupName))
                result.updated.append(id)
            case .deleted:
                writes.append(.remove(entryId, soup: sync.soupName))
                result.deleted.append(id)
            case .failed(let message):
                let action: SyncUpFailure.Action = Self.flag(record, MobileSync.locallyDeletedField) ? .delete
                    : Self.flag(record, MobileSync.locallyCreatedField) ? .create : .update
                let lastError: JSONValue = ["message": .string(message), "errorCode": "CUSTOM_TARGET_FAILED"]
                keep(record, lastError: lastError.description, message: message, action: action, soup: sync.soupName, idFieldName: target.idFieldName,
                     result: &result, writes: &writes)
            }
        }
    }

    /// One record through a plain custom target (as `SFSyncUpTask` calls an `SFSyncUpTarget`).
    private func syncUpOne(_ record: [String: JSONValue], _ custom: any CustomSyncUpTarget, target: SyncUpTarget,
                           sync: SyncState) async throws(SyncError) -> SyncUpOutcome {
        let id = record[target.idFieldName]?.stringValue ?? ""
        let created = Self.flag(record, MobileSync.locallyCreatedField)
        if Self.flag(record, MobileSync.locallyDeletedField), created { return .deleted }
        guard created || Self.flag(record, MobileSync.locallyDeletedField) || Self.flag(record, MobileSync.locallyUpdatedField) else { return .updated }
        let type = try objectType(of: record, sync: sync)
        do {
            if Self.flag(record, MobileSync.locallyDeletedField) {
                try await custom.deleteOnServer(objectType: type, objectId: id, syncManager: self)
                return .deleted
            }
            if created {
                let fields = Self.fields(of: record, target.createFieldlist ?? sync.options.fieldlist ?? [], target: target)
                return .created(id: try await custom.createOnServer(objectType: type, fields: fields, syncManager: self))
            }
            let fields = Self.fields(of: record, target.updateFieldlist ?? sync.options.fieldlist ?? [], target: target)
            try await custom.updateOnServer(objectType: type, objectId: id, fields: fields, syncManager: self)
            return .updated
        } catch let error as RestClientError where error.statusCode == 404 && Self.flag(record, MobileSync.locallyDeletedField) {
            return .deleted
        } catch let error as SyncError where error.code == .stopped || error.code == .storeFailed {
            throw error
        } catch {
            let failure = SyncError.custom(error, sync: sync.label, doing: "sending the record")
            return .failed(message: failure.restError.flatMap(\.responseBody) ?? failure.reason)
        }
    }
}
