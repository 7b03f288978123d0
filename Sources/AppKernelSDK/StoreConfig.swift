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

/// Reads `userstore.json` and `usersyncs.json` in the Mobile SDK's format, validating
/// everything the SDK silently ignores.
public enum StoreConfig {
    /// The default soups file's name.
    public static let soupsFileName = "userstore.json"
    /// The default syncs file's name.
    public static let syncsFileName = "usersyncs.json"

    /// Parses `{"soups": [{"soupName", "indexes": [{"path", "type"}]}]}`.
    /// - Throws: ``ConfigError``: malformed JSON, a missing key, a wrong type, an unknown key or
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
            for index in try entry.required("indexes").array() {
                try index.onlyKeys(["path", "type"])
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
    /// - Parameter soupNames: The soups that exist; a sync naming another is an error.
    /// - Throws: ``ConfigError``: as ``parseSoups(_:file:)``, plus an unknown sync type, target
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
            case .syncDown:
                try target.onlyKeys(["type", "query", "idFieldName", "modificationDateFieldName", "objectType", "fieldlist"])
                let targetType = try target.required("type").oneOf(SyncTargetType.self, what: "target type")
                spec.targetType = targetType
                if let query = try target.member("query") { spec.query = try query.string() }
                if targetType == .soql || targetType == .sosl {
                    guard let query = spec.query, !query.trimmingCharacters(in: .whitespaces).isEmpty else {
                        throw target.error(.missingKey, "a \(targetType.rawValue) target needs a query", at: ConfigValue.keyPath(target.keyPath, member: "query"))
                    }
                }
            case .syncUp:
                try target.onlyKeys(["createFieldlist", "updateFieldlist", "idFieldName", "modificationDateFieldName"])
                spec.createFieldlist = try target.member("createFieldlist")?.strings()
                spec.updateFieldlist = try target.member("updateFieldlist")?.strings()
            }
            if let options = try entry.member("options") {
                try options.onlyKeys(["fieldlist", "mergeMode"])
                spec.fieldlist = try options.member("fieldlist")?.strings() ?? []
                spec.mergeMode = try options.member("mergeMode")?.oneOf(MergeMode.self, what: "merge mode") ?? .overwrite
            }
            syncs.append(spec)
        }
        return syncs
    }
}
