public import AppKernelStore
public import AppKernelREST

/// Why a sync could not run, or stopped: what went wrong, naming the sync, the soup and the path
/// concerned, with the underlying REST or store error.
///
/// A sync that fails after it started is saved `FAILED` with this error's description in its
/// state's `error`; pages written before the failure stay, the failing page is not written.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// No sync has that name or id.
        case unknownSync
        /// A sync of that name exists already (create a sync once; rerun it with `reSync`).
        case syncAlreadyExists
        /// The sync is running already.
        case syncAlreadyRunning
        /// A soup the sync reads or writes is not registered in the store.
        case soupNotFound
        /// The operation does not apply to this sync (ghosts of a sync up, a sync-up spec given
        /// to `syncDown`).
        case wrongSyncType
        /// A custom target (its `iOSImpl`) that no ``SyncTargetRegistry`` of the manager names:
        /// register it (`syncManager.targets`).
        case unsupportedTarget
        /// A custom target's own code threw (the error says what it threw).
        case customTargetFailed
        /// The manager is stopped, or stopping (``SyncManager/stop()``): no sync starts until
        /// ``SyncManager/restart(restartStoppedSyncs:onUpdate:)``.
        case managerStopped
        /// ``SyncManager/restart(restartStoppedSyncs:onUpdate:)`` on a manager that was not stopped.
        case managerNotStopped
        /// A record the server sent lacks the modification date field the target relies on
        /// (`LastModifiedDate` unless the target names another).
        case missingModificationDate
        /// A sync up record has no object type (`attributes.type`).
        case missingObjectType
        /// The server refused a call, or did not answer.
        case serverFailed
        /// A page (or another answer) from the server was larger than the REST client's limit
        /// (`RestClient(maximumResponseBytes:)`, 64 MiB unless set): the sync failed and nothing
        /// of that page was written. The error names the page's request; `restError` holds the
        /// limit. Raise the limit, or ask for smaller pages (`SyncDownTarget`'s `maxBatchSize`).
        case responseTooLarge
        /// The task running the sync was cancelled: the sync is saved `STOPPED` where it was.
        case stopped
        /// The store refused a read or a write.
        case storeFailed
        /// A sync state in `syncs_soup` that cannot be read.
        case invalidSyncState
    }

    /// What kind of problem it is.
    public var code: Code
    /// What went wrong, in a sentence.
    public var reason: String
    /// The sync (its name, or `#id` for an unnamed one).
    public var sync: String?
    /// The soup concerned.
    public var soup: String?
    /// The field path concerned.
    public var path: String?
    /// The REST error behind it.
    public var restError: RestClientError?
    /// The store error behind it.
    public var storeError: StoreError?

    /// Creates an error.
    public init(code: Code, reason: String, sync: String? = nil, soup: String? = nil, path: String? = nil,
                restError: RestClientError? = nil, storeError: StoreError? = nil) {
        self.code = code
        self.reason = reason
        self.sync = sync
        self.soup = soup
        self.path = path
        self.restError = restError
        self.storeError = storeError
    }

    /// "sync 'syncDownAccounts', soup 'Account', path 'LastModifiedDate': <reason>", then the
    /// underlying error.
    public var description: String {
        var places: [String] = []
        if let sync { places.append("sync '\(sync)'") }
        if let soup { places.append("soup '\(soup)'") }
        if let path { places.append("path '\(path)'") }
        var text = (places.isEmpty ? "" : places.joined(separator: ", ") + ": ") + reason
        if let restError { text += " (\(restError))" }
        if let storeError { text += " (\(storeError))" }
        return text
    }

    /// The same error, naming the sync (kept if it already names one).
    func naming(sync name: String) -> SyncError {
        var copy = self
        if copy.sync == nil { copy.sync = name }
        return copy
    }

    /// What a custom target threw, as a sync error: a ``SyncError`` as it is, a REST error as
    /// `serverFailed`, any other as `customTargetFailed`.
    static func custom(_ error: any Error, sync: String, doing: String) -> SyncError {
        switch error {
        case let error as SyncError: return error.naming(sync: sync)
        case let error as RestClientError: return SyncError(code: .serverFailed, reason: "\(doing) failed", sync: sync, restError: error)
        default: return SyncError(code: .customTargetFailed, reason: "\(doing) failed: \(error)", sync: sync)
        }
    }

    /// A store error, as a sync error naming its soup.
    static func store(_ error: StoreError, sync: String? = nil) -> SyncError {
        SyncError(code: .storeFailed, reason: "the store refused: \(error.reason)", sync: sync, soup: error.soup, path: error.path, storeError: error)
    }
}
