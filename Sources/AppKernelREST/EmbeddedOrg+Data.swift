import AppKernelCore
import AppKernelAuth
import Foundation

extension EmbeddedOrg {
    // MARK: Query

    func runQuery(_ text: String, version: String, user: User, _ state: inout State) -> HTTPResponse {
        let query: SOQLQuery
        do { query = try SOQLQuery(text) } catch { return Self.errors(400, "MALFORMED_QUERY", error.message) }
        guard Self.schema[query.object] != nil else {
            return Self.errors(400, "INVALID_TYPE", "sObject type '\(query.object)' is not supported.")
        }
        for field in query.fields + query.conditions.map(\.field) + (query.orderBy.map { [$0.field] } ?? []) where !isKnown(field, in: query.object) {
            return Self.errors(400, "INVALID_FIELD", "No such column '\(field)' on entity '\(query.object)'.")
        }
        var rows = state.order.compactMap { id -> Record? in
            guard let record = state.records[id], !record.isDeleted, record.type == query.object, record.orgID == user.orgID else { return nil }
            return record
        }
        rows = rows.filter { record in
            query.conditions.allSatisfy { condition in (value(condition.field, of: record, state) == condition.value) == condition.equals }
        }
        if let (field, ascending) = query.orderBy {
            rows.sort { lhs, rhs in
                let left = sortKey(value(field, of: lhs, state)), right = sortKey(value(field, of: rhs, state))
                return ascending ? left < right : left > right
            }
        }
        if let limit = query.limit { rows = Array(rows.prefix(limit)) }
        let projected = rows.map { record -> JSONValue in
            var fields: [String: JSONValue] = ["attributes": ["type": .string(record.type),
                                                              "url": .string("/services/data/\(version)/sobjects/\(record.type)/\(record.fields["Id"]?.stringValue ?? "")")]]
            for field in query.fields { fields[field] = value(field, of: record, state) }
            return .object(fields)
        }
        return page(projected, offset: 0, cursor: nil, version: version, &state)
    }

    func nextPage(_ locator: String, version: String, _ state: inout State) -> HTTPResponse {
        // "<cursor>-<offset>"; the cursor may itself contain '-'.
        guard let dash = locator.lastIndex(of: "-"), let offset = Int(locator[locator.index(after: dash)...]),
              let records = state.cursors[String(locator[..<dash])] else {
            return Self.errors(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        }
        return page(records, offset: offset, cursor: String(locator[..<dash]), version: version, &state)
    }

    private func page(_ records: [JSONValue], offset: Int, cursor: String?, version: String, _ state: inout State) -> HTTPResponse {
        let end = min(offset + queryBatchSize, records.count)
        var body: [String: JSONValue] = ["totalSize": .int(records.count), "done": .bool(end == records.count),
                                         "records": .array(Array(records[offset..<end]))]
        if end < records.count {
            let id = cursor ?? "01g" + SecureRandom.token(byteCount: 6)
            state.cursors[id] = records
            body["nextRecordsUrl"] = .string("/services/data/\(version)/query/\(id)-\(end)")
        } else if let cursor {
            state.cursors[cursor] = nil
        }
        return Self.json(200, .object(body))
    }

    private func isKnown(_ field: String, in type: String) -> Bool {
        let parts = field.split(separator: ".").map(String.init)
        guard let fields = Self.schema[type]?.fields else { return false }
        if parts.count == 1 { return fields.contains(parts[0]) }
        guard parts.count == 2, fields.contains(parts[0] + "Id"), let parent = Self.schema[parts[0]] else { return false }
        return parent.fields.contains(parts[1])
    }

    private func value(_ field: String, of record: Record, _ state: State) -> JSONValue {
        let parts = field.split(separator: ".").map(String.init)
        if parts.count == 2 {
            guard let parentID = record.fields[parts[0] + "Id"]?.stringValue, let parent = state.records[parentID], !parent.isDeleted else { return .null }
            return parent.fields[parts[1]] ?? .null
        }
        return record.fields[field] ?? .null
    }

    private func sortKey(_ value: JSONValue) -> String {
        switch value {
        case .null: ""
        case .int(let number): String(format: "%020d", number)
        default: value.stringValue ?? value.description
        }
    }

    // MARK: sObjects

    func sobjects(_ request: HTTPRequest, _ parts: [String], version: String, user: User, _ state: inout State) -> HTTPResponse {
        guard let type = parts.first else {
            return Self.json(200, ["sobjects": .array(Self.schema.keys.sorted().map { ["name": .string($0), "label": .string($0)] })])
        }
        guard let schema = Self.schema[type] else {
            return Self.errors(404, "NOT_FOUND", "The requested resource does not exist")
        }
        let fields: [String: JSONValue]
        if let body = request.body, !body.isEmpty {
            guard case .object(let members)? = try? JSONValue(jsonData: body) else {
                return Self.errors(400, "JSON_PARSER_ERROR", "The request body is not a JSON object")
            }
            for key in members.keys where !schema.fields.contains(key) || key == "Id" || key == "Name" && type == "Contact" {
                return Self.errors(400, "INVALID_FIELD", "No such column '\(key)' on sobject of type \(type)", fields: [key])
            }
            fields = members
        } else {
            fields = [:]
        }
        switch (request.method, parts.count) {
        case ("POST", 1):
            if type == "Contact", fields["LastName"]?.stringValue?.isEmpty != false {
                return Self.errors(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [LastName]", fields: ["LastName"])
            }
            let id = Self.insert(type, fields, orgID: user.orgID, into: &state)
            return Self.json(201, ["id": .string(id), "success": true, "errors": []])
        case ("GET", 2) where parts[1] == "describe":
            return Self.json(200, ["name": .string(type), "label": .string(type), "keyPrefix": .string(schema.prefix),
                                   "fields": .array(schema.fields.map { ["name": .string($0), "type": .string($0.hasSuffix("Id") ? "reference" : "string")] })])
        case (_, 2):
            return record(request.method, type: type, id: parts[1], fields: fields, query: request.url, user: user, &state)
        case ("PATCH", 3):
            return upsert(type: type, externalField: parts[1], externalID: parts[2], fields: fields, user: user, &state)
        default:
            return Self.errors(405, "METHOD_NOT_ALLOWED", "HTTP Method '\(request.method)' not allowed")
        }
    }

    private func record(_ method: String, type: String, id: String, fields: [String: JSONValue], query: URL, user: User,
                        _ state: inout State) -> HTTPResponse {
        guard let record = state.records[id], record.type == type, record.orgID == user.orgID else {
            return Self.errors(404, "NOT_FOUND", "The requested resource does not exist")
        }
        guard !record.isDeleted else { return Self.errors(404, "ENTITY_IS_DELETED", "entity is deleted") }
        switch method {
        case "GET":
            let requested = FormEncoding.decode(query.query(percentEncoded: true) ?? "")?.first { $0.0 == "fields" }?.1
                .split(separator: ",").map(String.init)
            var result = record.fields
            if let requested { result = result.filter { requested.contains($0.key) || $0.key == "Id" } }
            result["attributes"] = ["type": .string(type), "url": .string("/services/data/v62.0/sobjects/\(type)/\(id)")]
            return Self.json(200, .object(result))
        case "PATCH":
            state.records[id]?.fields.merge(fields) { _, new in new }
            if type == "Contact", let updated = state.records[id] {
                let first = updated.fields["FirstName"]?.stringValue.map { $0 + " " } ?? ""
                state.records[id]?.fields["Name"] = .string(first + (updated.fields["LastName"]?.stringValue ?? ""))
            }
            return HTTPResponse(status: 204)
        case "DELETE":
            let children = state.order.compactMap { childID -> (String, Record)? in
                guard let child = state.records[childID], !child.isDeleted,
                      child.fields["ContactId"]?.stringValue == id || child.fields["AccountId"]?.stringValue == id else { return nil }
                return (childID, child)
            }
            if let (_, first) = children.first {
                let name = record.fields["Name"]?.stringValue ?? id
                let kind = first.type == "Case" ? "cases" : "contacts"
                return Self.errors(400, "DELETE_FAILED",
                                   "Your attempt to delete \(name) could not be completed because it is associated with the following \(kind).: \(children.map(\.0).joined(separator: ", "))")
            }
            state.records[id]?.isDeleted = true
            return HTTPResponse(status: 204)
        default:
            return Self.errors(405, "METHOD_NOT_ALLOWED", "HTTP Method '\(method)' not allowed")
        }
    }

    private func upsert(type: String, externalField: String, externalID: String, fields: [String: JSONValue], user: User,
                        _ state: inout State) -> HTTPResponse {
        guard Self.schema[type]?.fields.contains(externalField) == true, externalField != "Id" else {
            return Self.errors(404, "NOT_FOUND", "Provided external ID field does not exist or is not accessible: \(externalField)")
        }
        let matches = state.order.filter { id in
            guard let record = state.records[id] else { return false }
            return !record.isDeleted && record.type == type && record.orgID == user.orgID && record.fields[externalField]?.stringValue == externalID
        }
        if matches.count > 1 { return Self.errors(300, "MULTIPLE_CHOICES", "more than one record has \(externalField) = \(externalID)") }
        if let id = matches.first {
            state.records[id]?.fields.merge(fields) { _, new in new }
            return Self.json(200, ["id": .string(id), "success": true, "errors": [], "created": false])
        }
        var created = fields
        created[externalField] = .string(externalID)
        let id = Self.insert(type, created, orgID: user.orgID, into: &state)
        return Self.json(201, ["id": .string(id), "success": true, "errors": [], "created": true])
    }
}
