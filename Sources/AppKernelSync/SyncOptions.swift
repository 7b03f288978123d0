public import AppKernelCore
import AppKernelStore

/// How a sync treats records — the Mobile SDK's `SFSyncOptions`: the merge mode, and for a sync
/// up the fields sent when the target names none of its own. Its JSON form is `usersyncs.json`'s
/// `options`: `{"fieldlist": […], "mergeMode": "OVERWRITE"}`.
public struct SyncOptions: Sendable, Hashable {
    /// Sync up: the fields sent (when the target has no `createFieldlist` / `updateFieldlist`).
    public var fieldlist: [String]?
    /// What happens to a record changed on both sides.
    public var mergeMode: MergeMode

    /// Creates options.
    public init(fieldlist: [String]? = nil, mergeMode: MergeMode = .overwrite) {
        self.fieldlist = fieldlist
        self.mergeMode = mergeMode
    }

    /// Options for a sync down (`newSyncOptionsForSyncDown:`).
    public static func forSyncDown(mergeMode: MergeMode = .overwrite) -> SyncOptions {
        SyncOptions(mergeMode: mergeMode)
    }

    /// Options for a sync up (`newSyncOptionsForSyncUp:mergeMode:`).
    public static func forSyncUp(fieldlist: [String], mergeMode: MergeMode = .overwrite) -> SyncOptions {
        SyncOptions(fieldlist: fieldlist, mergeMode: mergeMode)
    }

    /// The options of a sync spec from `usersyncs.json`.
    public init(spec: SyncSpec) {
        self.init(fieldlist: spec.fieldlist.isEmpty ? nil : spec.fieldlist, mergeMode: spec.mergeMode)
    }

    /// The SDK's JSON form (`asDict`): `mergeMode`, and `fieldlist` when there is one.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["mergeMode": .string(mergeMode.rawValue)]
        if let fieldlist { members["fieldlist"] = .array(fieldlist.map(JSONValue.string)) }
        return .object(members)
    }
}
