public import AppKernelCore
public import Foundation

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

/// Reads `userstore.json` in the Mobile SDK's format: every key the Mobile SDK reads (iOS and
/// Android), with its rules; what either SDK refuses — a missing required key, an unknown index
/// type, empty `indexes` — is a `ConfigError` naming the file, line and key path. Unlike the
/// SDKs, which ignore keys they do not read, an unknown key is refused too (a misspelt key would
/// otherwise be lost in silence). `usersyncs.json` is MobileSync's: AppKernelSync's `SyncConfig`
/// reads it.
public enum StoreConfig {
    /// The default soups file's name.
    public static let soupsFileName = "userstore.json"

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
}
