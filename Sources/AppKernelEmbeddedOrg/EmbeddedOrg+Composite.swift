import AppKernelCore
import AppKernelREST
import AppKernelAuth
import Foundation

/// `…/composite` (up to 25 subrequests, `allOrNone`, `@{referenceId.path}` references) and
/// `…/composite/sobjects` (sObject collections: create, update, upsert, delete and retrieve up to
/// 200 records a request) — what the Mobile SDK's batch and collection sync-up targets send,
/// answered in the REST API's documented shapes.
extension EmbeddedOrg {
    /// The most subrequests a composite request holds.
    static let maxCompositeSubrequests = 25
    /// The most records a collection create, update, upsert or delete holds.
    static let maxCollectionRecords = 200
    /// The most ids a collection retrieve takes.
    static let maxCollectionRetrieveIDs = 2000

    /// What a rollback puts back: the records and the counters that name new ones.
    private struct DataSnapshot {
        var records: [String: Record]
        var order: [String]
        var nextNumber: Int
        var referenceCounter: Int

        init(_ state: State) {
            records = state.records
            order = state.order
            nextNumber = state.nextNumber
            referenceCounter = state.referenceCounter
        }

        func restore(into state: inout State) {
            state.records = records
            state.order = order
            state.nextNumber = nextNumber
            state.referenceCounter = referenceCounter
        }
    }

    private static func jsonBody(_ request: HTTPRequest) throws(Refusal) -> [String: JSONValue] {
        guard let data = request.body, case .object(let members)? = try? JSONValue(jsonData: data) else {
            throw Refusal(400, "JSON_PARSER_ERROR", "The request body is not a JSON object")
        }
        return members
    }

    // MARK: Composite

    /// `POST …/composite`: `{"allOrNone", "compositeRequest": [{"method", "url", "referenceId", "body"}]}`
    /// → 200 `{"compositeResponse": [{"body", "httpHeaders", "httpStatusCode", "referenceId"}]}`.
    /// Subrequests run in order; `@{ref.path}` in a URL or body is the value at `path`
    /// (`id`, `records[0].Id`) of an earlier subrequest's body. A subrequest whose reference
    /// can't be resolved (unknown, or its subrequest failed) answers 400 `PROCESSING_HALTED`.
    /// With `allOrNone`, the first failure rolls every change back and every other subrequest
    /// answers 400 `PROCESSING_HALTED`.
    /// - Throws: 400 `JSON_PARSER_ERROR`, `INVALID_INPUT` (no subrequests, a subrequest without
    ///   method, url or a unique referenceId of letters, digits and underscores), `LIMIT_EXCEEDED` (over 25).
    func composite(_ request: HTTPRequest, version: APIVersion, user: User, _ state: inout State) throws(Refusal) -> HTTPResponse {
        let members = try Self.jsonBody(request)
        guard let subrequests = members["compositeRequest"]?.arrayValue, !subrequests.isEmpty else {
            throw Refusal(400, "INVALID_INPUT", "compositeRequest: a composite request needs at least one subrequest")
        }
        guard subrequests.count <= Self.maxCompositeSubrequests else {
            throw Refusal(400, "LIMIT_EXCEEDED", "compositeRequest: at most \(Self.maxCompositeSubrequests) subrequests, not \(subrequests.count)")
        }
        var seen: Set<String> = []
        for (index, subrequest) in subrequests.enumerated() {
            // Letters, digits and underscores (the Mobile SDK's batch target uses record ids, which start with digits).
            guard let reference = subrequest["referenceId"]?.stringValue, !reference.isEmpty,
                  reference.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw Refusal(400, "INVALID_INPUT", "compositeRequest[\(index)].referenceId: one or more letters, digits and underscores")
            }
            guard seen.insert(reference).inserted else {
                throw Refusal(400, "INVALID_INPUT", "compositeRequest[\(index)].referenceId: '\(reference)' is used twice")
            }
            guard subrequest["method"]?.stringValue != nil, subrequest["url"]?.stringValue?.hasPrefix("/services/data/") == true else {
                throw Refusal(400, "INVALID_INPUT", "compositeRequest[\(index)]: a subrequest needs a method and a url under /services/data/")
            }
        }
        let allOrNone = members["allOrNone"]?.boolValue ?? false
        let snapshot = DataSnapshot(state)
        var succeeded: [String: JSONValue] = [:]
        var responses: [(reference: String, status: Int, headers: [String: String], body: JSONValue)] = []
        var failed = false
        for subrequest in subrequests {
            let reference = subrequest["referenceId"]?.stringValue ?? ""
            if allOrNone, failed {
                responses.append((reference, 400, [:], Self.halted))
                continue
            }
            let url: String, body: JSONValue?
            do throws(Refusal) {
                url = try Self.resolve(subrequest["url"]?.stringValue ?? "", succeeded)
                body = try subrequest["body"].map { value throws(Refusal) in try Self.resolve(value, succeeded) }
            } catch {
                responses.append((reference, error.status, [:], error.response.jsonBody))
                failed = true
                continue
            }
            let method = subrequest["method"]?.stringValue?.uppercased() ?? "GET"
            var routed = HTTPRequest(method: method, url: URL(string: baseURL.absoluteString + url) ?? baseURL, headers: request.headers,
                                     body: body?.jsonData())
            if method == "HEAD" { routed.method = "GET" }
            let query = Dictionary(FormEncoding.decode(routed.url.query(percentEncoded: true) ?? "") ?? [], uniquingKeysWith: { first, _ in first })
            let answer = dataRoute(routed, query: query, user: user, &state)
            let answerBody = answer.jsonBody
            var headers: [String: String] = [:]
            if answer.status == 201, let id = answerBody["id"]?.stringValue, let type = Self.object(byPrefixOf: id) {
                headers["Location"] = Self.recordURL(type: type.name, id: id, version: version)
            }
            responses.append((reference, answer.status, headers, answerBody))
            if (200..<300).contains(answer.status) { succeeded[reference] = answerBody } else { failed = true }
        }
        if allOrNone, failed {
            snapshot.restore(into: &state)
            let firstFailure = responses.firstIndex { !(200..<300).contains($0.status) && $0.body != Self.halted }
            for index in responses.indices where index != firstFailure {
                responses[index] = (responses[index].reference, 400, [:], Self.halted)
            }
        }
        return Self.json(200, ["compositeResponse": .array(responses.map { response in
            ["body": response.body, "httpHeaders": .object(response.headers.mapValues(JSONValue.string)),
             "httpStatusCode": .int(response.status), "referenceId": .string(response.reference)]
        })])
    }

    /// The body of a subrequest that did not run, or was rolled back.
    private static let halted: JSONValue = [["errorCode": "PROCESSING_HALTED",
                                             "message": "The transaction was rolled back since another operation in the same transaction failed."]]

    /// A text with each `@{ref.path}` replaced by the referenced value (in a URL, also when a
    /// builder percent-encoded it: `%40%7Bref.path%7D`).
    private static func resolve(_ text: String, _ results: [String: JSONValue]) throws(Refusal) -> String {
        var text = text
        while let open = text.range(of: "%40%7B", options: .caseInsensitive),
              let close = text.range(of: "%7D", options: .caseInsensitive, range: open.upperBound..<text.endIndex) {
            text.replaceSubrange(open.lowerBound..<close.upperBound, with: "@{" + text[open.upperBound..<close.lowerBound] + "}")
        }
        var output = "", rest = Substring(text)
        while let open = rest.range(of: "@{") {
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else { break }
            let expression = String(rest[open.upperBound..<close])
            let value = try lookUp(expression, results)
            output += rest[..<open.lowerBound] + (value.stringValue ?? value.description)
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }

    /// A body with its references resolved: a string that is one reference takes the referenced
    /// value whatever its kind; references inside longer strings are replaced by their text.
    private static func resolve(_ value: JSONValue, _ results: [String: JSONValue]) throws(Refusal) -> JSONValue {
        switch value {
        case .string(let text):
            if text.hasPrefix("@{"), text.hasSuffix("}"), text.dropFirst(2).firstIndex(of: "}") == text.index(before: text.endIndex) {
                return try lookUp(String(text.dropFirst(2).dropLast()), results)
            }
            return .string(try resolve(text, results))
        case .array(let elements):
            var resolved: [JSONValue] = []
            for element in elements { resolved.append(try resolve(element, results)) }
            return .array(resolved)
        case .object(let members):
            var resolved: [String: JSONValue] = [:]
            for (key, member) in members { resolved[key] = try resolve(member, results) }
            return .object(resolved)
        default:
            return value
        }
    }

    /// `ref.records[0].Id` in the bodies of earlier subrequests that succeeded.
    private static func lookUp(_ expression: String, _ results: [String: JSONValue]) throws(Refusal) -> JSONValue {
        var parts = expression.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let reference = parts.removeFirst()
        let refused = Refusal(400, "PROCESSING_HALTED",
                              "Invalid reference specified. No value for @{\(expression)} found: '\(reference)' must name an earlier subrequest that succeeded")
        guard var current = results[reference] else { throw refused }
        for part in parts {
            var name = Substring(part)
            var indexes: [Int] = []
            while name.hasSuffix("]"), let open = name.lastIndex(of: "["), let index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)]) {
                indexes.insert(index, at: 0)
                name = name[..<open]
            }
            if !name.isEmpty {
                guard let member = current[String(name)] else { throw refused }
                current = member
            }
            for index in indexes {
                guard let element = current[index] else { throw refused }
                current = element
            }
        }
        guard current != .null else { throw refused }
        return current
    }

    /// The object type whose key prefix starts `id`.
    static func object(byPrefixOf id: String) -> ObjectInfo? {
        objects.first { id.hasPrefix($0.keyPrefix) }
    }

    // MARK: sObject collections

    /// `…/composite/sobjects[/<type>[/<external id field>]]`.
    func collection(_ request: HTTPRequest, _ parts: [String], query: [String: String], version: APIVersion, user: User,
                    _ state: inout State) throws(Refusal) -> HTTPResponse {
        switch parts.count {
        case 0:
            try Self.allow(request.method, "POST,PATCH,DELETE")
            if request.method == "DELETE" {
                let ids = (query["ids"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                return try collectionWrite(ids.map(JSONValue.string), allOrNone: query["allOrNone"]?.lowercased() == "true", &state) {
                    org, item, state throws(Refusal) in
                    let id = item.stringValue ?? ""
                    _ = try org.delete(try org.collectionRecordID(id, type: nil, user: user, state), &state)
                    return ["id": .string(id)]
                }
            }
            let body = try Self.jsonBody(request)
            let creating = request.method == "POST"
            return try collectionWrite(body["records"]?.arrayValue ?? [], allOrNone: body["allOrNone"]?.boolValue ?? false, &state) {
                org, record, state throws(Refusal) in
                let members = record.objectValue ?? [:]
                let typeName = members["attributes"]?["type"]?.stringValue ?? ""
                if creating {
                    guard let type = Self.object(typeName) else { throw Refusal(400, "INVALID_TYPE", "sObject type '\(typeName)' is not supported.") }
                    return ["id": .string(try org.createRecord(type, Self.fields(members, for: type, creating: true), user: user, &state))]
                }
                let given = members["id"]?.stringValue ?? members["Id"]?.stringValue ?? ""
                let id = try org.collectionRecordID(given, type: typeName.isEmpty ? nil : typeName, user: user, state)
                guard let type = state.records[id].flatMap({ Self.object($0.type) }) else { throw Refusal.notFound }
                try org.update(id, with: Self.fields(members, for: type, creating: false, ignoring: ["id", "Id"]), &state)
                return ["id": .string(id)]
            }
        case 1:
            try Self.allow(request.method, "GET,POST")
            guard let type = Self.object(parts[0]) else { throw Refusal.notFound }
            let body = request.method == "POST" ? try Self.jsonBody(request) : [:]
            let ids = body["ids"]?.arrayValue?.compactMap(\.stringValue)
                ?? (query["ids"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let fields = body["fields"]?.arrayValue?.compactMap(\.stringValue)
                ?? (query["fields"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return try collectionRetrieve(type, ids: ids, fields: fields, version: version, user: user, &state)
        case 2 where version.major >= 46:
            try Self.allow(request.method, "PATCH")
            guard let type = Self.object(parts[0]) else { throw Refusal.notFound }
            guard let field = type.field(parts[1]), field.externalId || field.name == "Id" else {
                throw Refusal(404, "NOT_FOUND", "Provided external ID field does not exist or is not accessible: \(parts[1])")
            }
            let body = try Self.jsonBody(request)
            return try collectionWrite(body["records"]?.arrayValue ?? [], allOrNone: body["allOrNone"]?.boolValue ?? false, &state) {
                org, record, state throws(Refusal) in
                let members = record.objectValue ?? [:]
                guard let value = members.first(where: { $0.key.caseInsensitiveCompare(field.name) == .orderedSame })?.value.stringValue,
                      !value.isEmpty else {
                    throw Refusal(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [\(field.name)]", fields: [field.name])
                }
                let matches = org.records(of: type.name, orgID: user.orgID, includeDeleted: false, state) {
                    $0.fields[field.name]?.stringValue?.caseInsensitiveCompare(value) == .orderedSame
                }.compactMap { $0.fields["Id"]?.stringValue }
                guard matches.count <= 1 else {
                    throw Refusal(400, "DUPLICATE_EXTERNAL_ID", "\(field.name): more than one record matches '\(value)': \(matches.joined(separator: ", "))",
                                  fields: [field.name])
                }
                if let id = matches.first {
                    try org.update(id, with: Self.fields(members, for: type, creating: false, ignoring: [field.name]), &state)
                    return ["id": .string(id), "created": false]
                }
                var fields = try Self.fields(members, for: type, creating: true, ignoring: field.name == "Id" ? ["Id"] : [])
                if field.name != "Id" { fields[field.name] = .string(value) }
                return ["id": .string(try org.createRecord(type, fields, user: user, &state)), "created": true]
            }
        default:
            throw Refusal.notFound
        }
    }

    /// The id of a live record a collection names: the id's prefix (or `type`) gives its type.
    /// - Throws: `MALFORMED_ID`, `INVALID_CROSS_REFERENCE_KEY` (no such record) or `ENTITY_IS_DELETED`.
    private func collectionRecordID(_ id: String, type typeName: String?, user: User, _ state: State) throws(Refusal) -> String {
        guard let type = typeName.flatMap(Self.object(_:)) ?? Self.object(byPrefixOf: id) else {
            throw Refusal(400, "MALFORMED_ID", "malformed id \(id)", fields: ["Id"])
        }
        do throws(Refusal) {
            return try recordID(id, of: type, user: user, state)
        } catch where error.code == "NOT_FOUND" {
            throw Refusal(400, "INVALID_CROSS_REFERENCE_KEY", "invalid cross reference id", fields: [])
        }
    }

    /// Runs a write on each item: 200 with one `{"id", "success", "errors"}` result per item, in
    /// order (errors as `{"statusCode", "message", "fields"}`). With `allOrNone`, one failure
    /// rolls every change back and the other items report `ALL_OR_NONE_OPERATION_ROLLED_BACK`.
    /// - Throws: 400 `EXCEEDED_ID_LIMIT` over 200 items.
    private func collectionWrite(_ items: [JSONValue], allOrNone: Bool, _ state: inout State,
                                 _ write: (EmbeddedOrg, JSONValue, inout State) throws(Refusal) -> [String: JSONValue]) throws(Refusal) -> HTTPResponse {
        guard items.count <= Self.maxCollectionRecords else {
            throw Refusal(400, "EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than \(Self.maxCollectionRecords) records into this call")
        }
        let snapshot = DataSnapshot(state)
        var results: [(fields: [String: JSONValue], error: Refusal?)] = []
        for item in items {
            do throws(Refusal) {
                results.append((try write(self, item, &state), nil))
            } catch {
                let id = item.stringValue ?? item["id"]?.stringValue ?? item["Id"]?.stringValue
                results.append((id.map { ["id": .string($0)] } ?? [:], error))
            }
        }
        let failed = results.contains { $0.error != nil }
        if allOrNone, failed { snapshot.restore(into: &state) }
        return Self.json(200, .array(results.enumerated().map { index, result in
            var entry = result.fields
            if let error = result.error {
                entry["success"] = false
                entry["errors"] = [Self.recordError(error.code, error.message, fields: error.fields ?? [])]
            } else if allOrNone, failed {
                entry["success"] = false
                if items[index].objectValue != nil, items[index]["id"] == nil, items[index]["Id"] == nil {
                    entry["id"] = nil   // a rolled-back create has no id
                }
                entry["created"] = nil
                entry["errors"] = [Self.recordError("ALL_OR_NONE_OPERATION_ROLLED_BACK",
                                                    "Record rolled back because not all records were valid and the request was using AllOrNone header")]
            } else {
                entry["success"] = true
                entry["errors"] = []
            }
            return .object(entry)
        }))
    }

    /// A per-record error: `statusCode` where top-level errors say `errorCode`.
    private static func recordError(_ code: String, _ message: String, fields: [String] = []) -> JSONValue {
        ["statusCode": .string(code), "message": .string(message), "fields": .array(fields.map(JSONValue.string))]
    }

    /// `GET …/composite/sobjects/<type>?ids=&fields=` or `POST` `{"ids", "fields"}`: the records
    /// in the order of the ids (`attributes` and the fields asked for), `null` for an id that
    /// names no live record of the type.
    /// - Throws: 400 `MISSING_ARGUMENT` without ids or fields, `INVALID_FIELD` for an unknown
    ///   field, `EXCEEDED_ID_LIMIT` past 2000 ids.
    private func collectionRetrieve(_ type: ObjectInfo, ids: [String], fields: [String], version: APIVersion, user: User,
                                    _ state: inout State) throws(Refusal) -> HTTPResponse {
        guard !ids.isEmpty, !fields.isEmpty else { throw Refusal(400, "MISSING_ARGUMENT", "ids and fields are both required") }
        guard ids.count <= Self.maxCollectionRetrieveIDs else {
            throw Refusal(400, "EXCEEDED_ID_LIMIT", "cannot retrieve more than \(Self.maxCollectionRetrieveIDs) records in one call")
        }
        var paths: [FieldPath] = []
        for name in fields {
            guard let field = type.field(name) else { throw Refusal(400, "INVALID_FIELD", "No such column '\(name)' on entity '\(type.name)'.") }
            paths.append(FieldPath(hops: [], field: field.name, type: field.type))
        }
        let records: [JSONValue] = ids.map { id in
            guard let found = try? recordID(id, of: type, user: user, state), let record = state.records[found] else { return .null }
            return project(record, paths: paths, children: [], version: version, includeDeleted: false, state)
        }
        return Self.json(200, .array(records))
    }
}

extension HTTPResponse {
    /// The body as JSON (`null` when empty or not JSON).
    var jsonBody: JSONValue {
        body.isEmpty ? .null : (try? JSONValue(jsonData: body)) ?? .null
    }
}
