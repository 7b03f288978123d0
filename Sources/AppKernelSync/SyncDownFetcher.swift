import Foundation
import AppKernelCore
import AppKernelStore
import AppKernelREST

/// Fetches a sync down's records from the org page by page (`startFetch` / `continueFetch`),
/// and tells which records still exist there (`getRemoteIds`, for ghosts).
protocol SyncDownFetcher {
    /// How many records the run will fetch (an estimate for a refresh resync).
    var totalSize: Int { get }
    /// The first page (`nil`: nothing to fetch).
    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]?
    /// The next page (`nil`: done).
    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]?
    /// Which of `localIds` the server still has (`nil`: the target cannot tell; nothing is a ghost).
    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>?
}

extension SyncDownFetcher {
    /// The records of a query result or a search result.
    static func records(_ value: JSONValue?) -> [[String: JSONValue]] {
        value?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    /// `'a', 'b'`: ids quoted for an `IN` list (quotes and backslashes escaped).
    static func quoted(_ ids: some Sequence<String>) -> String {
        ids.map { "'" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }.joined(separator: ", ")
    }

    /// Every record of a SOQL query, following `nextRecordsUrl`.
    static func allRecords(_ soql: String, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]] {
        var page = try await manager.send(manager.restClient.request(forQuery: soql, apiVersion: nil))
        var records = Self.records(page["records"])
        while let next = page["nextRecordsUrl"]?.stringValue {
            page = try await manager.send(manager.restClient.request(method: .get, path: next))
            records += Self.records(page["records"])
        }
        return records
    }

    /// The ids of every record of a SOQL query.
    static func ids(_ soql: String, idField: String, _ manager: SyncManager) async throws(SyncError) -> Set<String> {
        Set(try await allRecords(soql, manager).compactMap { $0[idField]?.stringValue })
    }
}

/// A SOQL target (and a parent-children target, which is a SOQL query with a subquery): pages of
/// `maxBatchSize`, following `nextRecordsUrl`.
struct SOQLFetcher: SyncDownFetcher {
    let target: SyncDownTarget
    /// Builds the query of a run from its `maxTimeStamp`.
    let query: (Int64) -> String
    /// Reshapes a page's records (a parent-children target flattens its subquery results).
    var reshape: ([[String: JSONValue]]) -> [[String: JSONValue]] = { $0 }
    private(set) var totalSize = 0
    private var nextRecordsURL: String?

    init(target: SyncDownTarget, query: @escaping (Int64) -> String, reshape: @escaping ([[String: JSONValue]]) -> [[String: JSONValue]] = { $0 }) {
        self.target = target
        self.query = query
        self.reshape = reshape
    }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        let request = manager.restClient.request(forQuery: query(maxTimeStamp), apiVersion: nil,
                                                 batchSize: target.details.maxBatchSize ?? SyncDownTarget.defaultMaxBatchSize)
        let page = try await manager.send(request)
        totalSize = page["totalSize"]?.intValue ?? 0
        nextRecordsURL = page["nextRecordsUrl"]?.stringValue
        return reshape(Self.records(page["records"]))
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        guard let next = nextRecordsURL else { return nil }
        let page = try await manager.send(manager.restClient.request(method: .get, path: next))
        nextRecordsURL = page["nextRecordsUrl"]?.stringValue
        return reshape(Self.records(page["records"]))
    }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        var mutator = SOQLMutator(target.query ?? "")
        mutator.replaceSelectFields(target.idFieldName)
        mutator.replaceOrderBy("")
        return try await Self.ids(mutator.soql, idField: target.idFieldName, manager)
    }
}

/// A SOSL target: one search, every record it finds.
struct SOSLFetcher: SyncDownFetcher {
    let target: SyncDownTarget
    private(set) var totalSize = 0

    init(target: SyncDownTarget) { self.target = target }

    func search(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]] {
        let answer = try await manager.send(manager.restClient.requestForSearch(target.query ?? "", apiVersion: nil))
        return Self.records(answer["searchRecords"] ?? answer)
    }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        let records = try await search(manager)
        totalSize = records.count
        return records
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? { nil }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        Set(try await search(manager).compactMap { $0[target.idFieldName]?.stringValue })
    }
}

/// An MRU target: the object's `recentItems`, then their fields by SOQL.
struct MRUFetcher: SyncDownFetcher {
    let target: SyncDownTarget
    private(set) var totalSize = 0

    init(target: SyncDownTarget) { self.target = target }

    private var objectType: String { target.details.sobjectType ?? "" }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        let info = try await manager.send(manager.restClient.requestForMetadata(withObjectType: objectType, apiVersion: nil))
        let recent = Self.records(info["recentItems"]).compactMap { $0[target.idFieldName]?.stringValue }
        let fields = (target.details.fieldlist ?? [target.idFieldName]).joined(separator: ", ")
        let soql = "SELECT \(fields) FROM \(objectType) WHERE \(target.idFieldName) IN (\(recent.isEmpty ? "''" : Self.quoted(recent)))"
        let page = try await manager.send(manager.restClient.request(forQuery: soql, apiVersion: nil))
        totalSize = page["totalSize"]?.intValue ?? 0
        return Self.records(page["records"])
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? { nil }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        var found: Set<String> = []
        for start in stride(from: 0, to: localIds.count, by: SyncDownTarget.defaultCountIdsPerSoql) {
            let slice = localIds[start..<min(start + SyncDownTarget.defaultCountIdsPerSoql, localIds.count)]
            found.formUnion(try await Self.ids("SELECT \(target.idFieldName) FROM \(objectType) WHERE \(target.idFieldName) IN (\(Self.quoted(slice)))",
                                               idField: target.idFieldName, manager))
        }
        return found
    }
}

/// A refresh target: the soup's records, `countIdsPerSoql` ids a query, fetched again (on a
/// resync, only those changed since the newest modification date of the page's records in the
/// soup — records may have been written to the soup outside a sync).
struct RefreshFetcher: SyncDownFetcher {
    let target: SyncDownTarget
    let soupName: String
    private(set) var totalSize = 0
    private var page = 0
    private var isResync = false

    init(target: SyncDownTarget, soupName: String) {
        self.target = target
        self.soupName = target.details.soupName ?? soupName
    }

    private var countIdsPerSoql: Int { max(target.details.countIdsPerSoql ?? SyncDownTarget.defaultCountIdsPerSoql, 1) }
    private var objectType: String { target.details.sobjectType ?? "" }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        isResync = maxTimeStamp > 0
        page = 0
        return try await fetchPage(manager)
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        page > 0 ? try await fetchPage(manager) : nil
    }

    private mutating func fetchPage(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        let spec = QuerySpec.all(soupName: soupName, orderPath: target.idFieldName, order: .ascending, pageSize: countIdsPerSoql)
        let entries = try manager.storeCall { try manager.store.query(spec, pageIndex: page) }.compactMap(\.objectValue)
        if page == 0 { totalSize = try manager.storeCall { try manager.store.count(spec) } }
        let ids = entries.compactMap { $0[target.idFieldName]?.stringValue }
        guard !ids.isEmpty else { return nil }
        var since: Int64 = 0
        if isResync {
            since = entries.compactMap { $0[target.modificationDateFieldName]?.stringValue.flatMap(SalesforceDateTime.millis(from:)) }.max() ?? 0
        }
        let records = try await fetch(ids, fields: target.details.fieldlist ?? [target.idFieldName], since: since, manager)
        page = countIdsPerSoql * (page + 1) >= totalSize ? 0 : page + 1
        return records
    }

    private func fetch(_ ids: [String], fields: [String], since: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]] {
        var soql = "SELECT \(fields.joined(separator: ", ")) FROM \(objectType) WHERE \(target.idFieldName) IN (\(Self.quoted(ids)))"
        if since > 0 { soql += " AND \(target.modificationDateFieldName) > \(SalesforceDateTime.string(fromMillis: since))" }
        return try await Self.allRecords(soql, manager)
    }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? {
        var found: Set<String> = []
        for start in stride(from: 0, to: localIds.count, by: countIdsPerSoql) {
            let slice = Array(localIds[start..<min(start + countIdsPerSoql, localIds.count)])
            found.formUnion(try await fetch(slice, fields: [target.idFieldName], since: 0, manager).compactMap { $0[target.idFieldName]?.stringValue })
        }
        return found
    }
}

/// A metadata or layout target: one record, the describe or the layout, with a made-up `Id`
/// (the object's name; for a layout `<object>-<formFactor>-<layoutType>-<mode>-<recordTypeId>`,
/// an absent value written `(null)`, as the iOS SDK formats it).
struct SingleRecordFetcher: SyncDownFetcher {
    let target: SyncDownTarget
    private(set) var totalSize = 0

    init(target: SyncDownTarget) { self.target = target }

    mutating func start(maxTimeStamp: Int64, _ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? {
        let details = target.details
        let objectType = details.sobjectType ?? ""
        let request: RestRequest
        var id = objectType
        if target.queryType == .layout {
            request = manager.restClient.requestForLayout(withObjectAPIName: objectType, formFactor: details.formFactor, layoutType: details.layoutType,
                                                          mode: details.mode, recordTypeId: details.recordTypeId, apiVersion: nil)
            id = [objectType, details.formFactor, details.layoutType, details.mode, details.recordTypeId].map { $0 ?? "(null)" }.joined(separator: "-")
        } else {
            request = manager.restClient.requestForDescribe(withObjectType: objectType, apiVersion: nil)
        }
        var record = try await manager.send(request).objectValue ?? [:]
        record[target.idFieldName] = .string(id)
        totalSize = 1
        return [record]
    }

    mutating func next(_ manager: SyncManager) async throws(SyncError) -> [[String: JSONValue]]? { nil }

    func remoteIds(_ localIds: [String], _ manager: SyncManager) async throws(SyncError) -> Set<String>? { nil }
}
