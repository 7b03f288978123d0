public import AppKernelCore
import AppKernelStore
import AppKernelREST

/// What a sync down fetches — the Mobile SDK's `SFSyncDownTarget` and its subclasses in one
/// value: the target type (`soql`, `sosl`, `mru`, `refresh`, `parent_children`, `layout`,
/// `metadata`), its query and its details, with the SDK's JSON form (`usersyncs.json`'s
/// `target`, and `target` in a sync state).
///
/// ```swift
/// let target = SyncDownTarget.soql("SELECT Id, Name FROM Account")
/// target.query    // "SELECT LastModifiedDate, Id, Name FROM Account ORDER BY LastModifiedDate"
/// ```
///
/// A SOQL target's query gets what a sync needs, as in the SDK: the id and modification-date
/// fields are selected when it does not select them, and it is ordered by the modification date
/// when it has no `ORDER BY` (so an interrupted sync's `maxTimeStamp` is safe to resume from).
public struct SyncDownTarget: Sendable, Hashable {
    /// The target type.
    public var queryType: SyncTargetType
    /// `soql`, `sosl`: the query.
    public var query: String?
    /// Everything else the target says (object types, field lists, the parent and children…).
    public var details: SyncTargetDetails

    /// The records' id field (`Id`).
    public var idFieldName: String { details.idFieldName }
    /// The records' modification date field (`LastModifiedDate`).
    public var modificationDateFieldName: String { details.modificationDateFieldName }

    /// The SDK's default page size for a SOQL target.
    public static let defaultMaxBatchSize = 2000
    /// The SDK's default number of ids a refresh target puts in one SOQL query.
    public static let defaultCountIdsPerSoql = 500

    /// Creates a target from its parts (a SOQL query is completed as described above).
    public init(queryType: SyncTargetType, query: String? = nil, details: SyncTargetDetails = SyncTargetDetails()) {
        self.queryType = queryType
        self.query = query
        self.details = details
        if queryType != .custom {   // a custom target keeps the class that runs it
            self.details.iOSImpl = nil
            self.details.androidImpl = nil
        }
        // The defaults the SDK writes, so a target reads back from its JSON equal to itself.
        if queryType == .soql {
            self.details.maxBatchSize = details.maxBatchSize ?? Self.defaultMaxBatchSize
            if let query { self.query = Self.completed(query, details: details) }
        }
        if queryType == .refresh { self.details.countIdsPerSoql = details.countIdsPerSoql ?? Self.defaultCountIdsPerSoql }
        if queryType == .parentChildren {
            self.details.parentSoqlFilter = details.parentSoqlFilter ?? ""
            self.details.relationshipType = details.relationshipType ?? .lookup
        }
    }

    /// The sync-down target of a `usersyncs.json` sync.
    /// - Throws: ``SyncError`` `wrongSyncType` for a sync up.
    public init(spec: SyncSpec) throws(SyncError) {
        guard spec.type == .syncDown, let type = spec.targetType else {
            throw SyncError(code: .wrongSyncType, reason: "a sync up has no sync-down target", sync: spec.name, soup: spec.soupName)
        }
        self.init(queryType: type, query: spec.query, details: spec.target)
    }

    // MARK: Factories

    /// A SOQL target (`SFSoqlSyncDownTarget`): pages of `maxBatchSize` records.
    public static func soql(_ query: String, maxBatchSize: Int? = nil) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.maxBatchSize = maxBatchSize
        return SyncDownTarget(queryType: .soql, query: query, details: details)
    }

    /// A SOSL target (`SFSoslSyncDownTarget`): the records a search finds.
    public static func sosl(_ query: String) -> SyncDownTarget {
        SyncDownTarget(queryType: .sosl, query: query)
    }

    /// An MRU target (`SFMruSyncDownTarget`): the object's recently used records, with `fieldlist`.
    public static func mru(objectType: String, fieldlist: [String]) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.sobjectType = objectType
        details.fieldlist = fieldlist
        return SyncDownTarget(queryType: .mru, details: details)
    }

    /// A refresh target (`SFRefreshSyncDownTarget`): fetches again, `countIdsPerSoql` ids a
    /// query, the records already in `soupName`.
    public static func refresh(soupName: String, objectType: String, fieldlist: [String], countIdsPerSoql: Int? = nil) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.soupName = soupName
        details.sobjectType = objectType
        details.fieldlist = fieldlist
        details.countIdsPerSoql = countIdsPerSoql
        return SyncDownTarget(queryType: .refresh, details: details)
    }

    /// A parent-children target (`SFParentChildrenSyncDownTarget`): parents with their
    /// children, each into its soup.
    public static func parentChildren(parent: RelatedObjectInfo, parentFieldlist: [String], parentSoqlFilter: String = "",
                                      children: RelatedObjectInfo, childrenFieldlist: [String],
                                      relationshipType: RelationshipType = .lookup) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.parent = parent
        details.children = children
        details.parentFieldlist = parentFieldlist
        details.parentSoqlFilter = parentSoqlFilter
        details.childrenFieldlist = childrenFieldlist
        details.relationshipType = relationshipType
        details.idFieldName = parent.idFieldName
        details.modificationDateFieldName = parent.modificationDateFieldName
        return SyncDownTarget(queryType: .parentChildren, details: details)
    }

    /// A layout target (`SFLayoutSyncDownTarget`): the object's UI API record layout.
    public static func layout(objectAPIName: String, formFactor: String? = nil, layoutType: String? = nil, mode: String? = nil,
                              recordTypeId: String? = nil) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.sobjectType = objectAPIName
        details.formFactor = formFactor
        details.layoutType = layoutType
        details.mode = mode
        details.recordTypeId = recordTypeId
        return SyncDownTarget(queryType: .layout, details: details)
    }

    /// A metadata target (`SFMetadataSyncDownTarget`): the object's describe.
    public static func metadata(objectType: String) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.sobjectType = objectType
        return SyncDownTarget(queryType: .metadata, details: details)
    }

    /// A briefcase target (`SFBriefcaseSyncDownTarget`): the records the org's briefcases assigned
    /// to the connected app name (Connect's `briefcase/priming-records`, paged by `relayToken`),
    /// fetched by id, `countIdsPerRetrieve` a request (at most 2000), each object type into its soup.
    public static func briefcase(_ infos: [BriefcaseObjectInfo], countIdsPerRetrieve: Int? = nil) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.briefcaseInfos = infos
        details.countIdsPerRetrieve = countIdsPerRetrieve
        return SyncDownTarget(queryType: .briefcase, details: details)
    }

    /// A custom target: the app's ``CustomSyncDownTarget`` registered as `className` in the
    /// manager's ``SyncManager/targets`` runs it; `properties` are its own keys.
    public static func custom(className: String, properties: [String: JSONValue] = [:]) -> SyncDownTarget {
        var details = SyncTargetDetails()
        details.iOSImpl = className
        details.customProperties = properties
        return SyncDownTarget(queryType: .custom, details: details)
    }

    // MARK: The SDK's form

    /// The Mobile SDK class that runs this target (written as `iOSImpl`, as the SDK does).
    public var implementationClassName: String {
        switch queryType {
        case .soql: "SFSoqlSyncDownTarget"
        case .sosl: "SFSoslSyncDownTarget"
        case .mru: "SFMruSyncDownTarget"
        case .refresh: "SFRefreshSyncDownTarget"
        case .parentChildren: "SFParentChildrenSyncDownTarget"
        case .layout: "SFLayoutSyncDownTarget"
        case .metadata: "SFMetadataSyncDownTarget"
        case .briefcase: "SFBriefcaseSyncDownTarget"
        case .custom: details.iOSImpl ?? "SFSyncDownTarget"
        }
    }

    /// The SDK's JSON form (`asDict`): `type`, `iOSImpl`, `idFieldName`,
    /// `modificationDateFieldName`, then the type's own keys.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["type": .string(queryType.rawValue), "idFieldName": .string(idFieldName),
                                            "modificationDateFieldName": .string(modificationDateFieldName)]
        members["iOSImpl"] = .string(implementationClassName)
        if queryType == .custom, let android = details.androidImpl { members["androidImpl"] = .string(android) }
        func strings(_ list: [String]?) -> JSONValue? { list.map { .array($0.map(JSONValue.string)) } }
        switch queryType {
        case .soql:
            members["query"] = query.map(JSONValue.string)
            members["maxBatchSize"] = details.maxBatchSize.map(JSONValue.int)
        case .sosl:
            members["query"] = query.map(JSONValue.string)
        case .mru:
            members["sobjectType"] = details.sobjectType.map(JSONValue.string)
            members["fieldlist"] = strings(details.fieldlist)
        case .refresh:
            members["soupName"] = details.soupName.map(JSONValue.string)
            members["sobjectType"] = details.sobjectType.map(JSONValue.string)
            members["fieldlist"] = strings(details.fieldlist)
            members["coundIdsPerSoql"] = details.countIdsPerSoql.map(JSONValue.int)   // sic: the iOS SDK's key
        case .parentChildren:
            members["parent"] = details.parent.map { Self.json($0, children: false) }
            members["children"] = details.children.map { Self.json($0, children: true) }
            members["parentFieldlist"] = strings(details.parentFieldlist)
            members["childrenFieldlist"] = strings(details.childrenFieldlist)
            members["parentSoqlFilter"] = .string(details.parentSoqlFilter ?? "")
            members["relationshipType"] = .string((details.relationshipType ?? .lookup).rawValue)
        case .layout:
            members["sobjectType"] = details.sobjectType.map(JSONValue.string)
            members["formFactor"] = details.formFactor.map(JSONValue.string)
            members["layoutType"] = details.layoutType.map(JSONValue.string)
            members["mode"] = details.mode.map(JSONValue.string)
            members["recordTypeId"] = details.recordTypeId.map(JSONValue.string)
        case .metadata:
            members["sobjectType"] = details.sobjectType.map(JSONValue.string)
        case .briefcase:
            members["infos"] = .array(details.briefcaseInfos.map { info in
                ["sobjectType": .string(info.sobjectType), "fieldlist": .array(info.fieldlist.map(JSONValue.string)),
                 "soupName": .string(info.soupName), "idFieldName": .string(info.idFieldName),
                 "modificationDateFieldName": .string(info.modificationDateFieldName)]
            })
            if let count = details.countIdsPerRetrieve { members["countIdsPerRetrieve"] = .int(count) }
        case .custom:
            for (key, value) in details.customProperties { members[key] = value }
        }
        return .object(members)
    }

    /// A parent or children info as the SDK writes it.
    static func json(_ info: RelatedObjectInfo, children: Bool) -> JSONValue {
        var members: [String: JSONValue] = ["sobjectType": .string(info.sobjectType), "soupName": .string(info.soupName),
                                            "idFieldName": .string(info.idFieldName),
                                            "modificationDateFieldName": .string(info.modificationDateFieldName)]
        if let external = info.externalIdFieldName { members["externalIdFieldName"] = .string(external) }
        if children {
            members["sobjectTypePlural"] = info.sobjectTypePlural.map(JSONValue.string)
            members["parentIdFieldName"] = info.parentIdFieldName.map(JSONValue.string)
        }
        return .object(members)
    }

    // MARK: SOQL

    /// The SOQL a sync runs: the id and modification date selected, ordered by the
    /// modification date unless the query orders itself (`modifyQueryIfNeeded`).
    static func completed(_ query: String, details: SyncTargetDetails) -> String {
        var mutator = SOQLMutator(query)
        var changed = false
        if !mutator.isSelectingField(details.modificationDateFieldName) {
            mutator.addSelectFields(details.modificationDateFieldName)
            changed = true
        }
        if !mutator.isSelectingField(details.idFieldName) {
            mutator.addSelectFields(details.idFieldName)
            changed = true
        }
        if !mutator.hasOrderBy {
            mutator.replaceOrderBy(details.modificationDateFieldName)
            changed = true
        }
        return changed ? mutator.soql : query
    }

    /// The SOQL of a run from `maxTimeStamp` (milliseconds; none when not positive): `WHERE
    /// <modification date> > <its date-time>` added.
    func soqlToRun(maxTimeStamp: Int64) -> String {
        guard let query else { return "" }
        guard maxTimeStamp > 0 else { return query }
        var mutator = SOQLMutator(query)
        mutator.addWherePredicates("\(modificationDateFieldName) > \(SalesforceDateTime.string(fromMillis: maxTimeStamp))")
        return mutator.soql
    }

    /// Whether the query orders by the modification date alone, so `maxTimeStamp` can move
    /// forward page by page.
    var isSortedByLatestModification: Bool {
        switch queryType {
        case .soql: query.map { SOQLMutator($0).isOrderingBy(modificationDateFieldName) } ?? false
        case .parentChildren: true
        default: false
        }
    }
}
