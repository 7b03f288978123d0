public import AppKernelCore
import AppKernelREST

/// An app's own sync-up target — a subclass of the Mobile SDK's `SFSyncUpTarget` named in
/// `usersyncs.json`'s `iOSImpl`, registered by that name
/// (``SyncTargetRegistry/registerSyncUp(_:factory:)``). The manager walks the soup's records
/// with local changes as for the SDK's one-request-a-record target, and calls
/// ``createOnServer(objectType:fields:syncManager:)``, ``updateOnServer(objectType:objectId:fields:syncManager:)``
/// or ``deleteOnServer(objectType:objectId:syncManager:)`` for each; each defaults to the SDK's
/// REST request, so a target overrides only what it changes. A record whose call throws stays
/// dirty with the error in `__last_error__` (listed in ``SyncUpResult/failed``).
public protocol CustomSyncUpTarget: Sendable {
    /// Creates the record on the server (`createOnServer:fields:`) and returns its new id.
    func createOnServer(objectType: String, fields: [String: JSONValue], syncManager: SyncManager) async throws -> String
    /// Updates the record on the server (`updateOnServer:objectId:fields:`).
    func updateOnServer(objectType: String, objectId: String, fields: [String: JSONValue], syncManager: SyncManager) async throws
    /// Deletes the record on the server (`deleteOnServer:objectId:`); a 404 counts as deleted.
    func deleteOnServer(objectType: String, objectId: String, syncManager: SyncManager) async throws
}

extension CustomSyncUpTarget {
    /// `POST …/sobjects/<type>`; the answer's `id`.
    public func createOnServer(objectType: String, fields: [String: JSONValue], syncManager: SyncManager) async throws -> String {
        let answer = try await syncManager.restClient.send(request: syncManager.restClient.requestForCreate(withObjectType: objectType, fields: fields, apiVersion: nil))
        guard let id = try answer.asJSON()["id"]?.stringValue else {
            throw SyncError(code: .customTargetFailed, reason: "the server's answer to the create of a \(objectType) has no id")
        }
        return id
    }

    /// `PATCH …/sobjects/<type>/<id>`.
    public func updateOnServer(objectType: String, objectId: String, fields: [String: JSONValue], syncManager: SyncManager) async throws {
        _ = try await syncManager.restClient.send(request: syncManager.restClient.requestForUpdate(withObjectType: objectType, objectId: objectId,
                                                                                                  fields: fields, apiVersion: nil))
    }

    /// `DELETE …/sobjects/<type>/<id>`.
    public func deleteOnServer(objectType: String, objectId: String, syncManager: SyncManager) async throws {
        _ = try await syncManager.restClient.send(request: syncManager.restClient.requestForDelete(withObjectType: objectType, objectId: objectId,
                                                                                                  apiVersion: nil))
    }
}
