public import AppKernelCore

/// An object's record layout from the UI API (`…/ui-api/layout/<object>`), as
/// ``LayoutSyncManager`` hands it back — the Mobile SDK's `SFLayout`: a few members read out, the
/// whole answer in ``rawData``.
public struct Layout: Sendable, Hashable {
    /// The layout's id (the answer's `id`).
    public var id: String?
    /// `Full` or `Compact`.
    public var layoutType: String?
    /// `Create`, `Edit` or `View`.
    public var mode: String?
    /// Its sections, in order.
    public var sections: [Section]?
    /// The layout as the server sent it, with the `Id` the cache keys it by.
    public var rawData: [String: JSONValue]

    /// A section of a layout (`SFLayoutSection`).
    public struct Section: Sendable, Hashable {
        /// Whether it can be collapsed.
        public var collapsible: Bool
        /// Items a row.
        public var columns: Int?
        /// Its heading.
        public var heading: String?
        /// Its id.
        public var id: String?
        /// Its rows.
        public var layoutRows: [Row]?
        /// How many rows it has.
        public var rows: Int?
        /// Whether its heading is shown (the answer's `useHeading`; the SDK names it `userHeading`).
        public var useHeading: Bool
    }

    /// A row of a section (`SFRow`).
    public struct Row: Sendable, Hashable {
        /// Its items.
        public var layoutItems: [Item]?
    }

    /// An item of a row (`SFItem`).
    public struct Item: Sendable, Hashable {
        /// Whether it can be set on a new record.
        public var editableForNew: Bool
        /// Whether it can be changed on an existing record.
        public var editableForUpdate: Bool
        /// Its label.
        public var label: String?
        /// What it shows (`apiName`, `componentType`, `label`).
        public var layoutComponents: [[String: JSONValue]]?
        /// The field holding a lookup's id.
        public var lookupIdApiName: String?
        /// Whether a value is required.
        public var required: Bool
        /// Whether it can be sorted on.
        public var sortable: Bool
    }

    /// Reads a layout from its JSON (`SFLayout fromJSON:`): a member of another type than
    /// expected reads as absent (a Boolean as false).
    public init(json: [String: JSONValue]) {
        rawData = json
        id = json["id"]?.stringValue
        layoutType = json["layoutType"]?.stringValue
        mode = json["mode"]?.stringValue
        sections = json["sections"]?.arrayValue?.compactMap(\.objectValue).map { section in
            Section(collapsible: section["collapsible"]?.boolValue ?? false, columns: section["columns"]?.intValue,
                    heading: section["heading"]?.stringValue, id: section["id"]?.stringValue,
                    layoutRows: section["layoutRows"]?.arrayValue?.compactMap(\.objectValue).map { row in
                        Row(layoutItems: row["layoutItems"]?.arrayValue?.compactMap(\.objectValue).map { item in
                            Item(editableForNew: item["editableForNew"]?.boolValue ?? false, editableForUpdate: item["editableForUpdate"]?.boolValue ?? false,
                                 label: item["label"]?.stringValue, layoutComponents: item["layoutComponents"]?.arrayValue?.compactMap(\.objectValue),
                                 lookupIdApiName: item["lookupIdApiName"]?.stringValue, required: item["required"]?.boolValue ?? false,
                                 sortable: item["sortable"]?.boolValue ?? false)
                        })
                    },
                    rows: section["rows"]?.intValue, useHeading: section["useHeading"]?.boolValue ?? false)
        }
    }
}
