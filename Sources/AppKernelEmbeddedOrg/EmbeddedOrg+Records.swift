import AppKernelCore
import AppKernelREST
import AppKernelAuth
import Foundation

/// `…/sobjects`: describe, record create / retrieve / update / delete, and the external-id
/// resource (upsert, retrieve, delete by external id).
extension EmbeddedOrg {
    func sobjects(_ request: HTTPRequest, _ parts: [String], version: APIVersion, user: User, _ state: inout State) -> HTTPResponse {
        do throws(Refusal) {
            return try sobjectsRoute(request, parts, version: version, user: user, &state)
        } catch {
            return error.response
        }
    }

    private func sobjectsRoute(_ request: HTTPRequest, _ parts: [String], version: APIVersion, user: User,
                               _ state: inout State) throws(Refusal) -> HTTPResponse {
        let method = request.method
        guard let typeName = parts.first else {
            try Self.allow(method, "GET,HEAD")
            return Self.json(200, Self.describeGlobal(version: version.description))
        }
        guard let type = Self.object(typeName) else { throw Refusal.notFound }
        let query = Dictionary(FormEncoding.decode(request.url.query(percentEncoded: true) ?? "") ?? [], uniquingKeysWith: { first, _ in first })
        switch parts.count {
        case 1 where method == "POST":
            return try create(type, Self.body(request.body, for: type, creating: true), version: version, user: user, reportCreated: false, &state)
        case 1:
            try Self.allow(method, "GET,HEAD,POST")
            let recent = recentRecords(of: type.name, user: user, limit: Self.recentItemsLimit, state).map { recentItem($0, version: version) }
            return Self.json(200, ["objectDescribe": .object(Self.globalDescribe(type, version: version.description)), "recentItems": .array(recent)])
        case 2 where parts[1] == "describe":
            try Self.allow(method, "GET,HEAD")
            return Self.json(200, describe(type, version: version.description))
        case 2 where method == "POST" && parts[1].caseInsensitiveCompare("Id") == .orderedSame:
            // Upsert on Id with no value: a create.
            return try create(type, Self.body(request.body, for: type, creating: true), version: version, user: user, reportCreated: true, &state)
        case 2:
            try Self.allow(method, "GET,HEAD,PATCH,DELETE")
            let id = try recordID(parts[1], of: type, user: user, state)
            switch method {
            case "PATCH":
                try update(id, with: Self.body(request.body, for: type, creating: false), &state)
                return HTTPResponse(status: 204)
            case "DELETE":
                return try delete(id, &state)
            default:
                reference(id, &state)
                return Self.json(200, try recordJSON(id, type: type, fields: query["fields"], version: version, state))
            }
        case 3:
            try Self.allow(method, "GET,HEAD,PATCH,DELETE")
            return try byExternalID(request, type: type, field: parts[1], value: parts[2], query: query, version: version, user: user, &state)
        default:
            throw Refusal.notFound
        }
    }

    /// 405 unless `method` is in `allowed` (`GET,HEAD,POST`).
    static func allow(_ method: String, _ allowed: String) throws(Refusal) {
        guard allowed.split(separator: ",").contains(Substring(method)) else {
            throw Refusal(405, "METHOD_NOT_ALLOWED", "HTTP Method '\(method)' not allowed. Allowed are \(allowed)")
        }
    }

    // MARK: Records

    /// The id of a live record of `type` in the user's org: 15 or 18 characters, the type's prefix.
    func recordID(_ text: String, of type: ObjectInfo, user: User, _ state: State) throws(Refusal) -> String {
        guard text.count == 15 || text.count == 18, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
              text.hasPrefix(type.keyPrefix) else {
            throw Refusal(400, "MALFORMED_ID", "\(type.label) ID: id value of incorrect type: \(text)", fields: ["Id"])
        }
        let id = text.count == 18 ? text : state.order.first { $0.hasPrefix(text) } ?? text
        guard let record = state.records[id], record.type == type.name, record.orgID == user.orgID else { throw Refusal.notFound }
        guard !record.isDeleted else { throw Refusal(404, "ENTITY_IS_DELETED", "entity is deleted", fields: []) }
        return id
    }

    /// A record as retrieve returns it: `attributes`, then every field (nulls included), or the
    /// fields of `?fields=` plus `Id`.
    private func recordJSON(_ id: String, type: ObjectInfo, fields requested: String?, version: APIVersion, _ state: State) throws(Refusal) -> JSONValue {
        guard let record = state.records[id] else { throw Refusal.notFound }
        var names = type.fields.map(\.name)
        if let requested {
            names = []
            for name in requested.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let field = type.field(name) else {
                    throw Refusal(400, "INVALID_FIELD", "No such column '\(name)' on entity '\(type.name)'.")
                }
                names.append(field.name)
            }
            if !names.contains("Id") { names.append("Id") }
        }
        return project(record, paths: names.map { FieldPath(hops: [], field: $0) }, children: [], version: version, includeDeleted: true, state)
    }

    /// A JSON body's fields, under their declared names.
    /// - Throws: 400 `JSON_PARSER_ERROR`, `INVALID_FIELD` (no such field) or
    ///   `INVALID_FIELD_FOR_INSERT_UPDATE` (a field the operation can't write).
    static func body(_ data: Data?, for type: ObjectInfo, creating: Bool) throws(Refusal) -> [String: JSONValue] {
        guard let data, !data.isEmpty else { return [:] }
        guard case .object(let members)? = try? JSONValue(jsonData: data) else {
            throw Refusal(400, "JSON_PARSER_ERROR", "The request body is not a JSON object")
        }
        return try fields(members, for: type, creating: creating)
    }

    /// A JSON object's fields, under their declared names (`attributes` left out).
    /// - Throws: 400 `INVALID_FIELD` or `INVALID_FIELD_FOR_INSERT_UPDATE`, naming the field.
    static func fields(_ members: [String: JSONValue], for type: ObjectInfo, creating: Bool,
                       ignoring ignored: Set<String> = []) throws(Refusal) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (key, value) in members.sorted(by: { $0.key < $1.key }) where key != "attributes" && !ignored.contains(key) {
            guard let field = type.field(key) else {
                throw Refusal(400, "INVALID_FIELD", "No such column '\(key)' on sobject of type \(type.name)", fields: [key])
            }
            guard creating ? field.createable : field.updateable else {
                throw Refusal(400, "INVALID_FIELD_FOR_INSERT_UPDATE", "Unable to create/update fields: \(field.name). The field is read-only.",
                              fields: [field.name])
            }
            fields[field.name] = value
        }
        return fields
    }

    /// 400 `REQUIRED_FIELD_MISSING` when a required field is blank (or, creating, absent).
    private static func requireFields(_ fields: [String: JSONValue], of type: ObjectInfo, creating: Bool) throws(Refusal) {
        let missing = type.fields.filter { field in
            guard !field.nillable, field.createable, field.type != "boolean" else { return false }
            guard let value = fields[field.name] else { return creating }
            return value == .null || value.stringValue?.trimmingCharacters(in: .whitespaces).isEmpty == true
        }.map(\.name)
        guard missing.isEmpty else {
            throw Refusal(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [\(missing.joined(separator: ", "))]", fields: missing)
        }
        try checkLengths(fields, of: type)
    }

    /// The text types whose describe `length` bounds a value, in characters.
    static let lengthBoundTypes: Set<String> = ["string", "textarea", "email", "phone", "url", "picklist", "multipicklist", "combobox",
                                                "encryptedstring"]

    /// 400 `STRING_TOO_LONG` when a text value is longer than its field's describe `length`
    /// (REST API Developer Guide, "Status Codes and Error Responses"; the message is
    /// "<label>: data value too large: <value> (max length=<length>)").
    static func checkLengths(_ fields: [String: JSONValue], of type: ObjectInfo) throws(Refusal) {
        for field in type.fields where field.length > 0 && lengthBoundTypes.contains(field.type) {
            guard let text = fields[field.name]?.stringValue, text.count > field.length else { continue }
            throw Refusal(400, "STRING_TOO_LONG", "\(field.label): data value too large: \(text) (max length=\(field.length))", fields: [field.name])
        }
    }

    /// Creates a record: 201 `{"id", "success", "errors"}` (plus `"created": true` for an upsert, v46.0+).
    private func create(_ type: ObjectInfo, _ fields: [String: JSONValue], version: APIVersion, user: User, reportCreated: Bool,
                        _ state: inout State) throws(Refusal) -> HTTPResponse {
        let id = try createRecord(type, fields, user: user, &state)
        var body: [String: JSONValue] = ["id": .string(id), "success": true, "errors": []]
        if reportCreated, version.major >= 46 { body["created"] = true }
        return Self.json(201, .object(body))
    }

    /// Creates a record from validated fields and returns its id.
    /// - Throws: 400 `REQUIRED_FIELD_MISSING`.
    func createRecord(_ type: ObjectInfo, _ fields: [String: JSONValue], user: User, _ state: inout State) throws(Refusal) -> String {
        try Self.requireFields(fields, of: type, creating: true)
        return insert(type.name, fields, orgID: user.orgID, into: &state)
    }

    /// Changes a record's fields and stamps `LastModifiedDate` and `SystemModstamp`.
    func update(_ id: String, with fields: [String: JSONValue], _ state: inout State) throws(Refusal) {
        guard let record = state.records[id], let type = Self.object(record.type) else { throw Refusal.notFound }
        try Self.requireFields(fields, of: type, creating: false)
        var merged = record.fields.merging(fields) { _, new in new }
        let now = stamp(&state)
        merged["LastModifiedDate"] = .string(now)
        merged["SystemModstamp"] = .string(now)
        state.records[id]?.fields = Self.derivingFields(of: record.type, merged)
        reference(id, &state)
    }

    /// Deletes a record: 204, or 400 `DELETE_FAILED` while live records point at it.
    func delete(_ id: String, _ state: inout State) throws(Refusal) -> HTTPResponse {
        guard let record = state.records[id] else { throw Refusal.notFound }
        let children = Self.children(of: id, state)
        if let first = children.first {
            let name = record.fields["Name"]?.stringValue ?? id
            let kind = Self.object(first.type)?.labelPlural.lowercased() ?? first.type
            throw Refusal(400, "DELETE_FAILED",
                          "Your attempt to delete \(name) could not be completed because it is associated with the following \(kind).: \(children.compactMap { $0.fields["Id"]?.stringValue }.joined(separator: ", "))",
                          fields: [])
        }
        state.records[id]?.isDeleted = true
        let now = stamp(&state)
        state.records[id]?.fields["LastModifiedDate"] = .string(now)
        state.records[id]?.fields["SystemModstamp"] = .string(now)
        return HTTPResponse(status: 204)
    }

    // MARK: External ids

    /// `…/sobjects/<type>/<field>/<value>`: the field must be an external id (or `Id`). Several
    /// matches answer 300 with the records' URLs; GET returns the one match, DELETE deletes it,
    /// PATCH updates it (200, `"created": false`; 204 before v46.0) or creates (201).
    private func byExternalID(_ request: HTTPRequest, type: ObjectInfo, field name: String, value: String, query: [String: String],
                              version: APIVersion, user: User, _ state: inout State) throws(Refusal) -> HTTPResponse {
        guard let field = type.field(name), field.externalId || field.name == "Id" else {
            throw Refusal(404, "NOT_FOUND", "Provided external ID field does not exist or is not accessible: \(name)")
        }
        let matches = records(of: type.name, orgID: user.orgID, includeDeleted: false, state) {
            $0.fields[field.name]?.stringValue?.caseInsensitiveCompare(value) == .orderedSame
        }.compactMap { $0.fields["Id"]?.stringValue }
        guard matches.count <= 1 else {
            return Self.json(300, .array(matches.map { .string(Self.recordURL(type: type.name, id: $0, version: version)) }))
        }
        if request.method == "PATCH" { try Self.refuseKeyInUpsertBody(request.body, field: field) }
        switch (request.method, matches.first) {
        case ("DELETE", let id?):
            return try delete(id, &state)
        case ("PATCH", let id?):
            try update(id, with: Self.body(request.body, for: type, creating: false), &state)
            guard version.major >= 46 else { return HTTPResponse(status: 204) }
            return Self.json(200, ["id": .string(id), "success": true, "errors": [], "created": false])
        case ("PATCH", nil) where field.name != "Id" && query["updateOnly"]?.lowercased() != "true":
            var fields = try Self.body(request.body, for: type, creating: true)
            fields[field.name] = .string(value)
            return try create(type, fields, version: version, user: user, reportCreated: true, &state)
        case (_, let id?):
            return Self.json(200, try recordJSON(id, type: type, fields: query["fields"], version: version, state))
        default:
            throw Refusal.notFound
        }
    }

    /// 400 `INVALID_FIELD` for an upsert whose body names `Id` or the external-id field the URL
    /// matches on: "Do not specify Id or an external ID field in the request body or an error is
    /// generated" (REST API Developer Guide, "Upsert Records Using sObject Rows by External ID").
    static func refuseKeyInUpsertBody(_ body: Data?, field: FieldInfo) throws(Refusal) {
        guard let body, case .object(let members)? = try? JSONValue(jsonData: body) else { return }
        let keys = Set([field.name.lowercased(), "id"])
        guard let key = members.keys.sorted().first(where: { keys.contains($0.lowercased()) }) else { return }
        throw Refusal(400, "INVALID_FIELD", "\(key) must not be in the request body of an upsert by \(field.name): the URL gives it",
                      fields: [key])
    }
}
