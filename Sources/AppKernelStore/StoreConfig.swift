import AppKernelCore
import Foundation

/// The type of a soup index — SmartStore's index types.
public enum IndexType: String, Sendable, Hashable, CaseIterable {
    /// A string index.
    case string
    /// An integer index.
    case integer
    /// A floating-point index.
    case floating
    /// A full-text index.
    case fullText = "full_text"
    /// A JSON1 index.
    case json1
}

/// One index of a soup.
public struct IndexSpec: Sendable, Hashable {
    /// The indexed field's path (`Id`, `Owner.Name`).
    public var path: String
    /// Its type.
    public var type: IndexType

    /// Creates an index spec.
    public init(path: String, type: IndexType) {
        self.path = path
        self.type = type
    }
}

/// A soup (a local table of records) and its indexes — an entry of `userstore.json`.
public struct SoupSpec: Sendable, Hashable {
    /// The soup's name.
    public var name: String
    /// Its indexes.
    public var indexes: [IndexSpec]

    /// Creates a soup spec.
    public init(name: String, indexes: [IndexSpec]) {
        self.name = name
        self.indexes = indexes
    }
}

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

/// Reads `userstore.json` and `usersyncs.json` in the Mobile SDK's format: every key the
/// Mobile SDK reads (iOS and Android), with its rules; what either SDK refuses — a missing
/// required key, an unknown type or enum value, empty `options` or `indexes` — is a
/// `ConfigError` naming the file, line and key path. Unlike the SDKs, which ignore keys they
/// do not read, an unknown key is refused too (a misspelt key would otherwise be lost in
/// silence); `custom` targets keep theirs for their implementation.
public enum StoreConfig {
    /// The default soups file's name.
    public static let soupsFileName = "userstore.json"
    /// The default syncs file's name.
    public static let syncsFileName = "usersyncs.json"

    /// Parses `{"soups": [{"soupName", "indexes": [{"path", "type"}]}]}`.
    /// - Throws: `ConfigError`: malformed JSON, a missing key, a wrong type, an unknown key or
    ///   index type, a duplicate soup name or index path — with the key path, line and column.
    public static func parseSoups(_ data: Data, file: String = soupsFileName) throws(ConfigError) -> [SoupSpec] {
        let root = try ConfigParser.parseJSON(data, file: file)
        try root.onlyKeys(["soups"])
        var soups: [SoupSpec] = []
        for entry in try root.required("soups").array() {
            try entry.onlyKeys(["soupName", "indexes"])
            let nameValue = try entry.required("soupName")
            let name = try nameValue.string()
            guard !name.isEmpty else { throw nameValue.error(.invalidValue, "a soup needs a name") }
            guard !soups.contains(where: { $0.name == name }) else { throw nameValue.error(.duplicateName, "the soup '\(name)' is defined twice") }
            var indexes: [IndexSpec] = []
            let indexList = try entry.required("indexes")
            guard !(try indexList.array().isEmpty) else {
                throw indexList.error(.invalidValue, "the soup '\(name)' needs at least one index (SmartStore refuses a soup without)")
            }
            for index in try indexList.array() {
                // `columnName` is read by the SDKs, which compute their own column names.
                try index.onlyKeys(["path", "type", "columnName"])
                _ = try index.member("columnName")?.string()
                let pathValue = try index.required("path")
                let path = try pathValue.string()
                guard !path.isEmpty else { throw pathValue.error(.invalidValue, "an index needs a path") }
                guard !indexes.contains(where: { $0.path == path }) else {
                    throw pathValue.error(.duplicateName, "the soup '\(name)' indexes '\(path)' twice")
                }
                indexes.append(IndexSpec(path: path, type: try index.required("type").oneOf(IndexType.self, what: "index type")))
            }
            soups.append(SoupSpec(name: name, indexes: indexes))
        }
        return soups
    }

    /// Parses `{"syncs": [{"syncName", "syncType", "soupName", "target", "options"}]}`.
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - soupNames: The soups that exist; a sync naming another is an error.
    ///   - file: The name errors give the file.
    /// - Throws: `ConfigError`: as ``parseSoups(_:file:)``, plus an unknown sync type, target
    ///   type or merge mode, a SOQL/SOSL target without a query, a duplicate sync name, a sync whose
    ///   soup does not exist.
    public static func parseSyncs(_ data: Data, soupNames: Set<String>, file: String = syncsFileName) throws(ConfigError) -> [SyncSpec] {
        let root = try ConfigParser.parseJSON(data, file: file)
        try root.onlyKeys(["syncs"])
        var syncs: [SyncSpec] = []
        for entry in try root.required("syncs").array() {
            try entry.onlyKeys(["syncName", "syncType", "soupName", "target", "options"])
            let nameValue = try entry.required("syncName")
            let name = try nameValue.string()
            guard !name.isEmpty else { throw nameValue.error(.invalidValue, "a sync needs a name") }
            guard !syncs.contains(where: { $0.name == name }) else { throw nameValue.error(.duplicateName, "the sync '\(name)' is defined twice") }
            let type = try entry.required("syncType").oneOf(SyncType.self, what: "sync type")
            let soupValue = try entry.required("soupName")
            let soupName = try soupValue.string()
            guard soupNames.contains(soupName) else {
                throw soupValue.error(.unknownSoup, "the soup '\(soupName)' does not exist; define it in \(soupsFileName) first")
            }
            var spec = SyncSpec(name: name, type: type, soupName: soupName)
            let target = try entry.required("target")
            switch type {
            case .syncDown: try readSyncDownTarget(target, into: &spec)
            case .syncUp: try readSyncUpTarget(target, into: &spec)
            }
            // Both SDKs fail on a sync without options (iOS also on empty ones): required.
            let options = try entry.required("options")
            try options.onlyKeys(["fieldlist", "mergeMode"])
            guard !(try options.object().isEmpty) else {
                throw options.error(.missingKey, "options needs a mergeMode (OVERWRITE or LEAVE_IF_CHANGED)", at: ConfigValue.keyPath(options.keyPath, member: "mergeMode"))
            }
            spec.fieldlist = try options.member("fieldlist")?.strings() ?? []
            spec.mergeMode = try options.required("mergeMode").oneOf(MergeMode.self, what: "merge mode")
            syncs.append(spec)
        }
        return syncs
    }

    // MARK: Targets

    private static let commonTargetKeys: Set<String> = ["type", "iOSImpl", "androidImpl", "idFieldName", "modificationDateFieldName"]

    /// The keys each sync-down target type reads, beyond the common ones.
    private static let syncDownKeys: [SyncTargetType: Set<String>] = [
        .soql: ["query", "maxBatchSize"],
        .sosl: ["query"],
        .mru: ["sobjectType", "fieldlist"],
        .refresh: ["sobjectType", "fieldlist", "soupName", "countIdsPerSoql", "coundIdsPerSoql"],
        .layout: ["sobjectType", "formFactor", "layoutType", "mode", "recordTypeId"],
        .metadata: ["sobjectType"],
        .briefcase: ["infos", "countIdsPerRetrieve"],
        .parentChildren: ["parent", "children", "relationshipType", "parentFieldlist", "childrenFieldlist", "parentSoqlFilter"],
    ]

    private static func readSyncDownTarget(_ target: ConfigValue, into spec: inout SyncSpec) throws(ConfigError) {
        let targetType = try target.required("type").oneOf(SyncTargetType.self, what: "target type")
        spec.targetType = targetType
        var details = try commonDetails(target)
        if targetType == .custom {
            // A custom target's implementation reads its own keys; both platforms need theirs.
            details.iOSImpl = try requiredString(target, "iOSImpl", "a custom target names its implementation classes")
            details.androidImpl = try requiredString(target, "androidImpl", "a custom target names its implementation classes")
            for (key, value) in try target.object() where !commonTargetKeys.contains(key) { details.customProperties[key] = value.jsonValue }
            spec.target = details
            return
        }
        try target.onlyKeys(commonTargetKeys.union(syncDownKeys[targetType] ?? []))
        switch targetType {
        case .soql, .sosl:
            spec.query = try requiredString(target, "query", "a \(targetType.rawValue) target needs a query")
            details.maxBatchSize = try target.member("maxBatchSize")?.int()
        case .mru, .refresh:
            details.sobjectType = try requiredString(target, "sobjectType", "a \(targetType.rawValue) target names its object type")
            details.fieldlist = try target.required("fieldlist").strings()
            if targetType == .refresh {
                details.soupName = try requiredString(target, "soupName", "a refresh target names the soup it refreshes")
                let count = try target.member("countIdsPerSoql")
                details.countIdsPerSoql = try (count != nil ? count : try target.member("coundIdsPerSoql"))?.int()
            }
        case .layout:
            details.sobjectType = try requiredString(target, "sobjectType", "a layout target names its object type")
            details.formFactor = try target.member("formFactor")?.oneOf(["Large", "Medium", "Small"], what: "form factor")
            details.layoutType = try target.member("layoutType")?.oneOf(["Compact", "Full"], what: "layout type")
            details.mode = try target.member("mode")?.oneOf(["Create", "Edit", "View"], what: "layout mode")
            details.recordTypeId = try target.member("recordTypeId")?.string()
        case .metadata:
            details.sobjectType = try requiredString(target, "sobjectType", "a metadata target names its object type")
        case .briefcase:
            let infos = try target.required("infos")
            guard !(try infos.array().isEmpty) else { throw infos.error(.invalidValue, "a briefcase target needs at least one info") }
            for info in try infos.array() {
                try info.onlyKeys(["sobjectType", "fieldlist", "soupName", "idFieldName", "modificationDateFieldName"])
                var object = BriefcaseObjectInfo(sobjectType: try requiredString(info, "sobjectType", "a briefcase info names its object type"),
                                                 fieldlist: try info.required("fieldlist").strings(),
                                                 soupName: try requiredString(info, "soupName", "a briefcase info names its soup"))
                object.idFieldName = try info.member("idFieldName")?.string() ?? "Id"
                object.modificationDateFieldName = try info.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
                details.briefcaseInfos.append(object)
            }
            details.countIdsPerRetrieve = try target.member("countIdsPerRetrieve")?.int()
        case .parentChildren:
            try readParentChildren(target, into: &details)
            details.parentFieldlist = try target.required("parentFieldlist").strings()
            details.childrenFieldlist = try target.required("childrenFieldlist").strings()
            // Android skips a parent_children sync-down without it; "" means no filter.
            details.parentSoqlFilter = try target.required("parentSoqlFilter").string()
        case .custom:
            break
        }
        spec.target = details
    }

    /// The implementation class names of the SDK's sync-up targets, by kind.
    private static let syncUpImplementations: [(kind: SyncUpKind, iOS: String, android: String)] = [
        (.singleRecord, "SFSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.SyncUpTarget"),
        (.batch, "SFBatchSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.BatchSyncUpTarget"),
        (.collection, "SFCollectionSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.CollectionSyncUpTarget"),
        (.parentChildren, "SFParentChildrenSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.ParentChildrenSyncUpTarget"),
    ]

    private static func readSyncUpTarget(_ target: ConfigValue, into spec: inout SyncSpec) throws(ConfigError) {
        var details = try commonDetails(target)
        // iOS fails on any sync-up `type` but `rest`; Android does not read it.
        if let type = try target.member("type") { _ = try type.oneOf(["rest"], what: "sync-up target type") }
        let known = syncUpImplementations.first { $0.iOS == details.iOSImpl || $0.android == details.androidImpl }
        let kind: SyncUpKind = details.iOSImpl == nil && details.androidImpl == nil ? .collection : known?.kind ?? .custom
        details.syncUpKind = kind
        if let known, let iOS = details.iOSImpl, let android = details.androidImpl, iOS != known.iOS || android != known.android {
            throw target.error(.invalidValue, "iOSImpl '\(iOS)' and androidImpl '\(android)' name different implementations")
        }
        let fieldKeys: Set<String> = ["createFieldlist", "updateFieldlist", "externalIdFieldName"]
        switch kind {
        case .custom:
            for (key, value) in try target.object() where !commonTargetKeys.contains(key) { details.customProperties[key] = value.jsonValue }
        case .parentChildren:
            try target.onlyKeys(commonTargetKeys.union(fieldKeys).union(["parent", "children", "relationshipType",
                                                                           "childrenCreateFieldlist", "childrenUpdateFieldlist"]))
            try readParentChildren(target, into: &details)
            details.childrenCreateFieldlist = try target.required("childrenCreateFieldlist").strings()
            details.childrenUpdateFieldlist = try target.required("childrenUpdateFieldlist").strings()
        case .singleRecord:
            try target.onlyKeys(commonTargetKeys.union(fieldKeys))
        case .batch, .collection:
            try target.onlyKeys(commonTargetKeys.union(fieldKeys).union(["maxBatchSize"]))
            details.maxBatchSize = try target.member("maxBatchSize")?.int()
        }
        spec.createFieldlist = try target.member("createFieldlist")?.strings()
        spec.updateFieldlist = try target.member("updateFieldlist")?.strings()
        details.externalIdFieldName = try target.member("externalIdFieldName")?.string()
        spec.target = details
    }

    /// The keys every target may have.
    private static func commonDetails(_ target: ConfigValue) throws(ConfigError) -> SyncTargetDetails {
        var details = SyncTargetDetails()
        details.iOSImpl = try target.member("iOSImpl")?.string()
        details.androidImpl = try target.member("androidImpl")?.string()
        details.idFieldName = try target.member("idFieldName")?.string() ?? "Id"
        details.modificationDateFieldName = try target.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
        return details
    }

    /// `parent`, `children` and `relationshipType` of a `parent_children` target.
    private static func readParentChildren(_ target: ConfigValue, into details: inout SyncTargetDetails) throws(ConfigError) {
        func info(_ key: String, children: Bool) throws(ConfigError) -> RelatedObjectInfo {
            let value = try target.required(key)
            var keys: Set<String> = ["sobjectType", "soupName", "idFieldName", "modificationDateFieldName", "externalIdFieldName"]
            if children { keys.formUnion(["sobjectTypePlural", "parentIdFieldName"]) }
            try value.onlyKeys(keys)
            var info = RelatedObjectInfo(sobjectType: try requiredString(value, "sobjectType", "the \(key) names its object type"),
                                         soupName: try requiredString(value, "soupName", "the \(key) names its soup"))
            info.idFieldName = try value.member("idFieldName")?.string() ?? "Id"
            info.modificationDateFieldName = try value.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
            info.externalIdFieldName = try value.member("externalIdFieldName")?.string()
            if children {
                info.sobjectTypePlural = try requiredString(value, "sobjectTypePlural", "the children name their relationship (e.g. Contacts)")
                info.parentIdFieldName = try requiredString(value, "parentIdFieldName", "the children name the field holding their parent's id")
            }
            return info
        }
        details.parent = try info("parent", children: false)
        details.children = try info("children", children: true)
        details.relationshipType = try target.required("relationshipType").oneOf(RelationshipType.self, what: "relationship type")
    }

    /// A required, non-empty string member.
    private static func requiredString(_ object: ConfigValue, _ key: String, _ reason: String) throws(ConfigError) -> String {
        guard let value = try object.member(key) else {
            throw object.error(.missingKey, reason, at: ConfigValue.keyPath(object.keyPath, member: key))
        }
        let text = try value.string()
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw value.error(.invalidValue, "is empty: \(reason)") }
        return text
    }
}
