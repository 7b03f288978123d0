public import AppKernelCore
import AppKernelStore
public import Foundation

/// Reads `usersyncs.json` in the Mobile SDK's format: every key the Mobile SDK reads (iOS and
/// Android), with its rules; what either SDK refuses — a missing required key, an unknown type or
/// enum value, empty `options` — is a `ConfigError` naming the file, line and key path. Unlike
/// the SDKs, which ignore keys they do not read, an unknown key is refused too (a misspelt key
/// would otherwise be lost in silence); `custom` targets keep theirs for their implementation.
/// The soups the syncs fill come from `userstore.json` (`StoreConfig.parseSoups(_:file:)`).
public enum SyncConfig {
    /// The default syncs file's name.
    public static let syncsFileName = "usersyncs.json"

    /// Parses `{"syncs": [{"syncName", "syncType", "soupName", "target", "options"}]}`.
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - soupNames: The soups that exist; a sync naming another is an error.
    ///   - file: The name errors give the file.
    /// - Throws: `ConfigError`: as `StoreConfig.parseSoups(_:file:)`, plus an unknown sync type, target
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
                throw soupValue.error(.unknownSoup, "the soup '\(soupName)' does not exist; define it in \(StoreConfig.soupsFileName) first")
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
