import AppKernelCore
import AppKernelREST
import AppKernelAuth
import Foundation

/// Recently used records (`recentItems` of `…/sobjects/<type>`, and `…/recent`) and the UI API's
/// record layout (`…/ui-api/layout/<type>`) — what the Mobile SDK's MRU and layout sync-down
/// targets read.
extension EmbeddedOrg {
    /// How many records `recentItems` lists (the embedded org's choice; the REST API documents no
    /// number for it).
    static let recentItemsLimit = 25

    /// The user's live records (of one type, or every type), most recently created, changed or
    /// retrieved first.
    func recentRecords(of type: String?, user: User, limit: Int, _ state: State) -> [Record] {
        let candidates = state.records.values.filter { record in
            !record.isDeleted && record.orgID == user.orgID && (type == nil || record.type == type)
        }
        return Array(candidates.sorted { $0.referenced > $1.referenced }.prefix(limit))
    }

    /// A recent item: `attributes`, `Id` and, when the type has one, `Name`.
    func recentItem(_ record: Record, version: APIVersion) -> JSONValue {
        var item: [String: JSONValue] = ["attributes": Self.attributes(of: record, version: version), "Id": record.fields["Id"] ?? .null]
        if Self.object(record.type)?.field("Name") != nil { item["Name"] = record.fields["Name"] ?? .null }
        return .object(item)
    }

    /// `GET …/recent?limit=n`: the user's recently used records of every type (200 at most, the
    /// documented limit), as an array.
    func recent(_ query: [String: String], version: APIVersion, user: User, _ state: State) -> HTTPResponse {
        var limit = 200
        if let text = query["limit"] {
            guard let value = Int(text), value > 0 else {
                return Self.errors(400, "INVALID_QUERY_PARAMETER_VALUE", "limit: '\(text)' is not a positive number")
            }
            limit = min(value, 200)
        }
        return Self.json(200, .array(recentRecords(of: nil, user: user, limit: limit, state).map { recentItem($0, version: version) }))
    }

    // MARK: Layout

    /// The record type every object has.
    static let masterRecordTypeID = "012000000000000AAA"

    /// `GET …/ui-api/layout/<type>?formFactor=&layoutType=&mode=&recordTypeId=`: the object's
    /// layout in the UI API's Record Layout shape. `Full` has an information section with every
    /// field but `Id` and `IsDeleted` (two columns) and a system section with the audit dates;
    /// `Compact` has one section with the name field and the first other fields. `Create` and
    /// `Edit` leave out fields the mode can't write.
    /// - Throws: 404 for an unknown object; 400 `INVALID_QUERY_PARAMETER_VALUE` naming a
    ///   parameter outside its documented values (`Large`/`Medium`/`Small`, `Full`/`Compact`,
    ///   `Create`/`Edit`/`View`, the object's record types).
    func layout(_ typeName: String, _ query: [String: String], _ state: State) throws(Refusal) -> HTTPResponse {
        guard let type = Self.object(typeName) else { throw Refusal.notFound }
        func parameter(_ name: String, _ allowed: [String], default value: String) throws(Refusal) -> String {
            guard let given = query[name] else { return value }
            guard let match = allowed.first(where: { $0.caseInsensitiveCompare(given) == .orderedSame }) else {
                throw Refusal(400, "INVALID_QUERY_PARAMETER_VALUE", "\(name): '\(given)' is not one of \(allowed.joined(separator: ", "))")
            }
            return match
        }
        _ = try parameter("formFactor", ["Large", "Medium", "Small"], default: "Large")
        let layoutType = try parameter("layoutType", ["Full", "Compact"], default: "Full")
        let mode = try parameter("mode", ["Create", "Edit", "View"], default: "View")
        let recordType = try parameter("recordTypeId", [Self.masterRecordTypeID, String(Self.masterRecordTypeID.prefix(15))],
                                       default: Self.masterRecordTypeID)
        let writable: (FieldInfo) -> Bool = { field in
            switch mode {
            case "Create": field.createable
            case "Edit": field.updateable
            default: true
            }
        }
        let audit: Set<String> = ["CreatedDate", "LastModifiedDate", "SystemModstamp"]
        let shown = type.fields.filter { $0.name != "Id" && $0.name != "IsDeleted" }
        var sections: [JSONValue] = []
        if layoutType == "Compact" {
            let name = shown.filter(\.nameField)
            let others = shown.filter { !$0.nameField && !audit.contains($0.name) && writable($0) }
            sections.append(section(type, "\(type.label) Information", number: 1, columns: 1, fields: Array((name + others).prefix(4)), mode: mode))
        } else {
            sections.append(section(type, "\(type.label) Information", number: 1, columns: 2,
                                    fields: shown.filter { !audit.contains($0.name) && writable($0) }, mode: mode))
            if mode == "View" {
                sections.append(section(type, "System Information", number: 2, columns: 2, fields: shown.filter { audit.contains($0.name) }, mode: mode))
            }
        }
        let id = "00h" + type.keyPrefix + (layoutType == "Full" ? "F" : "C") + String(mode.prefix(1)) + "0000000AAA"
        return Self.json(200, ["eTag": .string(SHA256.hash(Array("\(id)|\(recordType)".utf8)).hexString), "id": .string(id),
                               "layoutType": .string(layoutType), "mode": .string(mode), "objectApiName": .string(type.name),
                               "recordTypeId": .string(Self.masterRecordTypeID), "saveOptions": [], "sections": .array(sections)])
    }

    /// A layout section: its fields in rows of `columns` items.
    private func section(_ type: ObjectInfo, _ heading: String, number: Int, columns: Int, fields: [FieldInfo], mode: String) -> JSONValue {
        let items: [JSONValue] = fields.map { field in
            ["editableForNew": .bool(field.createable), "editableForUpdate": .bool(field.updateable), "label": .string(field.label),
             "layoutComponents": [["apiName": .string(field.name), "componentType": "Field", "label": .string(field.label)]],
             "lookupIdApiName": field.referenceTo == nil ? .null : .string(field.name),
             "required": .bool(!field.nillable && (mode == "View" ? field.createable : mode == "Create" ? field.createable : field.updateable)),
             "sortable": false]
        }
        let rows = stride(from: 0, to: items.count, by: columns).map { start in
            JSONValue.object(["layoutItems": .array(Array(items[start..<min(start + columns, items.count)]))])
        }
        return ["collapsible": false, "columns": .int(columns), "heading": .string(heading),
                "id": .string("01B" + type.keyPrefix + String(format: "%09d", number) + "AAA"), "layoutRows": .array(rows),
                "rows": .int(rows.count), "useHeading": true]
    }
}
