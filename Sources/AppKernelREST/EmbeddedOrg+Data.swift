import AppKernelCore
import AppKernelAuth
import Foundation

/// Why the org refuses a request: a status and Salesforce's error entry.
struct Refusal: Error {
    var status: Int
    var code: String
    var message: String
    /// The entry's `fields`; `nil` leaves the key out, as routing, query and auth errors do.
    var fields: [String]?

    init(_ status: Int, _ code: String, _ message: String, fields: [String]? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields
    }

    /// 404 `NOT_FOUND`: an unknown resource, object type or record.
    static let notFound = Refusal(404, "NOT_FOUND", "The requested resource does not exist")

    var response: HTTPResponse { EmbeddedOrg.errors(status, code, message, fields: fields) }
}

/// The parts of a SOQL query, subquery or SOSL RETURNING object that pick and shape records.
protocol RecordSelection {
    var fields: [String] { get }
    var conditions: [SOQLQuery.Condition] { get }
    var orderBy: SOQLQuery.Ordering? { get }
    var limit: Int? { get }
    var places: SOQLQuery.Places { get }
}

extension SOQLQuery: RecordSelection {}
extension SOSLSearch.Returning: RecordSelection {}

extension EmbeddedOrg {
    // MARK: Plans

    /// A field reached from an object: the lookups followed, then the field (names as declared).
    struct FieldPath {
        /// Each lookup followed: its relationship name (the key the parent nests under) and its id field.
        var hops: [(relationship: String, foreignKey: String)]
        var field: String
    }

    /// What a query (or one level of it) selects: resolved against the schema, ready to run.
    struct Plan {
        var type: ObjectInfo
        var paths: [FieldPath]
        var conditions: [(path: FieldPath, equals: Bool, value: JSONValue)]
        var order: (path: FieldPath, ascending: Bool)?
        var limit: Int?
        /// Child-relationship subqueries: the key, the child's lookup field, and what they select.
        var children: [(relationship: String, foreignKey: String, plan: Plan)]
    }

    /// Resolves `Account.Name` from `Contact`, ignoring case; the error points at `offset`.
    static func resolve(_ path: String, on type: ObjectInfo, at offset: Int, in source: QueryText) throws(Refusal) -> FieldPath {
        var current = type
        var hops: [(relationship: String, foreignKey: String)] = []
        let parts = path.split(separator: ".").map(String.init)
        for part in parts.dropLast() {
            guard let lookup = current.lookup(part), let relationship = lookup.relationshipName,
                  let parent = lookup.referenceTo.flatMap(object(_:)) else {
                throw Refusal(400, "INVALID_FIELD", source.pointing(at: offset, "Didn't understand relationship '\(part)' in field path."))
            }
            hops.append((relationship, lookup.name))
            current = parent
        }
        let last = parts.last ?? path
        guard let field = current.field(last) else {
            throw Refusal(400, "INVALID_FIELD", source.pointing(at: offset, "No such column '\(last)' on entity '\(current.name)'."))
        }
        return FieldPath(hops: hops, field: field.name)
    }

    /// The plan of one selection on `type` (its subqueries are added by the caller).
    static func plan(_ selection: some RecordSelection, on type: ObjectInfo, defaultFields: [String] = [], in source: QueryText) throws(Refusal) -> Plan {
        var paths: [FieldPath] = []
        let fields = selection.fields.isEmpty ? defaultFields : selection.fields
        for (index, field) in fields.enumerated() {
            paths.append(try resolve(field, on: type, at: selection.places.fields.indices.contains(index) ? selection.places.fields[index] : 0, in: source))
        }
        var conditions: [(path: FieldPath, equals: Bool, value: JSONValue)] = []
        for (condition, offset) in zip(selection.conditions, selection.places.conditions) {
            conditions.append((try resolve(condition.field, on: type, at: offset, in: source), condition.equals, condition.value))
        }
        var order: (path: FieldPath, ascending: Bool)?
        if let orderBy = selection.orderBy {
            order = (try resolve(orderBy.field, on: type, at: selection.places.orderBy ?? 0, in: source), orderBy.ascending)
        }
        return Plan(type: type, paths: paths, conditions: conditions, order: order, limit: selection.limit, children: [])
    }

    /// The plan of a SOQL query, subqueries included.
    static func plan(_ query: SOQLQuery) throws(Refusal) -> Plan {
        guard let type = object(query.object) else {
            throw Refusal(400, "INVALID_TYPE", query.source.pointing(at: query.places.object, "sObject type '\(query.object)' is not supported."))
        }
        var plan = try plan(query, on: type, in: query.source)
        for subquery in query.subqueries {
            guard let child = type.childRelationship(subquery.object), let childType = object(child.childSObject) else {
                throw Refusal(400, "INVALID_TYPE", query.source.pointing(at: subquery.places.object,
                                                                          "Didn't understand relationship '\(subquery.object)' in FROM part of query call."))
            }
            plan.children.append((child.relationshipName, child.field, try Self.plan(subquery, on: childType, in: query.source)))
        }
        return plan
    }

    // MARK: Running plans

    /// The records of a type in an org, in insertion order; deleted ones only when asked.
    func records(of type: String, orgID: String, includeDeleted: Bool, _ state: State, where predicate: (Record) -> Bool = { _ in true }) -> [Record] {
        state.order.compactMap { id in
            guard let record = state.records[id], record.type == type, record.orgID == orgID,
                  includeDeleted || !record.isDeleted, predicate(record) else { return nil }
            return record
        }
    }

    /// The rows of `candidates` that meet the plan's conditions, ordered and limited.
    func select(_ plan: Plan, from candidates: [Record], _ state: State) -> [Record] {
        var rows = candidates.filter { record in
            plan.conditions.allSatisfy { Self.same(value($0.path, of: record, state), $0.value) == $0.equals }
        }
        if let (path, ascending) = plan.order {
            rows.sort { lhs, rhs in
                let left = Self.sortKey(value(path, of: lhs, state)), right = Self.sortKey(value(path, of: rhs, state))
                return ascending ? left < right : left > right
            }
        }
        if let limit = plan.limit { rows = Array(rows.prefix(limit)) }
        return rows
    }

    /// A record as a query returns it: `attributes`, the selected fields, each parent path
    /// nested under its relationship (`null` when the lookup is empty), each subquery as a
    /// nested query result (`null` when there are no children).
    func project(_ record: Record, paths: [FieldPath], children: [(relationship: String, foreignKey: String, plan: Plan)],
                 version: APIVersion, includeDeleted: Bool, _ state: State) -> JSONValue {
        var result: [String: JSONValue] = ["attributes": Self.attributes(of: record, version: version)]
        var parents: [(relationship: String, foreignKey: String, paths: [FieldPath])] = []
        for path in paths {
            guard let hop = path.hops.first else {
                result[path.field] = Self.fieldValue(path.field, of: record)
                continue
            }
            let rest = FieldPath(hops: Array(path.hops.dropFirst()), field: path.field)
            if let index = parents.firstIndex(where: { $0.relationship == hop.relationship }) {
                parents[index].paths.append(rest)
            } else {
                parents.append((hop.relationship, hop.foreignKey, [rest]))
            }
        }
        for (relationship, foreignKey, parentPaths) in parents {
            result[relationship] = parent(of: record, through: foreignKey, state).map {
                project($0, paths: parentPaths, children: [], version: version, includeDeleted: includeDeleted, state)
            } ?? .null
        }
        for (relationship, foreignKey, plan) in children {
            let id = record.fields["Id"]
            let rows = select(plan, from: records(of: plan.type.name, orgID: record.orgID, includeDeleted: includeDeleted, state) {
                $0.fields[foreignKey] == id
            }, state)
            result[relationship] = rows.isEmpty ? .null : ["totalSize": .int(rows.count), "done": true, "records": .array(rows.map {
                project($0, paths: plan.paths, children: [], version: version, includeDeleted: includeDeleted, state)
            })]
        }
        return .object(result)
    }

    /// `{"type", "url"}` of a record.
    static func attributes(of record: Record, version: APIVersion) -> JSONValue {
        ["type": .string(record.type), "url": .string(recordURL(type: record.type, id: record.fields["Id"]?.stringValue ?? "", version: version))]
    }

    static func recordURL(type: String, id: String, version: APIVersion) -> String {
        "/services/data/\(version)/sobjects/\(type)/\(id)"
    }

    /// A field's value; `IsDeleted` comes from the record's state.
    static func fieldValue(_ name: String, of record: Record) -> JSONValue {
        name == "IsDeleted" ? .bool(record.isDeleted) : record.fields[name] ?? .null
    }

    private func value(_ path: FieldPath, of record: Record, _ state: State) -> JSONValue {
        var current = record
        for hop in path.hops {
            guard let parent = parent(of: current, through: hop.foreignKey, state) else { return .null }
            current = parent
        }
        return Self.fieldValue(path.field, of: current)
    }

    private func parent(of record: Record, through foreignKey: String, _ state: State) -> Record? {
        guard let id = record.fields[foreignKey]?.stringValue, let parent = state.records[id], !parent.isDeleted else { return nil }
        return parent
    }

    /// SOQL's `=`: text compares ignoring case, numbers by value.
    private static func same(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)): left.caseInsensitiveCompare(right) == .orderedSame
        case (.int, .double), (.double, .int), (.double, .double): lhs.doubleValue == rhs.doubleValue
        default: lhs == rhs
        }
    }

    /// Orders nulls first, numbers by value, text ignoring case.
    private static func sortKey(_ value: JSONValue) -> String {
        switch value {
        case .null: ""
        case .int(let number): String(format: "1%020d", number)
        case .double(let number): String(format: "1%030.10f", number)
        case .bool(let flag): flag ? "11" : "10"
        default: "1" + (value.stringValue ?? value.description).uppercased()
        }
    }

    // MARK: Query

    func runQuery(_ text: String, version: APIVersion, user: User, includeDeleted: Bool, _ state: inout State) -> HTTPResponse {
        let query: SOQLQuery
        do { query = try SOQLQuery(text) } catch {
            return Self.errors(400, "MALFORMED_QUERY", QueryText(text).pointing(line: error.line, column: error.column, error.message))
        }
        do throws(Refusal) {
            let plan = try Self.plan(query)
            let rows = select(plan, from: records(of: plan.type.name, orgID: user.orgID, includeDeleted: includeDeleted, state), state)
            let projected = rows.map {
                project($0, paths: plan.paths, children: plan.children, version: version, includeDeleted: includeDeleted, state)
            }
            return page(projected, offset: 0, cursor: nil, version: version, &state)
        } catch {
            return error.response
        }
    }

    func nextPage(_ locator: String, version: APIVersion, _ state: inout State) -> HTTPResponse {
        // "<cursor>-<offset>"; the cursor may itself contain '-'.
        guard let dash = locator.lastIndex(of: "-"), let offset = Int(locator[locator.index(after: dash)...]),
              let records = state.cursors[String(locator[..<dash])] else {
            return Self.errors(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        }
        return page(records, offset: offset, cursor: String(locator[..<dash]), version: version, &state)
    }

    private func page(_ records: [JSONValue], offset: Int, cursor: String?, version: APIVersion, _ state: inout State) -> HTTPResponse {
        let end = min(offset + queryBatchSize, records.count)
        var body: [String: JSONValue] = ["totalSize": .int(records.count), "done": .bool(end == records.count),
                                         "records": .array(Array(records[min(offset, end)..<end]))]
        if end < records.count {
            let id = cursor ?? "01g" + SecureRandom.token(byteCount: 6)
            state.cursors[id] = records
            body["nextRecordsUrl"] = .string("/services/data/\(version)/query/\(id)-\(end)")
        } else if let cursor {
            state.cursors[cursor] = nil
        }
        return Self.json(200, .object(body))
    }
}
