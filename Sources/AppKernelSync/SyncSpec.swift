public import AppKernelCore

/// Which way a sync goes.
public enum SyncType: String, Sendable, Hashable, CaseIterable {
    /// Server → soup.
    case syncDown
    /// Soup → server.
    case syncUp
}

/// What a sync-down fetches.
public enum SyncTargetType: String, Sendable, Hashable, CaseIterable {
    /// Most recently used records.
    case mru
    /// A SOQL query (needs `query`).
    case soql
    /// A SOSL search (needs `query`).
    case sosl
    /// Refresh the records already in the soup.
    case refresh
    /// A parent with its children.
    case parentChildren = "parent_children"
    /// An app-defined target.
    case custom
    /// An object's metadata.
    case metadata
    /// An object's layout.
    case layout
    /// A briefcase.
    case briefcase
}

/// What a sync does with a record changed on both sides.
public enum MergeMode: String, Sendable, Hashable, CaseIterable {
    /// The incoming version wins.
    case overwrite = "OVERWRITE"
    /// Keep the local change.
    case leaveIfChanged = "LEAVE_IF_CHANGED"
}

/// A sync — an entry of `usersyncs.json`.
public struct SyncSpec: Sendable, Hashable {
    /// The sync's name.
    public var name: String
    /// Its direction.
    public var type: SyncType
    /// The soup it fills or drains.
    public var soupName: String
    /// Sync-down: what it fetches.
    public var targetType: SyncTargetType?
    /// Sync-down SOQL / SOSL: the query.
    public var query: String?
    /// Sync-up: the fields sent when creating records.
    public var createFieldlist: [String]?
    /// Sync-up: the fields sent when updating records.
    public var updateFieldlist: [String]?
    /// The fields synced.
    public var fieldlist: [String]
    /// What happens to records changed on both sides.
    public var mergeMode: MergeMode
    /// Everything else the target says, key by key as the Mobile SDK reads it.
    public var target = SyncTargetDetails()

    /// Creates a sync spec.
    public init(name: String, type: SyncType, soupName: String, targetType: SyncTargetType? = nil, query: String? = nil,
                createFieldlist: [String]? = nil, updateFieldlist: [String]? = nil, fieldlist: [String] = [],
                mergeMode: MergeMode = .overwrite) {
        self.name = name
        self.type = type
        self.soupName = soupName
        self.targetType = targetType
        self.query = query
        self.createFieldlist = createFieldlist
        self.updateFieldlist = updateFieldlist
        self.fieldlist = fieldlist
        self.mergeMode = mergeMode
    }
}

/// How a parent and its children are related (`relationshipType`).
public enum RelationshipType: String, Sendable, Hashable, CaseIterable {
    /// The child cannot exist without its parent.
    case masterDetail = "MASTER_DETAIL"
    /// A plain lookup.
    case lookup = "LOOKUP"
}

/// The parent or the children of a `parent_children` target (the SDK's parent and children
/// info objects).
public struct RelatedObjectInfo: Sendable, Hashable {
    /// The object type (`Account`).
    public var sobjectType: String
    /// The soup its records live in.
    public var soupName: String
    /// Its id field.
    public var idFieldName = "Id"
    /// Its last-modified field.
    public var modificationDateFieldName = "LastModifiedDate"
    /// Its external-id field, if creates are upserts on it.
    public var externalIdFieldName: String?
    /// Children only: the relationship's plural name in a subquery (`Contacts`).
    public var sobjectTypePlural: String?
    /// Children only: the child's field that holds its parent's id (`AccountId`).
    public var parentIdFieldName: String?

    /// Creates an info.
    public init(sobjectType: String, soupName: String) {
        self.sobjectType = sobjectType
        self.soupName = soupName
    }
}

/// One object type a `briefcase` target fetches (an entry of its `infos`).
public struct BriefcaseObjectInfo: Sendable, Hashable {
    /// The object type.
    public var sobjectType: String
    /// The fields fetched.
    public var fieldlist: [String]
    /// The soup its records land in.
    public var soupName: String
    /// Its id field.
    public var idFieldName = "Id"
    /// Its last-modified field.
    public var modificationDateFieldName = "LastModifiedDate"

    /// Creates an info.
    public init(sobjectType: String, fieldlist: [String], soupName: String) {
        self.sobjectType = sobjectType
        self.fieldlist = fieldlist
        self.soupName = soupName
    }
}

/// Which sync-up implementation a target names (by its `iOSImpl` / `androidImpl`; none names
/// the default, the sObject-collection target).
public enum SyncUpKind: String, Sendable, Hashable, CaseIterable {
    /// sObject collections, up to 200 records a request (the default).
    case collection
    /// One REST request per record.
    case singleRecord
    /// Composite batches of up to 25 records.
    case batch
    /// A parent and its children.
    case parentChildren
    /// An app-defined implementation.
    case custom
}

/// Every key of a sync's `target` besides the type and query, as the Mobile SDK reads it.
/// Which keys apply depends on the target type; the parser refuses the others.
public struct SyncTargetDetails: Sendable, Hashable {
    /// The iOS implementation class (`iOSImpl`).
    public var iOSImpl: String?
    /// The Android implementation class (`androidImpl`).
    public var androidImpl: String?
    /// The id field (`Id` by default).
    public var idFieldName = "Id"
    /// The last-modified field (`LastModifiedDate` by default).
    public var modificationDateFieldName = "LastModifiedDate"
    /// `mru`, `refresh`, `layout`, `metadata`: the object type.
    public var sobjectType: String?
    /// `mru`, `refresh`: the fields fetched.
    public var fieldlist: [String]?
    /// `refresh`: the soup whose records are refreshed.
    public var soupName: String?
    /// `soql` sync-down, `batch`/`collection` sync-up: records per request (the SDK clamps it).
    public var maxBatchSize: Int?
    /// `refresh`: ids per SOQL request (`countIdsPerSoql`; iOS spells it `coundIdsPerSoql`).
    public var countIdsPerSoql: Int?
    /// `briefcase`: ids per retrieve request.
    public var countIdsPerRetrieve: Int?
    /// `layout`: `Large`, `Medium` or `Small`.
    public var formFactor: String?
    /// `layout`: `Compact` or `Full`.
    public var layoutType: String?
    /// `layout`: `Create`, `Edit` or `View`.
    public var mode: String?
    /// `layout`: the record type.
    public var recordTypeId: String?
    /// `briefcase`: the object types fetched.
    public var briefcaseInfos: [BriefcaseObjectInfo] = []
    /// `parent_children`: the parent.
    public var parent: RelatedObjectInfo?
    /// `parent_children`: the children.
    public var children: RelatedObjectInfo?
    /// `parent_children`: how they are related.
    public var relationshipType: RelationshipType?
    /// `parent_children` sync-down: the parent's fields.
    public var parentFieldlist: [String]?
    /// `parent_children` sync-down: the children's fields.
    public var childrenFieldlist: [String]?
    /// `parent_children` sync-down: a filter on the parents (a SOQL `WHERE` fragment).
    public var parentSoqlFilter: String?
    /// `parent_children` sync-up: the children's fields sent on create.
    public var childrenCreateFieldlist: [String]?
    /// `parent_children` sync-up: the children's fields sent on update.
    public var childrenUpdateFieldlist: [String]?
    /// Sync-up: the external-id field creates upsert on.
    public var externalIdFieldName: String?
    /// Sync-up: which implementation the target names.
    public var syncUpKind: SyncUpKind?
    /// `custom` targets: every other key, for the implementation to read.
    public var customProperties: [String: JSONValue] = [:]

    /// No details: the defaults.
    public init() {}
}
