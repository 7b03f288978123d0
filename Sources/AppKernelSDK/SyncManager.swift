import AppKernel
import AppKernelREST

/// How far a sync has got.
public struct SyncProgress: Sendable, Hashable {
    /// Records fetched so far.
    public var fetched: Int
    /// Records the query matches.
    public var total: Int

    /// Creates a progress report.
    public init(fetched: Int, total: Int) {
        self.fetched = fetched
        self.total = total
    }
}

/// What a sync did.
public struct SyncResult: Sendable, Hashable {
    /// The sync's name.
    public var name: String
    /// Records fetched from the server.
    public var fetched: Int
    /// Records written into the soup.
    public var written: Int
    /// Records left alone because they were changed locally (`LEAVE_IF_CHANGED`).
    public var keptLocal: Int

    /// Creates a result.
    public init(name: String, fetched: Int, written: Int, keptLocal: Int) {
        self.name = name
        self.fetched = fetched
        self.written = written
        self.keptLocal = keptLocal
    }
}

/// Why a sync could not run.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// No sync of that name is registered for the owner.
    case unknownSync(String)
    /// The sync is not a sync-down with a SOQL target (the kinds this manager runs).
    case unsupportedTarget(sync: String, type: String)
    /// The server refused.
    case rest(RestClientError)
    /// The soup refused a record.
    case store(ConfigError)

    /// What went wrong.
    public var description: String {
        switch self {
        case .unknownSync(let name): "no sync named '\(name)' is registered"
        case .unsupportedTarget(let sync, let type): "the sync '\(sync)' has a \(type) target; this sync manager runs soql sync-downs"
        case .rest(let error): "the sync's query failed: \(error)"
        case .store(let error): "the sync could not store a record: \(error)"
        }
    }
}

/// Runs the syncs of `usersyncs.json` — MobileSync's sync-down for SOQL targets: query (following
/// `nextRecordsUrl` pages) and upsert into the user's soup, honouring the merge mode
/// (`LEAVE_IF_CHANGED` keeps records flagged as changed locally).
@MainActor
public final class SyncManager {
    /// The client that queries.
    public let client: RestClient
    /// Where soups and records live.
    public let stores: UserStoreRegistry
    /// Whose soups these are.
    public let owner: StoreOwner

    /// Creates a sync manager for one owner's stores.
    public init(client: RestClient, stores: UserStoreRegistry, owner: StoreOwner) {
        self.client = client
        self.stores = stores
        self.owner = owner
    }

    /// Runs the registered sync named `name`.
    public func syncDown(named name: String, progress: (@MainActor (SyncProgress) -> Void)? = nil) async throws(SyncError) -> SyncResult {
        guard let spec = stores.syncs(for: owner).first(where: { $0.name == name }) else { throw .unknownSync(name) }
        return try await syncDown(spec, progress: progress)
    }

    /// Runs a sync-down.
    public func syncDown(_ spec: SyncSpec, progress: (@MainActor (SyncProgress) -> Void)? = nil) async throws(SyncError) -> SyncResult {
        guard spec.type == .syncDown, spec.targetType == .soql, let soql = spec.query else {
            throw .unsupportedTarget(sync: spec.name, type: spec.targetType?.rawValue ?? spec.type.rawValue)
        }
        var request = client.request(forQuery: soql, apiVersion: nil)
        var result = SyncResult(name: spec.name, fetched: 0, written: 0, keptLocal: 0)
        while true {
            let page: JSONValue
            do throws(RestClientError) { page = try await client.send(request: request).asJSON() } catch { throw .rest(error) }
            for record in page["records"]?.arrayValue ?? [] {
                guard var fields = record.objectValue, let id = fields["Id"]?.stringValue else { continue }
                result.fetched += 1
                fields["attributes"] = nil
                if spec.mergeMode == .leaveIfChanged,
                   stores.record(withID: id, inSoup: spec.soupName, for: owner)?[UserStoreRegistry.localFlag] == true {
                    result.keptLocal += 1
                    continue
                }
                do throws(ConfigError) { try stores.upsert(fields, intoSoup: spec.soupName, for: owner) } catch { throw .store(error) }
                result.written += 1
            }
            progress?(SyncProgress(fetched: result.fetched, total: page["totalSize"]?.intValue ?? result.fetched))
            guard page["done"]?.boolValue == false, let next = page["nextRecordsUrl"]?.stringValue else { break }
            request = client.request(method: .get, path: next)
        }
        return result
    }
}
