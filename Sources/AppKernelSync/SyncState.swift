public import AppKernelCore
import AppKernelStore
import AppKernelREST

/// A sync and how far it got — the Mobile SDK's `SFSyncState`, kept in the store's `syncs_soup`
/// in the SDK's JSON form, so it survives a relaunch:
///
/// ```json
/// {"_soupEntryId": 1, "name": "syncDownAccounts", "type": "syncDown", "soupName": "Account",
///  "target": {"type": "soql", "iOSImpl": "SFSoqlSyncDownTarget", "query": "…", …},
///  "options": {"mergeMode": "OVERWRITE"}, "status": "DONE", "progress": 100, "totalSize": 2,
///  "maxTimeStamp": 1795514401000, "startTime": 1795514460000, "endTime": 1795514460042, "error": ""}
/// ```
public struct SyncState: Sendable, Hashable, CustomStringConvertible {
    /// Where a sync is (`SFSyncStateStatus`).
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// Created, never run.
        case new = "NEW"
        /// Stopped while running: its task was cancelled, or its process ended (found so when the
        /// sync manager opens the store). Its next run resumes it.
        case stopped = "STOPPED"
        /// Running.
        case running = "RUNNING"
        /// Finished.
        case done = "DONE"
        /// Failed: ``SyncState/error`` says why.
        case failed = "FAILED"
    }

    /// What the sync runs.
    public enum Target: Sendable, Hashable {
        /// A sync down.
        case down(SyncDownTarget)
        /// A sync up.
        case up(SyncUpTarget)
    }

    /// The sync's id: its entry's `_soupEntryId` in `syncs_soup`.
    public internal(set) var id: Int
    /// The sync's name (unnamed syncs have none).
    public var name: String?
    /// What it runs.
    public var target: Target
    /// Its options.
    public var options: SyncOptions
    /// The soup it fills or drains.
    public var soupName: String
    /// Where it is.
    public var status: Status
    /// How far the current or last run got, in percent.
    public var progress: Int
    /// How many records the current or last run handles (`-1` before it knows).
    public var totalSize: Int
    /// Sync down: the newest modification date seen (milliseconds since 1970; `-1`: none), where
    /// the next ``SyncManager/reSync(named:onUpdate:)`` resumes.
    public var maxTimeStamp: Int64
    /// When the last run started (milliseconds since 1970; 0 before the first).
    public var startTime: Int64
    /// When the last run ended (milliseconds since 1970; 0 while running or before the first).
    public var endTime: Int64
    /// Why the last run failed (empty otherwise).
    public var error: String

    /// Creates a state.
    public init(id: Int = 0, name: String?, target: Target, options: SyncOptions, soupName: String, status: Status = .new,
                progress: Int = 0, totalSize: Int = -1, maxTimeStamp: Int64 = -1, startTime: Int64 = 0, endTime: Int64 = 0, error: String = "") {
        self.id = id
        self.name = name
        self.target = target
        self.options = options
        self.soupName = soupName
        self.status = status
        self.progress = progress
        self.totalSize = totalSize
        self.maxTimeStamp = maxTimeStamp
        self.startTime = startTime
        self.endTime = endTime
        self.error = error
    }

    /// `syncDown` or `syncUp`.
    public var type: SyncType {
        if case .down = target { return .syncDown }
        return .syncUp
    }

    /// The merge mode of its options.
    public var mergeMode: MergeMode { options.mergeMode }
    /// Whether it finished.
    public var isDone: Bool { status == .done }
    /// Whether it failed.
    public var hasFailed: Bool { status == .failed }
    /// Whether it is running.
    public var isRunning: Bool { status == .running }
    /// Whether its process ended while it ran.
    public var isStopped: Bool { status == .stopped }

    /// The name, or `#id` for an unnamed sync (for messages).
    var label: String { name ?? "#\(id)" }

    // MARK: JSON

    /// The SDK's JSON form (`asDict`).
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string(type.rawValue), "soupName": .string(soupName), "options": options.json, "status": .string(status.rawValue),
            "progress": .int(progress), "totalSize": .int(totalSize), "maxTimeStamp": .int(Int(maxTimeStamp)),
            "startTime": .int(Int(startTime)), "endTime": .int(Int(endTime)), "error": .string(error),
        ]
        if id > 0 { members["_soupEntryId"] = .int(id) }
        if let name { members["name"] = .string(name) }
        switch target {
        case .down(let down): members["target"] = down.json
        case .up(let up): members["target"] = up.json
        }
        return .object(members)
    }

    /// Reads a state from its JSON form; its target and options are read with `usersyncs.json`'s
    /// rules (`SyncConfig.parseSyncs(_:soupNames:file:)`).
    /// - Throws: ``SyncError`` `invalidSyncState` naming the sync and what is wrong.
    public init(json: JSONValue) throws(SyncError) {
        guard let members = json.objectValue else {
            throw SyncError(code: .invalidSyncState, reason: "a sync state is a JSON object, not \(json)")
        }
        let name = members["name"]?.stringValue
        let label = name ?? members["_soupEntryId"].map { "#\($0)" } ?? "unnamed"
        guard let typeName = members["type"]?.stringValue, let type = SyncType(rawValue: typeName) else {
            throw SyncError(code: .invalidSyncState, reason: "its type is neither syncDown nor syncUp", sync: label)
        }
        guard let soupName = members["soupName"]?.stringValue, let target = members["target"] else {
            throw SyncError(code: .invalidSyncState, reason: "it lacks its soupName or target", sync: label)
        }
        let options = members["options"] ?? ["mergeMode": "OVERWRITE"]
        let document: JSONValue = ["syncs": [["syncName": .string(name ?? "unnamed"), "syncType": .string(typeName), "soupName": .string(soupName),
                                              "target": target, "options": options]]]
        let parsed: [SyncSpec]
        do throws(ConfigError) {
            parsed = try SyncConfig.parseSyncs(document.jsonData(), soupNames: [soupName], file: MobileSync.syncsSoupName)
        } catch {
            throw SyncError(code: .invalidSyncState, reason: "its target or options cannot be read: \(error)", sync: label, soup: soupName)
        }
        guard let spec = parsed.first else { throw SyncError(code: .invalidSyncState, reason: "it could not be read", sync: label) }
        let status = members["status"]?.stringValue.flatMap(Status.init(rawValue:)) ?? .failed
        self.init(id: members["_soupEntryId"]?.intValue ?? 0, name: name,
                  target: type == .syncDown ? .down(try SyncDownTarget(spec: spec)) : .up(try SyncUpTarget(spec: spec)),
                  options: SyncOptions(fieldlist: members["options"]?["fieldlist"]?.arrayValue?.compactMap(\.stringValue), mergeMode: spec.mergeMode),
                  soupName: soupName, status: status, progress: members["progress"]?.intValue ?? 0,
                  totalSize: members["totalSize"]?.intValue ?? -1, maxTimeStamp: Int64(members["maxTimeStamp"]?.intValue ?? -1),
                  startTime: Int64(members["startTime"]?.intValue ?? 0), endTime: Int64(members["endTime"]?.intValue ?? 0),
                  error: members["error"]?.stringValue ?? "")
    }

    /// The state as its JSON text.
    public var description: String { json.description }
}
