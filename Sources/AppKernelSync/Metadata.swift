public import AppKernelCore

/// An object's describe (`…/sobjects/<object>/describe`), as ``MetadataSyncManager`` hands it
/// back — the Mobile SDK's `SFMetadata`: its flags, names and lists read out, the whole answer
/// in ``rawData``. A flag the answer lacks (or gives as another type) reads false.
public struct Metadata: Sendable, Hashable {
    /// The object's API name (`Account`).
    public var name: String?
    /// Its label.
    public var label: String?
    /// Its plural label.
    public var labelPlural: String?
    /// The first three characters of its record ids (`001`).
    public var keyPrefix: String?
    /// The field giving a record's network scope, if any.
    public var networkScopeFieldName: String?
    /// Its fields' describes.
    public var fields: [[String: JSONValue]]?
    /// Its child relationships.
    public var childRelationships: [[String: JSONValue]]?
    /// The URLs of its resources.
    public var urls: [String: JSONValue]?
    /// The describe as the server sent it, with the `Id` the cache keys it by.
    public var rawData: [String: JSONValue]

    /// `activateable`.
    public var activateable: Bool { flag("activateable") }
    /// `compactLayoutable`.
    public var compactLayoutable: Bool { flag("compactLayoutable") }
    /// `createable`.
    public var createable: Bool { flag("createable") }
    /// `custom`.
    public var custom: Bool { flag("custom") }
    /// `customSetting`.
    public var customSetting: Bool { flag("customSetting") }
    /// `deletable`.
    public var deletable: Bool { flag("deletable") }
    /// `deprecatedAndHidden`.
    public var deprecatedAndHidden: Bool { flag("deprecatedAndHidden") }
    /// `feedEnabled`.
    public var feedEnabled: Bool { flag("feedEnabled") }
    /// `hasSubtypes`.
    public var hasSubtypes: Bool { flag("hasSubtypes") }
    /// `isSubtype`.
    public var isSubtype: Bool { flag("isSubtype") }
    /// `layoutable`.
    public var layoutable: Bool { flag("layoutable") }
    /// `mergeable`.
    public var mergeable: Bool { flag("mergeable") }
    /// `mruEnabled`.
    public var mruEnabled: Bool { flag("mruEnabled") }
    /// `queryable`.
    public var queryable: Bool { flag("queryable") }
    /// `replicateable`.
    public var replicateable: Bool { flag("replicateable") }
    /// `retrieveable`.
    public var retrieveable: Bool { flag("retrieveable") }
    /// `searchLayoutable`.
    public var searchLayoutable: Bool { flag("searchLayoutable") }
    /// `searchable`.
    public var searchable: Bool { flag("searchable") }
    /// `triggerable`.
    public var triggerable: Bool { flag("triggerable") }
    /// `undeletable`.
    public var undeletable: Bool { flag("undeletable") }
    /// `updateable`.
    public var updateable: Bool { flag("updateable") }

    /// Reads a describe from its JSON (`SFMetadata fromJSON:`).
    public init(json: [String: JSONValue]) {
        rawData = json
        name = json["name"]?.stringValue
        label = json["label"]?.stringValue
        labelPlural = json["labelPlural"]?.stringValue
        keyPrefix = json["keyPrefix"]?.stringValue
        networkScopeFieldName = json["networkScopeFieldName"]?.stringValue
        fields = json["fields"]?.arrayValue?.compactMap(\.objectValue)
        childRelationships = json["childRelationships"]?.arrayValue?.compactMap(\.objectValue)
        urls = json["urls"]?.objectValue
    }

    private func flag(_ key: String) -> Bool { rawData[key]?.boolValue ?? false }
}
