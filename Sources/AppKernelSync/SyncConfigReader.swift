import AppKernelCore
import AppKernelStore
import Foundation

/// Reads `usersyncs.json` for ``SyncConfig``: refuses what the iOS SDK fails on, applies the
/// iOS SDK's default (with a warning) where it has one. Each rule names the iOS source it follows.
struct SyncConfigReader {
    let soupNames: Set<String>?
    let targets: SyncTargetRegistry?
    private(set) var warnings: [ConfigWarning] = []

    init(soupNames: Set<String>?, targets: SyncTargetRegistry?) {
        self.soupNames = soupNames
        self.targets = targets
    }

    mutating func warn(_ owner: ConfigValue, _ key: String?, _ message: String) {
        let path = key.map { ConfigValue.keyPath(owner.keyPath, member: $0) } ?? owner.keyPath
        warnings.append(ConfigWarning(file: owner.file, keyPath: path, line: owner.line, message: message))
    }

    mutating func read(_ root: ConfigValue) throws(ConfigError) -> [SyncSpec] {
        try root.onlyKeys(["syncs"])
        var syncs: [SyncSpec] = []
        for entry in try root.required("syncs").array() {
            try entry.onlyKeys(["syncName", "syncType", "soupName", "target", "options"])
            let nameValue = try entry.required("syncName")
            let name = try nameValue.string()
            guard !name.isEmpty else { throw nameValue.error(.invalidValue, "a sync needs a name") }
            guard !syncs.contains(where: { $0.name == name }) else { throw nameValue.error(.duplicateName, "the sync '\(name)' is defined twice") }
            // SFSyncState syncTypeFromString reads anything but "syncDown" as a sync up: a typo
            // would send local data up, so an unknown type is refused.
            let type = try entry.required("syncType").oneOf(SyncType.self, what: "sync type")
            let soupValue = try entry.required("soupName")
            let soupName = try soupValue.string()
            if let soupNames, !soupNames.contains(soupName) {
                throw soupValue.error(.unknownSoup, "the soup '\(soupName)' does not exist; define it in \(StoreConfig.soupsFileName) first")
            }
            var spec = SyncSpec(name: name, type: type, soupName: soupName)
            switch type {
            case .syncDown: try readSyncDownTarget(entry.required("target"), into: &spec)
            case .syncUp:
                // SFSyncUpTarget newFromDict: no target is the default (sObject collections).
                if let target = try entry.member("target") {
                    try readSyncUpTarget(target, into: &spec)
                } else {
                    warn(entry, "target", "no target: the default sync up (sObject collections, SFCollectionSyncUpTarget) applies")
                    spec.target.syncUpKind = .collection
                }
            }
            try readOptions(entry, into: &spec)
            syncs.append(spec)
        }
        return syncs
    }

    /// `options`. SFSyncOptions newFromDict makes no options of a missing or empty object.
    /// No options: iOS fails creating the sync (SFSDKSyncsConfig hands `nil` to SFSyncState's
    /// dictionary literal) but reads a stored state without options as OVERWRITE; AppKernel
    /// applies that (DESIGN, "config files"). No `mergeMode`: OVERWRITE (`mergeModeFromString:nil`).
    private mutating func readOptions(_ entry: ConfigValue, into spec: inout SyncSpec) throws(ConfigError) {
        guard let options = try entry.member("options"), !(try options.object().isEmpty) else {
            warn(entry, "options", "no options: merge mode OVERWRITE applies (the iOS SDK fails creating such a sync; it reads a stored one so); "
                 + "add \"options\": {\"mergeMode\": \"OVERWRITE\"} or \"LEAVE_IF_CHANGED\"")
            return
        }
        try options.onlyKeys(["fieldlist", "mergeMode"])
        spec.fieldlist = try options.member("fieldlist")?.strings() ?? []
        if let mode = try options.member("mergeMode") {
            spec.mergeMode = try mode.oneOf(MergeMode.self, what: "merge mode")
        } else {
            warn(options, "mergeMode", "no mergeMode: OVERWRITE applies (SFSyncState mergeModeFromString)")
        }
    }

    // MARK: Sync-down targets

    static let commonTargetKeys: Set<String> = ["type", "iOSImpl", "androidImpl", "idFieldName", "modificationDateFieldName"]

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

    /// The iOS SDK's own sync-down classes, by target type.
    static let syncDownClasses: [String: SyncTargetType] = [
        "SFSoqlSyncDownTarget": .soql, "SFSoslSyncDownTarget": .sosl, "SFMruSyncDownTarget": .mru, "SFRefreshSyncDownTarget": .refresh,
        "SFParentChildrenSyncDownTarget": .parentChildren, "SFLayoutSyncDownTarget": .layout, "SFMetadataSyncDownTarget": .metadata,
        "SFBriefcaseSyncDownTarget": .briefcase,
    ]

    private mutating func readSyncDownTarget(_ target: ConfigValue, into spec: inout SyncSpec) throws(ConfigError) {
        var details = try Self.commonDetails(target)
        // SFSyncDownTarget newFromDict: an iOSImpl runs that class whatever the type says; no
        // iOSImpl and a type it does not know (or "custom") makes no target — refused.
        let typeValue = try target.member("type")
        var targetType: SyncTargetType
        if let impl = details.iOSImpl, !impl.isEmpty {
            if let builtIn = Self.syncDownClasses[impl] {
                targetType = builtIn
                if let typeValue, try typeValue.string() != builtIn.rawValue {
                    warn(target, "type", "'\(try typeValue.string())' is ignored: iOSImpl \(impl) runs a \(builtIn.rawValue) target")
                }
            } else {
                targetType = .custom
            }
        } else {
            guard let typeValue else {
                throw target.error(.missingKey, "a sync-down target needs a type (or an iOSImpl naming its class)",
                                   at: ConfigValue.keyPath(target.keyPath, member: "type"))
            }
            targetType = try typeValue.oneOf(SyncTargetType.self, what: "target type")
            if targetType == .custom {
                throw target.error(.missingKey, "a custom target names its class in iOSImpl (and registers it in a SyncTargetRegistry)",
                                   at: ConfigValue.keyPath(target.keyPath, member: "iOSImpl"))
            }
        }
        spec.targetType = targetType
        if targetType == .custom {
            // The class reads its own keys (initWithDict:): they stay for its factory.
            for (key, value) in try target.object() where !Self.commonTargetKeys.contains(key) { details.customProperties[key] = value.jsonValue }
            try requireRegistered(details.iOSImpl ?? "", target: target, syncUp: false)
            spec.target = details
            return
        }
        try target.onlyKeys(Self.commonTargetKeys.union(Self.syncDownKeys[targetType] ?? []))
        switch targetType {
        case .soql, .sosl:
            spec.query = try Self.requiredString(target, "query", "a \(targetType.rawValue) target needs a query")
            details.maxBatchSize = try target.member("maxBatchSize")?.int()
        case .mru, .refresh:
            details.sobjectType = try Self.requiredString(target, "sobjectType", "a \(targetType.rawValue) target names its object type")
            details.fieldlist = try target.required("fieldlist").strings()
            if targetType == .refresh {
                details.soupName = try Self.requiredString(target, "soupName", "a refresh target names the soup it refreshes")
                let count = try target.member("countIdsPerSoql")
                details.countIdsPerSoql = try (count != nil ? count : try target.member("coundIdsPerSoql"))?.int()
            }
        case .layout:
            details.sobjectType = try Self.requiredString(target, "sobjectType", "a layout target names its object type")
            details.formFactor = try target.member("formFactor")?.oneOf(["Large", "Medium", "Small"], what: "form factor")
            details.layoutType = try target.member("layoutType")?.oneOf(["Compact", "Full"], what: "layout type")
            details.mode = try target.member("mode")?.oneOf(["Create", "Edit", "View"], what: "layout mode")
            details.recordTypeId = try target.member("recordTypeId")?.string()
        case .metadata:
            details.sobjectType = try Self.requiredString(target, "sobjectType", "a metadata target names its object type")
        case .briefcase:
            try readBriefcase(target, into: &details)
        case .parentChildren:
            try readParentChildren(target, into: &details)
            try readParentChildrenSyncDown(target, into: &details)
        case .custom:
            break
        }
        spec.target = details
    }

    /// BriefcaseSyncDownTarget / BriefcaseObjectInfo: `infos` (each `sobjectType`, `fieldlist`,
    /// `soupName`; `idFieldName` and `modificationDateFieldName` defaulted) and `countIdsPerRetrieve`.
    private func readBriefcase(_ target: ConfigValue, into details: inout SyncTargetDetails) throws(ConfigError) {
        let infos = try target.required("infos")
        guard !(try infos.array().isEmpty) else { throw infos.error(.invalidValue, "a briefcase target needs at least one info") }
        for info in try infos.array() {
            try info.onlyKeys(["sobjectType", "fieldlist", "soupName", "idFieldName", "modificationDateFieldName"])
            var object = BriefcaseObjectInfo(sobjectType: try Self.requiredString(info, "sobjectType", "a briefcase info names its object type"),
                                             fieldlist: try info.required("fieldlist").strings(),
                                             soupName: try Self.requiredString(info, "soupName", "a briefcase info names its soup"))
            object.idFieldName = try info.member("idFieldName")?.string() ?? "Id"
            object.modificationDateFieldName = try info.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
            details.briefcaseInfos.append(object)
        }
        details.countIdsPerRetrieve = try target.member("countIdsPerRetrieve")?.int()
    }

    /// SFParentChildrenSyncDownTarget initWithDict: no `parentSoqlFilter` builds the query with no
    /// filter; no field lists select only the id and modification date.
    private mutating func readParentChildrenSyncDown(_ target: ConfigValue, into details: inout SyncTargetDetails) throws(ConfigError) {
        for (key, isParent) in [("parentFieldlist", true), ("childrenFieldlist", false)] {
            let list = try target.member(key)?.strings()
            if list == nil { warn(target, key, "no \(key): only the id and modification date fields are fetched") }
            if isParent { details.parentFieldlist = list ?? [] } else { details.childrenFieldlist = list ?? [] }
        }
        if let filter = try target.member("parentSoqlFilter") {
            details.parentSoqlFilter = try filter.string()
        } else {
            details.parentSoqlFilter = ""
            warn(target, "parentSoqlFilter", "no parentSoqlFilter: every parent is synced (the iOS SDK builds the query without a filter; "
                 + "Android skips such a sync); write \"parentSoqlFilter\": \"\" to say so")
        }
    }

    // MARK: Sync-up targets

    /// The implementation class names of the SDK's sync-up targets, by kind.
    private static let syncUpImplementations: [(kind: SyncUpKind, iOS: String, android: String)] = [
        (.singleRecord, "SFSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.SyncUpTarget"),
        (.batch, "SFBatchSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.BatchSyncUpTarget"),
        (.collection, "SFCollectionSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.CollectionSyncUpTarget"),
        (.parentChildren, "SFParentChildrenSyncUpTarget", "com.salesforce.androidsdk.mobilesync.target.ParentChildrenSyncUpTarget"),
    ]

    private mutating func readSyncUpTarget(_ target: ConfigValue, into spec: inout SyncSpec) throws(ConfigError) {
        var details = try Self.commonDetails(target)
        let iOS = details.iOSImpl.flatMap { $0.isEmpty ? nil : $0 }
        // SFSyncUpTarget newFromDict: an iOSImpl runs that class and the type is not read; with
        // none, a type other than "rest" makes no target — refused.
        if iOS == nil, let type = try target.member("type") { _ = try type.oneOf(["rest"], what: "sync-up target type") }
        let kind: SyncUpKind
        if let iOS {
            kind = Self.syncUpImplementations.first { $0.iOS == iOS }?.kind ?? .custom
            if let android = details.androidImpl, let other = Self.syncUpImplementations.first(where: { $0.android == android }), other.kind != kind {
                warn(target, "androidImpl", "names another implementation than iOSImpl '\(iOS)'; the iOSImpl runs, as on iOS")
            }
        } else if let android = details.androidImpl {
            kind = Self.syncUpImplementations.first { $0.android == android }?.kind ?? .custom
        } else {
            kind = .collection
        }
        details.syncUpKind = kind
        let fieldKeys: Set<String> = ["createFieldlist", "updateFieldlist", "externalIdFieldName"]
        switch kind {
        case .custom:
            for (key, value) in try target.object() where !Self.commonTargetKeys.contains(key) { details.customProperties[key] = value.jsonValue }
            if iOS != nil { try requireRegistered(iOS ?? "", target: target, syncUp: true) }
        case .parentChildren:
            try target.onlyKeys(Self.commonTargetKeys.union(fieldKeys).union(["parent", "children", "relationshipType",
                                                                                "childrenCreateFieldlist", "childrenUpdateFieldlist"]))
            try readParentChildren(target, into: &details)
            details.childrenCreateFieldlist = try target.required("childrenCreateFieldlist").strings()
            details.childrenUpdateFieldlist = try target.required("childrenUpdateFieldlist").strings()
        case .singleRecord:
            try target.onlyKeys(Self.commonTargetKeys.union(fieldKeys))
        case .batch, .collection:
            try target.onlyKeys(Self.commonTargetKeys.union(fieldKeys).union(["maxBatchSize"]))
            details.maxBatchSize = try target.member("maxBatchSize")?.int()
        }
        spec.createFieldlist = try target.member("createFieldlist")?.strings()
        spec.updateFieldlist = try target.member("updateFieldlist")?.strings()
        details.externalIdFieldName = try target.member("externalIdFieldName")?.string()
        spec.target = details
    }

    /// With a registry, a custom class it does not name is refused at load.
    private func requireRegistered(_ className: String, target: ConfigValue, syncUp: Bool) throws(ConfigError) {
        guard let targets else { return }
        let known = syncUp ? targets.syncUpClassNames : targets.syncDownClassNames
        guard !known.contains(className) else { return }
        let register = syncUp ? "registerSyncUp" : "registerSyncDown"
        throw ConfigError(code: .unknownValue, file: target.file, keyPath: ConfigValue.keyPath(target.keyPath, member: "iOSImpl"), line: target.line,
                          reason: "no \(syncUp ? "sync-up" : "sync-down") target class '\(className)' is registered; "
                              + "register it: targets.\(register)(\"\(className)\") { \(className)(dict: $0) }")
    }

    // MARK: Shared

    /// The keys every target may have (SFSyncTarget initWithDict: empty names read as the defaults).
    private static func commonDetails(_ target: ConfigValue) throws(ConfigError) -> SyncTargetDetails {
        var details = SyncTargetDetails()
        details.iOSImpl = try target.member("iOSImpl")?.string()
        details.androidImpl = try target.member("androidImpl")?.string()
        details.idFieldName = try target.member("idFieldName")?.string() ?? "Id"
        details.modificationDateFieldName = try target.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
        return details
    }

    /// `parent`, `children` and `relationshipType` of a `parent_children` target.
    private mutating func readParentChildren(_ target: ConfigValue, into details: inout SyncTargetDetails) throws(ConfigError) {
        func info(_ key: String, children: Bool) throws(ConfigError) -> RelatedObjectInfo {
            let value = try target.required(key)
            var keys: Set<String> = ["sobjectType", "soupName", "idFieldName", "modificationDateFieldName", "externalIdFieldName"]
            if children { keys.formUnion(["sobjectTypePlural", "parentIdFieldName"]) }
            try value.onlyKeys(keys)
            var info = RelatedObjectInfo(sobjectType: try Self.requiredString(value, "sobjectType", "the \(key) names its object type"),
                                         soupName: try Self.requiredString(value, "soupName", "the \(key) names its soup"))
            info.idFieldName = try value.member("idFieldName")?.string() ?? "Id"
            info.modificationDateFieldName = try value.member("modificationDateFieldName")?.string() ?? "LastModifiedDate"
            info.externalIdFieldName = try value.member("externalIdFieldName")?.string()
            if children {
                info.sobjectTypePlural = try Self.requiredString(value, "sobjectTypePlural", "the children name their relationship (e.g. Contacts)")
                info.parentIdFieldName = try Self.requiredString(value, "parentIdFieldName", "the children name the field holding their parent's id")
            }
            return info
        }
        details.parent = try info("parent", children: false)
        details.children = try info("children", children: true)
        // SFParentChildrenSyncHelper relationshipTypeFromString: anything but MASTER_DETAIL is a
        // lookup. Missing: LOOKUP, with a warning; misspelt: refused.
        if let type = try target.member("relationshipType") {
            details.relationshipType = try type.oneOf(RelationshipType.self, what: "relationship type")
        } else {
            details.relationshipType = .lookup
            warn(target, "relationshipType", "no relationshipType: LOOKUP applies")
        }
    }

    /// A required, non-empty string member.
    static func requiredString(_ object: ConfigValue, _ key: String, _ reason: String) throws(ConfigError) -> String {
        guard let value = try object.member(key) else {
            throw object.error(.missingKey, reason, at: ConfigValue.keyPath(object.keyPath, member: key))
        }
        let text = try value.string()
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw value.error(.invalidValue, "is empty: \(reason)") }
        return text
    }
}
