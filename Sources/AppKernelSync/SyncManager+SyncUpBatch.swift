import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Sync up a batch at a time (`SFBatchSyncUpTarget` through `…/composite`,
/// `SFCollectionSyncUpTarget` through `…/composite/sobjects`), with the SDK's outcomes: a
/// record the server no longer has is created again under `OVERWRITE` (one rerun), deleted
/// locally when it was being deleted, and kept with its error otherwise.
extension SyncManager {
    /// One record's request, for either API (`SFSDKRecordRequest`).
    struct RecordRequest {
        enum Kind: CaseIterable { case create, update, upsert, delete }
        var kind: Kind
        var objectType: String
        var fields: [String: JSONValue] = [:]
        var objectId: String?
        var externalId: String?
        var externalIdFieldName: String?
        var referenceId: String
    }

    /// One record's answer, for either API (`SFSDKRecordResponse`).
    struct RecordResponse {
        var success: Bool
        var objectId: String?
        var recordDoesNotExist: Bool
        /// The first error, as JSON (stored in `__last_error__`).
        var errorJSON: JSONValue?
        /// The error says a record this one refers to is deleted (`ENTITY_IS_DELETED`).
        var relatedRecordDoesNotExist = false
    }

    func syncUpBatch(_ records: [[String: JSONValue]], target: SyncUpTarget, sync: SyncState, isReRun: Bool, result: inout SyncUpResult,
                     writes: inout [LocalWrite]) async throws(SyncError) {
        guard !records.isEmpty else { return }
        var records = records
        var requests: [RecordRequest] = []
        for index in records.indices where Self.flag(records[index], MobileSync.localField) {
            if records[index][target.idFieldName]?.stringValue == nil { records[index][target.idFieldName] = .string(MobileSync.createLocalID()) }
            if let request = try recordRequest(for: records[index], target: target, sync: sync) { requests.append(request) }
        }
        let responses = requests.isEmpty ? [:]
            : target.kind == .batch ? try await sendComposite(requests) : try await sendCollections(requests)
        var needReRun = false
        var rerun: [[String: JSONValue]] = []
        for var record in records where Self.flag(record, MobileSync.localField) {
            let reference = record[target.idFieldName]?.stringValue ?? ""
            let response = responses[reference]
            let created = Self.flag(record, MobileSync.locallyCreatedField)
            if Self.flag(record, MobileSync.locallyDeletedField) {
                if created || response?.success == true || response?.recordDoesNotExist == true {
                    writes.append(.remove(record["_soupEntryId"]?.intValue ?? 0, soup: sync.soupName))
                    result.deleted.append(reference)
                } else {
                    keep(record, response, action: .delete, soup: sync.soupName, idFieldName: target.idFieldName, result: &result, writes: &writes)
                }
                continue
            }
            if let response, response.success {
                if let serverId = response.objectId, created || Self.flag(record, MobileSync.locallyCreatedField) {
                    record[target.idFieldName] = .string(serverId)
                }
                writes.append(.save(Self.cleaned(record, syncId: nil), soup: sync.soupName))
                if created { result.created.append(record[target.idFieldName]?.stringValue ?? "") } else { result.updated.append(reference) }
            } else if response?.recordDoesNotExist == true, sync.mergeMode == .overwrite, !isReRun {
                // Deleted on the server: create it again.
                record[MobileSync.localField] = true
                record[MobileSync.locallyCreatedField] = true
                needReRun = true
                rerun.append(record)
            } else {
                keep(record, response, action: created ? .create : .update, soup: sync.soupName, idFieldName: target.idFieldName,
                     result: &result, writes: &writes)
            }
        }
        if needReRun, !isReRun {
            try await syncUpBatch(rerun, target: target, sync: sync, isReRun: true, result: &result, writes: &writes)
        }
    }

    /// Keeps a refused record dirty with the server's error for it in `__last_error__`.
    func keep(_ record: [String: JSONValue], _ response: RecordResponse?, action: SyncUpFailure.Action, soup: String, idFieldName: String,
              result: inout SyncUpResult, writes: inout [LocalWrite]) {
        let error = response?.errorJSON ?? ["message": "the server gave no answer for this record", "errorCode": "NO_RESPONSE"]
        keep(record, lastError: error.description, message: error["message"]?.stringValue ?? error.description, action: action, soup: soup,
             idFieldName: idFieldName, result: &result, writes: &writes)
    }

    /// The request for a dirty record (`buildRequestForRecord`); `nil` for a record created and
    /// deleted locally (the server never had it).
    private func recordRequest(for record: [String: JSONValue], target: SyncUpTarget, sync: SyncState) throws(SyncError) -> RecordRequest? {
        let reference = record[target.idFieldName]?.stringValue ?? ""
        let created = Self.flag(record, MobileSync.locallyCreatedField)
        if Self.flag(record, MobileSync.locallyDeletedField) {
            guard !created else { return nil }
            return RecordRequest(kind: .delete, objectType: try objectType(of: record, sync: sync), objectId: reference, referenceId: reference)
        }
        let type = try objectType(of: record, sync: sync)
        if created {
            let fields = Self.fields(of: record, target.createFieldlist ?? sync.options.fieldlist ?? [], target: target)
            if let field = target.externalIdFieldName, let external = record[field]?.stringValue, !MobileSync.isLocalID(external) {
                return RecordRequest(kind: .upsert, objectType: type, fields: fields.filter { $0.key != field }, externalId: external,
                                     externalIdFieldName: field, referenceId: reference)
            }
            return RecordRequest(kind: .create, objectType: type, fields: fields, referenceId: reference)
        }
        let fields = Self.fields(of: record, target.updateFieldlist ?? sync.options.fieldlist ?? [], target: target)
        return RecordRequest(kind: .update, objectType: type, fields: fields, objectId: reference, referenceId: reference)
    }

    // MARK: Composite

    /// One `…/composite` request (`allOrNone: false`), answers by reference id.
    func sendComposite(_ requests: [RecordRequest]) async throws(SyncError) -> [String: RecordResponse] {
        let rest: [RestRequest] = requests.map { request in
            switch request.kind {
            case .create: restClient.requestForCreate(withObjectType: request.objectType, fields: request.fields, apiVersion: nil)
            case .update: restClient.requestForUpdate(withObjectType: request.objectType, objectId: request.objectId ?? "", fields: request.fields, apiVersion: nil)
            case .upsert: restClient.requestForUpsert(withObjectType: request.objectType, externalIdField: request.externalIdFieldName ?? "",
                                                      externalId: request.externalId ?? "", fields: request.fields, apiVersion: nil)
            case .delete: restClient.requestForDelete(withObjectType: request.objectType, objectId: request.objectId ?? "", apiVersion: nil)
            }
        }
        // Reference ids must be letters, digits and underscores: record ids and local ids are.
        let answer = try await send(restClient.compositeRequest(rest, refIds: requests.map(\.referenceId), allOrNone: false, apiVersion: nil))
        var responses: [String: RecordResponse] = [:]
        for sub in answer["compositeResponse"]?.arrayValue ?? [] {
            guard let reference = sub["referenceId"]?.stringValue else { continue }
            let status = sub["httpStatusCode"]?.intValue ?? 0
            let body = sub["body"] ?? .null
            responses[reference] = RecordResponse(success: (200..<300).contains(status), objectId: body["id"]?.stringValue,
                                                  recordDoesNotExist: status == 404, errorJSON: body[0],
                                                  relatedRecordDoesNotExist: body[0]?["errorCode"] == "ENTITY_IS_DELETED")
        }
        return responses
    }

    // MARK: Collections

    /// The collection requests — creates, updates, upserts (one per object type and external-id
    /// field), deletes — answers by reference id.
    private func sendCollections(_ requests: [RecordRequest]) async throws(SyncError) -> [String: RecordResponse] {
        var responses: [String: RecordResponse] = [:]
        for kind in RecordRequest.Kind.allCases {
            let group = requests.filter { $0.kind == kind }
            guard !group.isEmpty else { continue }
            var batches: [(request: RestRequest, members: [RecordRequest])] = []
            switch kind {
            case .create:
                batches = [(restClient.requestForCollectionCreate(allOrNone: false, records: group.map(Self.collectionRecord), apiVersion: nil), group)]
            case .update:
                batches = [(restClient.requestForCollectionUpdate(allOrNone: false, records: group.map(Self.collectionRecord), apiVersion: nil), group)]
            case .upsert:
                let keys = group.reduce(into: [String]()) { keys, request in
                    let key = request.objectType + "/" + (request.externalIdFieldName ?? "")
                    if !keys.contains(key) { keys.append(key) }
                }
                for key in keys {
                    let members = group.filter { $0.objectType + "/" + ($0.externalIdFieldName ?? "") == key }
                    batches.append((restClient.requestForCollectionUpsert(allOrNone: false, objectType: members[0].objectType,
                                                                          externalIdField: members[0].externalIdFieldName ?? "",
                                                                          records: members.map(Self.collectionRecord), apiVersion: nil), members))
                }
            case .delete:
                batches = [(restClient.requestForCollectionDelete(allOrNone: false, objectIds: group.compactMap(\.objectId), apiVersion: nil), group)]
            }
            for (request, members) in batches {
                let answer = try await send(request)
                for (index, member) in members.enumerated() {
                    guard let sub = answer[index] else { continue }
                    let error = sub["errors"]?[0]
                    let code = error?["statusCode"]?.stringValue
                    responses[member.referenceId] = RecordResponse(success: sub["success"]?.boolValue ?? false, objectId: sub["id"]?.stringValue,
                                                                   recordDoesNotExist: code == "INVALID_CROSS_REFERENCE_KEY" || code == "ENTITY_IS_DELETED",
                                                                   errorJSON: error)
                }
            }
        }
        return responses
    }

    /// A record as a collection request carries it (`asDictForCollectionRequest`).
    private static func collectionRecord(_ request: RecordRequest) -> [String: JSONValue] {
        var record = request.fields
        record["attributes"] = ["type": .string(request.objectType)]
        if request.kind == .update { record["Id"] = request.objectId.map(JSONValue.string) ?? .null }
        if request.kind == .upsert, let field = request.externalIdFieldName { record[field] = request.externalId.map(JSONValue.string) ?? .null }
        return record
    }
}
