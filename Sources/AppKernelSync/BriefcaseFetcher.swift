import Foundation
import AppKernelCore
import AppKernelREST

/// A briefcase target (`BriefcaseSyncDownTarget`): the ids the org's briefcases prime
/// (`GET …/connect/briefcase/priming-records`, a page per `relayToken`; on a resync
/// `changedAfterTimestamp` instead), then the records by id (`POST …/composite/sobjects/<type>`,
/// `countIdsPerRetrieve` ids at a time), for the object types of the target's `infos` only.
struct BriefcaseFetcher: SyncDownFetcher {
    /// The most ids a collection retrieve takes (`SFRestCollectionRetrieveMaxSize`).
    static let maxCountIdsPerRetrieve = 2000

    let target: SyncDownTarget
    private(set) var totalSize = 0
    private var relayToken: String?
    private var pending: [(id: String, info: BriefcaseObjectInfo)] = []

    init(target: SyncDownTarget) { self.target = target }

    /// `countIdsPerRetrieve` as the SDK takes it: below the maximum, else the maximum.
    private var countIdsPerRetrieve: Int {
        guard let given = target.details.countIdsPerRetrieve, given > 0, given < Self.maxCountIdsPerRetrieve else { return Self.maxCountIdsPerRetrieve }
        return given
    }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        try await take(Self.primingPage(target, relayToken: nil, changedAfter: maxTimeStamp, manager), manager)
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        if !pending.isEmpty { return try await retrieveSlice(manager) }
        guard let token = relayToken else { return nil }
        return try await take(Self.primingPage(target, relayToken: token, changedAfter: 0, manager), manager)
    }

    /// Keeps a priming page's ids and relay token, and retrieves the first slice of its records.
    private mutating func take(_ page: (ids: [(id: String, info: BriefcaseObjectInfo)], relayToken: String?, ruleErrors: [String]),
                               _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]] {
        relayToken = page.relayToken
        pending = page.ids
        totalSize += page.ids.count
        return try await retrieveSlice(manager)
    }

    /// The next `countIdsPerRetrieve` pending ids' records, a request per object type.
    private mutating func retrieveSlice(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]] {
        let slice = pending.prefix(countIdsPerRetrieve)
        pending.removeFirst(slice.count)
        var records: [[String: JSONValue]] = []
        for info in target.details.briefcaseInfos {
            let ids = slice.filter { $0.info.sobjectType == info.sobjectType }.map(\.id)
            guard !ids.isEmpty else { continue }
            var fields = info.fieldlist
            for field in [info.idFieldName, info.modificationDateFieldName] where !fields.contains(field) { fields.append(field) }
            let request = manager.restClient.requestForCollectionRetrieve(withObjectType: info.sobjectType, objectIds: ids, fieldList: fields, apiVersion: nil)
            // A record deleted since it was primed comes back null: nothing to write.
            records += Self.records(try await manager.send(request))
        }
        return records
    }

    /// Every id the briefcases prime now, by object type (ghost cleaning). Rule errors fail it:
    /// ids a rule did not give would read as ghosts.
    static func allIds(_ target: SyncDownTarget, _ manager: SyncManager) async throws(SyncError) -> [String: Set<String>] {
        var ids: [String: Set<String>] = [:]
        var token: String?
        repeat {
            let page = try await primingPage(target, relayToken: token, changedAfter: 0, manager)
            guard page.ruleErrors.isEmpty else {
                throw SyncError(code: .serverFailed, reason: "the briefcase rules \(page.ruleErrors.joined(separator: ", ")) failed on the server: "
                                    + "without their records no ghost can be told apart; nothing was removed, try again once they run",
                                path: "connect/briefcase/priming-records")
            }
            for entry in page.ids { ids[entry.info.sobjectType, default: []].insert(entry.id) }
            token = page.relayToken
        } while token != nil
        return ids
    }

    /// One page of priming records: the ids of the target's object types (every record type),
    /// the next relay token, the ids of rules that failed.
    static func primingPage(_ target: SyncDownTarget, relayToken: String?, changedAfter: Int64,
                            _ manager: SyncManager) async throws(SyncError) -> (ids: [(id: String, info: BriefcaseObjectInfo)], relayToken: String?, ruleErrors: [String]) {
        var query: [RestRequest.QueryParameter] = []
        if let relayToken { query.append(.init("relayToken", relayToken)) } else if changedAfter > 0 {
            query.append(.init("changedAfterTimestamp", SalesforceDateTime.string(fromMillis: changedAfter)))
        }
        let path = "/services/data/\(manager.restClient.apiVersion)/connect/briefcase/priming-records"
        let answer = try await manager.send(manager.restClient.request(method: .get, path: path, queryParameters: query))
        guard let byType = answer["primingRecords"]?.objectValue else {
            throw SyncError(code: .serverFailed, reason: "the priming records answer has no primingRecords object", path: path)
        }
        var ids: [(id: String, info: BriefcaseObjectInfo)] = []
        for info in target.details.briefcaseInfos {
            for (_, records) in (byType[info.sobjectType]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                ids += (records.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.map { ($0, info) }
            }
        }
        let errors = (answer["ruleErrors"]?.arrayValue ?? []).map { $0["ruleId"]?.stringValue ?? $0.description }
        return (ids, answer["relayToken"]?.stringValue, errors)
    }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        Set(try await Self.allIds(target, manager).values.joined())
    }
}
