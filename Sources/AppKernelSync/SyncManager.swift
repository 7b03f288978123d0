import AppKernelCore
public import AppKernelStore
public import AppKernelREST
public import Foundation

/// Called with the sync's state after each step of a run (its start, each page or batch, its
/// end), once the step is saved — the SDK's `SFSyncSyncManagerUpdateBlock`.
public typealias SyncUpdateBlock = @Sendable (SyncState) -> Void

/// Syncs soups of a `SmartStore` with a Salesforce org — the Mobile SDK's
/// `SFMobileSyncSyncManager`: sync down (SOQL, SOSL, MRU, refresh, parent-children, layout,
/// metadata targets) with `OVERWRITE` or `LEAVE_IF_CHANGED`, incremental resync from the sync's
/// `maxTimeStamp`, ghost cleaning, and sync up of local changes (one request a record, composite
/// batches, sObject collections, or parents with their children).
///
/// ```swift
/// let syncs = try SyncManager(store: store, restClient: client)
/// try syncs.createSyncs(SyncConfig.parseSyncs(usersyncsJSON, soupNames: ["Account"]))   // usersyncs.json
/// let state = try await syncs.reSync(named: "syncDownAccounts") { print($0.progress) }
/// try store.updateLocally(inSoup: "Account", recordId: id, fields: ["Name": "Renamed offline"])
/// let result = try await syncs.syncUp(named: "syncUpAccounts")     // result.failed: what the server refused
/// ```
///
/// Sync states live in the store's `syncs_soup` in the SDK's JSON form (``SyncState``): a
/// relaunch finds them, and a sync that was running when its process ended is marked
/// ``SyncState/Status/stopped`` when the manager opens the store (its next run resumes just
/// before its `maxTimeStamp`). A sync down writes each page of records together with the
/// sync's state, in one transaction: a page is never half written, and the state never claims
/// more than the soup holds. Pages are processed one at a time, never all held at once.
///
/// The manager is `Sendable` and holds no state of its own but the set of running syncs: its
/// `async` methods run off the caller's actor, its state reads are synchronous store reads.
/// One sync runs once at a time (``SyncError/Code/syncAlreadyRunning``). Cancelling the task
/// that runs a sync stops it (`STOPPED`, ``SyncError/Code/stopped``) after its last whole page
/// or batch; its next run resumes it.
public final class SyncManager: Sendable {
    /// The store whose soups are synced.
    public let store: SmartStore
    /// The client that reaches the org.
    public let restClient: RestClient
    /// The wall clock for `startTime` and `endTime`.
    let now: @Sendable () -> Date
    /// The running syncs and whether the manager accepts new ones.
    let activity = Locked<Activity>(Activity())
    private let registry: Locked<SyncTargetRegistry>

    /// The app's custom sync targets, by the class name `usersyncs.json`'s `iOSImpl` gives: a
    /// `custom` sync runs the one its name registers (set before running it).
    public var targets: SyncTargetRegistry {
        get { registry.withLock { $0 } }
        set { registry.withLock { $0 = newValue } }
    }

    /// Creates a manager for a store: registers `syncs_soup` if needed (indexes on `type`,
    /// `name`, `status`), and marks syncs left `RUNNING` by an ended process `STOPPED`.
    /// - Parameters:
    ///   - store: The store whose soups are synced (it gets `syncs_soup`).
    ///   - restClient: The client that reaches the org.
    ///   - targets: The app's custom sync targets (``targets``).
    ///   - now: The wall clock for sync start and end times.
    /// - Throws: ``SyncError`` `storeFailed`, `invalidSyncState`.
    public init(store: SmartStore, restClient: RestClient, targets: SyncTargetRegistry = SyncTargetRegistry(),
                now: @escaping @Sendable () -> Date = { Date() }) throws(SyncError) {
        self.store = store
        self.restClient = restClient
        self.now = now
        self.registry = Locked(targets)
        try setUpSyncsSoup()
        for var sync in try syncs(withStatus: .running) {
            sync.status = .stopped
            try save(sync)
        }
    }

    private static let syncsSoupIndexes = [IndexSpec(path: "type", type: .json1), IndexSpec(path: "name", type: .json1),
                                           IndexSpec(path: "status", type: .json1)]

    private func setUpSyncsSoup() throws(SyncError) {
        try storeCall {
            if !store.soupExists(MobileSync.syncsSoupName) {
                try store.registerSoup(SoupSpec(name: MobileSync.syncsSoupName, indexes: Self.syncsSoupIndexes))
            } else if Set(try store.indexSpecs(forSoup: MobileSync.syncsSoupName).map(\.path)) != Set(Self.syncsSoupIndexes.map(\.path)) {
                try store.alterSoup(MobileSync.syncsSoupName, indexes: Self.syncsSoupIndexes, reIndexData: true)
            }
        }
    }

    // MARK: Sync states

    /// The sync with this id (`syncStatus(forId:)`), or `nil`.
    /// - Throws: ``SyncError`` `storeFailed`, `invalidSyncState`.
    public func syncStatus(forId id: Int) throws(SyncError) -> SyncState? {
        guard let entry = try storeCall({ try store.retrieve([id], fromSoup: MobileSync.syncsSoupName) }).first else { return nil }
        return try SyncState(json: .object(entry))
    }

    /// The sync with this name (`syncStatus(forName:)`), or `nil`.
    /// - Throws: ``SyncError`` `storeFailed`, `invalidSyncState`.
    public func syncStatus(forName name: String) throws(SyncError) -> SyncState? {
        let rows = try storeCall {
            try store.query(.exact(soupName: MobileSync.syncsSoupName, path: "name", matchKey: .string(name), pageSize: 1))
        }
        return try rows.first.map { row throws(SyncError) in try SyncState(json: row) }
    }

    /// Whether a sync has this name (`hasSync(forName:)`).
    public func hasSync(forName name: String) -> Bool {
        ((try? syncStatus(forName: name)) ?? nil) != nil
    }

    /// Every sync with a status.
    func syncs(withStatus status: SyncState.Status) throws(SyncError) -> [SyncState] {
        let rows = try storeCall {
            try store.query(.exact(soupName: MobileSync.syncsSoupName, path: "status", matchKey: .string(status.rawValue), pageSize: Int(Int32.max)))
        }
        var syncs: [SyncState] = []
        for row in rows { syncs.append(try SyncState(json: row)) }
        return syncs
    }

    /// Deletes a sync's state (`deleteSync(forId:)`); its records stay in their soup.
    public func deleteSync(forId id: Int) throws(SyncError) {
        _ = try storeCall { try store.remove([id], fromSoup: MobileSync.syncsSoupName) }
    }

    /// Deletes a sync's state by name (`deleteSync(forName:)`); no-op for an unknown name.
    public func deleteSync(forName name: String) throws(SyncError) {
        if let sync = try syncStatus(forName: name) { try deleteSync(forId: sync.id) }
    }

    /// Creates a sync down without running it (`createSyncDown:options:soupName:syncName:`).
    /// - Throws: ``SyncError`` `syncAlreadyExists` for a name in use, `soupNotFound`.
    @discardableResult
    public func createSyncDown(target: SyncDownTarget, options: SyncOptions = .forSyncDown(), soupName: String,
                               syncName: String? = nil) throws(SyncError) -> SyncState {
        try create(SyncState(name: syncName, target: .down(target), options: options, soupName: soupName))
    }

    /// Creates a sync up without running it (`createSyncUp:options:soupName:syncName:`).
    /// - Throws: ``SyncError`` `syncAlreadyExists` for a name in use, `soupNotFound`.
    @discardableResult
    public func createSyncUp(target: SyncUpTarget = SyncUpTarget(), options: SyncOptions, soupName: String,
                             syncName: String? = nil) throws(SyncError) -> SyncState {
        try create(SyncState(name: syncName, target: .up(target), options: options, soupName: soupName))
    }

    /// Creates the syncs of `usersyncs.json` (`SFSDKSyncsConfig createSyncs:`), leaving alone
    /// those whose name exists already.
    /// - Returns: Every spec's sync, created or found.
    /// - Throws: ``SyncError`` `soupNotFound`, `storeFailed`.
    @discardableResult
    public func createSyncs(_ specs: [SyncSpec]) throws(SyncError) -> [SyncState] {
        var states: [SyncState] = []
        for spec in specs {
            if let existing = try syncStatus(forName: spec.name) {
                states.append(existing)
                continue
            }
            switch spec.type {
            case .syncDown:
                states.append(try createSyncDown(target: SyncDownTarget(spec: spec), options: SyncOptions(spec: spec), soupName: spec.soupName,
                                                 syncName: spec.name))
            case .syncUp:
                states.append(try createSyncUp(target: SyncUpTarget(spec: spec), options: SyncOptions(spec: spec), soupName: spec.soupName,
                                               syncName: spec.name))
            }
        }
        return states
    }

    private func create(_ sync: SyncState) throws(SyncError) -> SyncState {
        if let name = sync.name, try syncStatus(forName: name) != nil {
            throw SyncError(code: .syncAlreadyExists, reason: "a sync of that name exists already: run it again with reSync(named:)", sync: name)
        }
        try requireSoups(of: sync)
        var created = sync
        let saved = try storeCall { try store.upsert([sync.json], intoSoup: MobileSync.syncsSoupName) }
        created.id = saved.first?["_soupEntryId"]?.intValue ?? 0
        return created
    }

    /// The soups a sync reads and writes, each registered.
    /// - Throws: ``SyncError`` `soupNotFound` naming the sync and the soup.
    func requireSoups(of sync: SyncState) throws(SyncError) {
        var soups = [sync.soupName]
        switch sync.target {
        case .down(let target) where target.queryType == .parentChildren:
            soups = [target.details.parent?.soupName, target.details.children?.soupName].compactMap { $0 }
        case .down(let target) where target.queryType == .refresh:
            if let refreshed = target.details.soupName { soups.append(refreshed) }
        case .down(let target) where target.queryType == .briefcase:
            soups = target.details.briefcaseInfos.map(\.soupName)
        case .up(let target) where target.kind == .parentChildren:
            soups = [target.details.parent?.soupName, target.details.children?.soupName].compactMap { $0 }
        default:
            break
        }
        for soup in soups where !store.soupExists(soup) {
            throw SyncError(code: .soupNotFound, reason: "the soup does not exist: register it (userstore.json) before syncing into it",
                            sync: sync.label, soup: soup)
        }
    }

    // MARK: Running

    /// Creates a sync down and runs it (`syncDown(target:options:soupName:syncName:onUpdate:)`).
    /// - Returns: The sync's state once done.
    /// - Throws: ``SyncError``: `syncAlreadyExists`, `soupNotFound` before anything runs;
    ///   `serverFailed`, `storeFailed`, `missingModificationDate`, `unsupportedTarget` after the
    ///   sync started (it is saved `FAILED`).
    @discardableResult
    public func syncDown(target: SyncDownTarget, options: SyncOptions = .forSyncDown(), soupName: String, syncName: String? = nil,
                         onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> SyncState {
        let sync = try createSyncDown(target: target, options: options, soupName: soupName, syncName: syncName)
        return try await run(sync, onUpdate: onUpdate).state
    }

    /// Creates a sync up and runs it (`syncUp(target:options:soupName:syncName:onUpdate:)`).
    /// - Returns: The sync's state and what happened to each record.
    /// - Throws: as ``syncDown(target:options:soupName:syncName:onUpdate:)``.
    @discardableResult
    public func syncUp(target: SyncUpTarget = SyncUpTarget(), options: SyncOptions, soupName: String, syncName: String? = nil,
                       onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> SyncUpResult {
        let sync = try createSyncUp(target: target, options: options, soupName: soupName, syncName: syncName)
        return try await run(sync, onUpdate: onUpdate)
    }

    /// Runs an existing sync again (`reSync(named:onUpdate:)`): a sync down fetches what changed
    /// since its `maxTimeStamp`; a sync up sends the local changes.
    /// - Throws: ``SyncError`` `unknownSync`, `syncAlreadyRunning`, or as a run.
    @discardableResult
    public func reSync(named name: String, onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> SyncState {
        guard let sync = try syncStatus(forName: name) else { throw Self.unknown(name) }
        return try await run(sync, onUpdate: onUpdate).state
    }

    /// ``reSync(named:onUpdate:)`` by id.
    @discardableResult
    public func reSync(id: Int, onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> SyncState {
        guard let sync = try syncStatus(forId: id) else { throw Self.unknown("#\(id)") }
        return try await run(sync, onUpdate: onUpdate).state
    }

    /// Runs an existing sync up and says what happened to each record.
    /// - Throws: ``SyncError`` `unknownSync`, `wrongSyncType` for a sync down, or as a run.
    @discardableResult
    public func syncUp(named name: String, onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> SyncUpResult {
        guard let sync = try syncStatus(forName: name) else { throw Self.unknown(name) }
        guard sync.type == .syncUp else {
            throw SyncError(code: .wrongSyncType, reason: "it is a sync down: run it with reSync(named:)", sync: name)
        }
        return try await run(sync, onUpdate: onUpdate)
    }

    private static func unknown(_ name: String) -> SyncError {
        SyncError(code: .unknownSync, reason: "no sync has this name; create it first (createSyncs, or usersyncs.json)", sync: name)
    }

    /// Runs a sync: marks it running (refusing a second run), runs its task, saves it done or
    /// failed.
    private func run(_ sync: SyncState, onUpdate: SyncUpdateBlock?) async throws(SyncError) -> SyncUpResult {
        try begin(sync)
        defer { end(sync) }
        var sync = sync
        var started = false
        do throws(SyncError) {
            try requireSoups(of: sync)
            if sync.isStopped, sync.maxTimeStamp > 0 { sync.maxTimeStamp -= 1 }
            sync.totalSize = -1
            sync.status = .running
            sync.progress = 0
            sync.error = ""
            sync.startTime = millisecondsNow
            sync.endTime = 0
            try save(sync)
            started = true
            onUpdate?(sync)
            let result: SyncUpResult
            switch sync.target {
            case .down(let target):
                try await runSyncDown(&sync, target: target, onUpdate: onUpdate)
                result = SyncUpResult(state: sync)
            case .up(let target):
                result = try await runSyncUp(&sync, target: target, onUpdate: onUpdate)
                sync = result.state
            }
            sync.status = .done
            sync.progress = 100
            sync.endTime = millisecondsNow
            try save(sync)
            onUpdate?(sync)
            var done = result
            done.state = sync
            return done
        } catch {
            var failure = error.naming(sync: sync.label)
            // A cancelled task stops the sync, as the SDK's stop(): its next run resumes it.
            let cancelled = Task.isCancelled || error.code == .stopped || { if case .cancelled? = error.restError { true } else { false } }()
            if cancelled, error.code != .stopped {
                failure = SyncError(code: .stopped, reason: "the sync's task was cancelled: it stopped where it was; run it again to resume",
                                    sync: sync.label, restError: error.restError)
            }
            if started {
                sync.status = cancelled ? .stopped : .failed
                sync.error = cancelled ? "" : failure.description
                sync.endTime = millisecondsNow
                try? save(sync)
                onUpdate?(sync)
            }
            throw failure
        }
    }

    private func begin(_ sync: SyncState) throws(SyncError) {
        enum Refusal { case none, stopped(Activity.State), running }
        let refusal: Refusal = activity.withLock { activity in
            guard activity.state == .accepting else { return .stopped(activity.state) }
            return activity.running.insert(sync.id).inserted ? .none : .running
        }
        switch refusal {
        case .none: return
        case .running: throw SyncError(code: .syncAlreadyRunning, reason: "the sync is running already", sync: sync.label)
        case .stopped(let state):
            throw SyncError(code: .managerStopped, reason: "the sync manager is \(state.rawValue): restart it (restart(restartStoppedSyncs:)) before running syncs",
                            sync: sync.label)
        }
    }

    private func end(_ sync: SyncState) {
        activity.withLock { activity in
            activity.running.remove(sync.id)
            if activity.state == .stopRequested, activity.running.isEmpty { activity.state = .stopped }
        }
    }

    /// Whether a sync is running now (in this manager).
    public func isRunning(syncId id: Int) -> Bool { activity.withLock { $0.running.contains(id) } }

    /// Runs `body` as a ghost-cleaning run of a sync down (not running twice at once).
    func whileRunning<Result>(_ sync: SyncState, _ body: () async throws(SyncError) -> Result) async throws(SyncError) -> Result {
        try begin(sync)
        defer { end(sync) }
        return try await body()
    }

    // MARK: Saving

    var millisecondsNow: Int64 { SalesforceDateTime.millis(of: now()) }

    /// Saves a sync's state.
    func save(_ sync: SyncState) throws(SyncError) {
        _ = try storeCall { try store.upsert([sync.json], intoSoup: MobileSync.syncsSoupName) }
    }

    /// Runs store work in one transaction, with errors as ``SyncError``s.
    func transaction<Result>(_ body: (borrowing StoreTransaction) throws -> Result) throws(SyncError) -> Result {
        do {
            return try store.inTransaction(body)
        } catch let error as SyncError {
            throw error
        } catch let error as StoreError {
            throw SyncError.store(error)
        } catch {
            throw SyncError(code: .storeFailed, reason: "the store refused: \(error)")
        }
    }

    /// A store call, with its error as a ``SyncError``.
    func storeCall<Result>(_ body: () throws -> Result) throws(SyncError) -> Result {
        do {
            return try body()
        } catch let error as StoreError {
            throw SyncError.store(error)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(code: .storeFailed, reason: "the store refused: \(error)")
        }
    }

    /// Sends a request and returns its JSON body (`null` for an empty one).
    /// - Throws: ``SyncError`` `serverFailed` with the REST error; `responseTooLarge` naming the
    ///   page when its answer passed the client's limit.
    func send(_ request: RestRequest) async throws(SyncError) -> JSONValue {
        do throws(RestClientError) {
            let response = try await restClient.send(request: request)
            return response.data.isEmpty ? .null : try response.asJSON()
        } catch .responseTooLarge(let refused) {
            throw SyncError(code: .responseTooLarge,
                            reason: "the page \(request.method.rawValue) \(request.path) was refused, nothing of it written: "
                                + "it is larger than the REST client's limit (RestClient(maximumResponseBytes:)); raise the limit or lower the target's maxBatchSize",
                            path: request.path, restError: .responseTooLarge(refused))
        } catch {
            throw SyncError(code: .serverFailed, reason: "\(request.method.rawValue) \(request.path) failed", restError: error)
        }
    }
}
