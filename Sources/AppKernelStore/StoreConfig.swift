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

/// `userstore.json` in the Mobile SDK's format (`{"soups": [{"soupName", "indexes": [{"path",
/// "type"}]}]}`), read as the iOS SDK reads it (`SFSDKStoreConfig`, `SFSoupIndex`,
/// `registerSoup:withIndexSpecs:`):
///
/// - **Refused** (a `ConfigError` naming file, line and key path) where the iOS SDK fails: the
///   file is not JSON (iOS registers no soup at all), the root is not an object or `soups` not
///   an array of objects (iOS crashes), a soup without a name or without indexes (iOS throws
///   "Bogus soupName" / "Bogus indexSpecs" and registers nothing for it), an index that is not an
///   object, whose `path` is missing, empty or not a string, or whose `type` is not a string.
/// - **Refused on purpose** though iOS goes on, as in `usersyncs.json`: an unknown key (iOS
///   ignores it: a misspelt key would be lost in silence) and an unknown index `type` (iOS makes
///   it a TEXT column: a misspelt `integr` would compare numbers as text).
/// - **Loaded with iOS's default and a `ConfigWarning`** in ``warnings`` where iOS goes on: no
///   `soups` (no soups), a soup defined twice (the first kept; iOS skips a soup that exists), a
///   path indexed twice in a soup (the last kept; iOS queries the last index of a path), a
///   missing index `type` (a `string` index: iOS makes it a TEXT column).
///
/// ``parseSoups(_:file:)`` is the strict reader: every warning of ``load(_:file:)`` is refused
/// there, as a `ConfigError` at the same key path.
///
/// ```swift
/// let config = try StoreConfig.load(Data(#"{"soups": [{"soupName": "A", "indexes": [{"path": "Id"}]}]}"#.utf8))
/// // config.soups: A, Id indexed as string; config.warnings: soups[0].indexes[0].type
/// ```
/// `usersyncs.json` is MobileSync's: AppKernelSync's `SyncConfig` reads it.
public struct StoreConfig: Sendable, Hashable {
    /// The default soups file's name.
    public static let soupsFileName = "userstore.json"

    /// The soups, in the file's order (a soup defined twice: its first definition).
    public var soups: [SoupSpec]
    /// What the file says that the iOS SDK tolerates, and the default applied for each.
    public var warnings: [ConfigWarning]

    /// Creates a configuration.
    public init(soups: [SoupSpec], warnings: [ConfigWarning] = []) {
        self.soups = soups
        self.warnings = warnings
    }

    /// Reads `userstore.json` as the iOS SDK does: what it fails on is refused, what it tolerates
    /// loads with its default and a warning (see ``StoreConfig``).
    /// - Throws: `ConfigError` with the key path, line and column, for what the iOS SDK fails on.
    public static func load(_ data: Data, file: String = soupsFileName) throws(ConfigError) -> StoreConfig {
        var reader = Reader(file: file, strict: false)
        let soups = try reader.soups(ConfigParser.parseJSON(data, file: file))
        return StoreConfig(soups: soups, warnings: reader.warnings)
    }

    /// ``load(_:file:)`` for a JSON string.
    public static func load(json: String, file: String = soupsFileName) throws(ConfigError) -> StoreConfig {
        try load(Data(json.utf8), file: file)
    }

    /// Parses `userstore.json` strictly: what ``load(_:file:)`` refuses, and every warning it
    /// would give, is a `ConfigError`.
    /// - Throws: `ConfigError`: malformed JSON, a missing key, a wrong type, an unknown key or
    ///   index type, a duplicate soup name or index path — with the key path, line and column.
    public static func parseSoups(_ data: Data, file: String = soupsFileName) throws(ConfigError) -> [SoupSpec] {
        var reader = Reader(file: file, strict: true)
        return try reader.soups(ConfigParser.parseJSON(data, file: file))
    }

    /// One reading of the file: in strict mode a tolerated problem is thrown, otherwise it
    /// becomes a warning saying what applies.
    private struct Reader {
        let file: String
        let strict: Bool
        var warnings: [ConfigWarning] = []

        mutating func tolerate(_ error: ConfigError, applying: String) throws(ConfigError) {
            if strict { throw error }
            warnings.append(ConfigWarning(file: file, keyPath: error.keyPath, line: error.line, message: "\(error.reason); \(applying)"))
        }

        mutating func soups(_ root: ConfigValue) throws(ConfigError) -> [SoupSpec] {
            try root.onlyKeys(["soups"])   // unknown keys refused, as usersyncs.json's: a misspelling is not lost
            guard let list = try root.member("soups") else {
                try tolerate(root.error(.missingKey, "the required key 'soups' is missing", at: "soups"),
                             applying: "no soups are registered (the iOS SDK's \"no store config\")")
                return []
            }
            var soups: [SoupSpec] = []
            for entry in try list.array() {
                _ = try entry.object()
                let nameValue = try entry.required("soupName")
                let name = try nameValue.string()
                guard !name.isEmpty else { throw nameValue.error(.invalidValue, "a soup needs a name") }
                guard !soups.contains(where: { $0.name == name }) else {
                    try tolerate(nameValue.error(.duplicateName, "the soup '\(name)' is defined twice"),
                                 applying: "this definition is skipped and the first kept, as the iOS SDK skips a soup that exists")
                    continue
                }
                try entry.onlyKeys(["soupName", "indexes"])
                soups.append(SoupSpec(name: name, indexes: try indexes(entry, soup: name)))
            }
            return soups
        }

        mutating func indexes(_ entry: ConfigValue, soup name: String) throws(ConfigError) -> [IndexSpec] {
            let indexList = try entry.required("indexes")
            guard !(try indexList.array().isEmpty) else {
                throw indexList.error(.invalidValue, "the soup '\(name)' needs at least one index (SmartStore refuses a soup without)")
            }
            var indexes: [IndexSpec] = []
            for index in try indexList.array() {
                // `columnName` is read by the SDKs, which compute their own column names.
                try index.onlyKeys(["path", "type", "columnName"])
                if let columnName = try index.member("columnName"), (try? columnName.string()) == nil {
                    try tolerate(columnName.error(.wrongType, "expected a string, found \(columnName.typeName)"), applying: "ignored: the store names its columns")
                }
                let pathValue = try index.required("path")
                let path = try pathValue.string()
                guard !path.isEmpty else { throw pathValue.error(.invalidValue, "an index needs a path") }
                let type: IndexType
                if let typeValue = try index.member("type") {
                    let text = try typeValue.string()
                    if let known = IndexType(rawValue: text) {
                        type = known
                    } else {
                        // Refused although the iOS SDK makes it a TEXT column: a misspelt
                        // "integr" would compare numbers as text (as usersyncs.json's enums are).
                        throw typeValue.error(.unknownValue, "unknown index type '\(text)'; expected one of \(IndexType.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                } else {
                    try tolerate(index.error(.missingKey, "the required key 'type' is missing", at: ConfigValue.keyPath(index.keyPath, member: "type")),
                                 applying: "indexed as string (the iOS SDK makes a type it does not know a TEXT column)")
                    type = .string
                }
                if let earlier = indexes.firstIndex(where: { $0.path == path }) {
                    try tolerate(pathValue.error(.duplicateName, "the soup '\(name)' indexes '\(path)' twice"),
                                 applying: "the last index of the path is kept, as the iOS SDK queries the last")
                    indexes.remove(at: earlier)
                }
                indexes.append(IndexSpec(path: path, type: type))
            }
            return indexes
        }
    }
}
