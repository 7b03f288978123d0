public import AppKernelCore
import AppKernelStore

/// How a sync up sends local changes — the Mobile SDK's `SFSyncUpTarget` (one request a record),
/// `SFBatchSyncUpTarget` (composite requests of up to 25), `SFCollectionSyncUpTarget` (sObject
/// collections of up to 200, the default) and `SFParentChildrenSyncUpTarget` (a parent and its
/// children in one composite request; the children's fields are `childrenCreateFieldlist` /
/// `childrenUpdateFieldlist` of ``details``), with their JSON form.
///
/// Creates send `createFieldlist` (else the options' `fieldlist`), updates `updateFieldlist`
/// (else the `fieldlist`); the id and modification-date fields are never sent. With an
/// `externalIdFieldName`, a created record whose external id is set (and is not a local id) is
/// upserted on it.
public struct SyncUpTarget: Sendable, Hashable {
    /// Which implementation sends the records.
    public var kind: SyncUpKind
    /// The fields sent when creating (`nil`: the options' `fieldlist`).
    public var createFieldlist: [String]?
    /// The fields sent when updating (`nil`: the options' `fieldlist`).
    public var updateFieldlist: [String]?
    /// Everything else: id and modification-date field names, `externalIdFieldName`,
    /// `maxBatchSize`, a parent-children target's parent and children.
    public var details: SyncTargetDetails

    /// The records' id field (`Id`).
    public var idFieldName: String { details.idFieldName }
    /// The records' modification date field (`LastModifiedDate`).
    public var modificationDateFieldName: String { details.modificationDateFieldName }
    /// The external-id field creates upsert on.
    public var externalIdFieldName: String? { details.externalIdFieldName }

    /// The most records a composite request takes (`SFBatchSyncUpTarget`).
    public static let maxCompositeBatchSize = 25
    /// The most records an sObject collection request takes (`SFCollectionSyncUpTarget`).
    public static let maxCollectionBatchSize = 200

    /// Creates a target.
    public init(kind: SyncUpKind = .collection, createFieldlist: [String]? = nil, updateFieldlist: [String]? = nil,
                details: SyncTargetDetails = SyncTargetDetails()) {
        self.kind = kind
        self.createFieldlist = createFieldlist
        self.updateFieldlist = updateFieldlist
        self.details = details
        if kind != .custom {   // a custom target keeps the class that runs it
            self.details.iOSImpl = nil
            self.details.androidImpl = nil
        }
        self.details.syncUpKind = kind
        if kind == .batch || kind == .collection { self.details.maxBatchSize = maxBatchSize }
    }

    /// A target of `kind` with the usual options.
    public static func target(_ kind: SyncUpKind = .collection, createFieldlist: [String]? = nil, updateFieldlist: [String]? = nil,
                              externalIdFieldName: String? = nil, maxBatchSize: Int? = nil) -> SyncUpTarget {
        var details = SyncTargetDetails()
        details.externalIdFieldName = externalIdFieldName
        details.maxBatchSize = maxBatchSize
        return SyncUpTarget(kind: kind, createFieldlist: createFieldlist, updateFieldlist: updateFieldlist, details: details)
    }

    /// The sync-up target of a `usersyncs.json` sync.
    /// - Throws: ``SyncError`` `wrongSyncType` for a sync down.
    public init(spec: SyncSpec) throws(SyncError) {
        guard spec.type == .syncUp else {
            throw SyncError(code: .wrongSyncType, reason: "a sync down has no sync-up target", sync: spec.name, soup: spec.soupName)
        }
        self.init(kind: spec.target.syncUpKind ?? .collection, createFieldlist: spec.createFieldlist, updateFieldlist: spec.updateFieldlist,
                  details: spec.target)
    }

    /// A custom target: the app's ``CustomSyncUpTarget`` (or ``AdvancedSyncUpTarget``) registered
    /// as `className` in the manager's ``SyncManager/targets`` sends the records.
    public static func custom(className: String, properties: [String: JSONValue] = [:]) -> SyncUpTarget {
        var details = SyncTargetDetails()
        details.iOSImpl = className
        details.customProperties = properties
        return SyncUpTarget(kind: .custom, details: details)
    }

    /// How many records go in one request: the target's `maxBatchSize`, clamped to what the API
    /// takes (25 composite subrequests, 200 collection records); 1 for one request a record.
    public var maxBatchSize: Int {
        let limit = switch kind {
        case .batch: Self.maxCompositeBatchSize
        case .collection: Self.maxCollectionBatchSize
        default: 1
        }
        guard let given = details.maxBatchSize, given > 0 else { return limit }
        return min(given, limit)
    }

    /// The Mobile SDK class that runs this target.
    public var implementationClassName: String {
        switch kind {
        case .collection: "SFCollectionSyncUpTarget"
        case .batch: "SFBatchSyncUpTarget"
        case .singleRecord: "SFSyncUpTarget"
        case .parentChildren: "SFParentChildrenSyncUpTarget"
        case .custom: details.iOSImpl ?? "SFSyncUpTarget"
        }
    }

    /// The SDK's JSON form (`asDict`): `type: rest`, `iOSImpl`, the field names, the field
    /// lists, `externalIdFieldName`, and `maxBatchSize` for batch and collection targets.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["type": "rest", "iOSImpl": .string(implementationClassName), "idFieldName": .string(idFieldName),
                                            "modificationDateFieldName": .string(modificationDateFieldName)]
        if let createFieldlist { members["createFieldlist"] = .array(createFieldlist.map(JSONValue.string)) }
        if let updateFieldlist { members["updateFieldlist"] = .array(updateFieldlist.map(JSONValue.string)) }
        if let external = externalIdFieldName { members["externalIdFieldName"] = .string(external) }
        switch kind {
        case .batch, .collection:
            members["maxBatchSize"] = .int(maxBatchSize)
        case .parentChildren:
            members["parent"] = details.parent.map { SyncDownTarget.json($0, children: false) }
            members["children"] = details.children.map { SyncDownTarget.json($0, children: true) }
            members["relationshipType"] = .string((details.relationshipType ?? .lookup).rawValue)
            members["childrenCreateFieldlist"] = .array((details.childrenCreateFieldlist ?? []).map(JSONValue.string))
            members["childrenUpdateFieldlist"] = .array((details.childrenUpdateFieldlist ?? []).map(JSONValue.string))
        case .custom:
            members["type"] = nil
            members["iOSImpl"] = details.iOSImpl.map(JSONValue.string)
            members["androidImpl"] = details.androidImpl.map(JSONValue.string)
            for (key, value) in details.customProperties { members[key] = value }
        case .singleRecord:
            break
        }
        return .object(members)
    }
}
