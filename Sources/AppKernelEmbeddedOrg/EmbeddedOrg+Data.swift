import AppKernelCore
import AppKernelREST
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
    var orderings: [SOQLQuery.Ordering] { get }
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
        /// The field's Salesforce type (`datetime`, `string`, …).
        var type = "string"
    }

    /// What a query (or one level of it) selects: resolved against the schema, ready to run.
    struct Plan {
        var type: ObjectInfo
        var paths: [FieldPath]
        var conditions: [(path: FieldPath, condition: SOQLQuery.Condition)]
        var order: [(path: FieldPath, ascending: Bool)]
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
        return FieldPath(hops: hops, field: field.name, type: field.type)
    }

    /// The plan of one selection on `type` (its subqueries are added by the caller).
    static func plan(_ selection: some RecordSelection, on type: ObjectInfo, defaultFields: [String] = [], in source: QueryText) throws(Refusal) -> Plan {
        var paths: [FieldPath] = []
        let fields = selection.fields.isEmpty ? defaultFields : selection.fields
        for (index, field) in fields.enumerated() {
            paths.append(try resolve(field, on: type, at: selection.places.fields.indices.contains(index) ? selection.places.fields[index] : 0, in: source))
        }
        var conditions: [(path: FieldPath, condition: SOQLQuery.Condition)] = []
        for (condition, offset) in zip(selection.conditions, selection.places.conditions) {
            let path = try resolve(condition.field, on: type, at: offset, in: source)
            try checkLiteral(condition, for: path, at: offset, in: source)
            conditions.append((path, condition))
        }
        var order: [(path: FieldPath, ascending: Bool)] = []
        for (index, ordering) in selection.orderings.enumerated() {
            let offset = selection.places.orderBy.indices.contains(index) ? selection.places.orderBy[index] : 0
            order.append((try resolve(ordering.field, on: type, at: offset, in: source), ordering.ascending))
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
            plan.conditions.allSatisfy { Self.holds($0.condition, for: value($0.path, of: record, state)) }
        }
        if !plan.order.isEmpty {
            let keyed = rows.map { row in (row, plan.order.map { Self.sortKey(value($0.path, of: row, state)) }) }
            rows = keyed.sorted { lhs, rhs in
                for (index, order) in plan.order.enumerated() where lhs.1[index] != rhs.1[index] {
                    return order.ascending ? lhs.1[index] < rhs.1[index] : lhs.1[index] > rhs.1[index]
                }
                return false
            }.map(\.0)
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

    /// SOQL's `=`: text compares ignoring case, numbers by value, date-times by instant.
    private static func same(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)):
            if let leftTime = SalesforceDateTime.millis(from: left), let rightTime = SalesforceDateTime.millis(from: right) {
                return leftTime == rightTime
            }
            return left.caseInsensitiveCompare(right) == .orderedSame
        case (.int, .double), (.double, .int), (.double, .double): return lhs.doubleValue == rhs.doubleValue
        default: return lhs == rhs
        }
    }

    /// How a field's value compares with a literal: `nil` when they can't be ordered (a null, or
    /// values of different kinds). Date-times by instant, numbers by value, text ignoring case.
    private static func order(_ lhs: JSONValue, _ rhs: JSONValue) -> ComparisonResult? {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)):
            if let leftTime = SalesforceDateTime.millis(from: left), let rightTime = SalesforceDateTime.millis(from: right) {
                return leftTime < rightTime ? .orderedAscending : leftTime > rightTime ? .orderedDescending : .orderedSame
            }
            return left.caseInsensitiveCompare(right)
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            guard let left = lhs.doubleValue, let right = rhs.doubleValue else { return nil }
            return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
        case (.bool(let left), .bool(let right)):
            return left == right ? .orderedSame : (left ? .orderedDescending : .orderedAscending)
        default:
            return nil
        }
    }

    /// Whether a field's value meets a condition (a null meets only `= null`, `!= x` and `NOT IN`).
    static func holds(_ condition: SOQLQuery.Condition, for value: JSONValue) -> Bool {
        switch condition.comparison {
        case .equal: return same(value, condition.value)
        case .notEqual: return !same(value, condition.value)
        case .in: return condition.value.arrayValue?.contains { same(value, $0) } ?? false
        case .notIn: return !(condition.value.arrayValue?.contains { same(value, $0) } ?? false)
        case .less: return order(value, condition.value) == .orderedAscending
        case .lessOrEqual: return order(value, condition.value).map { $0 != .orderedDescending } ?? false
        case .greater: return order(value, condition.value) == .orderedDescending
        case .greaterOrEqual: return order(value, condition.value).map { $0 != .orderedAscending } ?? false
        }
    }

    /// 400 `INVALID_FIELD` when a literal's kind does not fit the field, as Salesforce checks:
    /// a date-time field takes unquoted date-time literals, and only it does.
    static func checkLiteral(_ condition: SOQLQuery.Condition, for path: FieldPath, at offset: Int, in source: QueryText) throws(Refusal) {
        let values = condition.value.arrayValue ?? [condition.value]
        guard !values.allSatisfy({ $0 == .null }) else { return }
        if path.type == "datetime", !condition.isDateTime {
            throw Refusal(400, "INVALID_FIELD", source.pointing(at: offset,
                "value of filter criterion for field '\(path.field)' must be of type dateTime and should not be enclosed in quotes"))
        }
        if path.type != "datetime", condition.isDateTime {
            throw Refusal(400, "INVALID_FIELD", source.pointing(at: offset,
                "value of filter criterion for field '\(path.field)' must be of type \(path.type) and should be enclosed in quotes"))
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

    /// A query's remaining pages: the ids of its rows and how to project them, so pages are
    /// projected one at a time (a 20,000-row result is not held as JSON between pages).
    struct Cursor {
        var ids: [String]
        var plan: Plan
        var includeDeleted: Bool
        var batchSize: Int
    }

    /// The page size a request asks for with `Sforce-Query-Options: batchSize=N` (Salesforce
    /// takes 200…2000), never more than the org's ``queryBatchSize``.
    func batchSize(_ request: HTTPRequest) -> Int {
        let header = request.headers.first { $0.key.caseInsensitiveCompare("Sforce-Query-Options") == .orderedSame }?.value ?? ""
        let asked = header.split(separator: ",").compactMap { option -> Int? in
            let parts = option.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 && parts[0].caseInsensitiveCompare("batchSize") == .orderedSame ? Int(parts[1]) : nil
        }.first
        return min(queryBatchSize, asked.map { min(max($0, 200), 2000) } ?? 2000)
    }

    func runQuery(_ text: String, version: APIVersion, user: User, includeDeleted: Bool, batchSize: Int, _ state: inout State) -> HTTPResponse {
        let query: SOQLQuery
        do { query = try SOQLQuery(text) } catch {
            return Self.errors(400, "MALFORMED_QUERY", QueryText(text).pointing(line: error.line, column: error.column, error.message))
        }
        do throws(Refusal) {
            let plan = try Self.plan(query)
            let rows = select(plan, from: records(of: plan.type.name, orgID: user.orgID, includeDeleted: includeDeleted, state), state)
            let cursor = Cursor(ids: rows.compactMap { $0.fields["Id"]?.stringValue }, plan: plan, includeDeleted: includeDeleted,
                                batchSize: max(batchSize, 1))
            return page(cursor, offset: 0, locator: nil, version: version, &state)
        } catch {
            return error.response
        }
    }

    func nextPage(_ locator: String, version: APIVersion, _ state: inout State) -> HTTPResponse {
        // "<cursor>-<offset>"; the cursor may itself contain '-'.
        guard let dash = locator.lastIndex(of: "-"), let offset = Int(locator[locator.index(after: dash)...]),
              let cursor = state.cursors[String(locator[..<dash])] else {
            return Self.errors(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        }
        return page(cursor, offset: offset, locator: String(locator[..<dash]), version: version, &state)
    }

    /// A page of a query result: `{"done", "nextRecordsUrl", "records", "totalSize"}` (keys
    /// sorted, as every answer's). The body is written row by row, so a page of 2,000 records is
    /// never held as one JSON tree besides its bytes.
    private func page(_ cursor: Cursor, offset: Int, locator: String?, version: APIVersion, _ state: inout State) -> HTTPResponse {
        let total = cursor.ids.count
        let end = min(offset + cursor.batchSize, total)
        var body = Data("{\"done\":\(end == total),".utf8)
        if end < total {
            let id = locator ?? "01g" + SecureRandom.token(byteCount: 6)
            state.cursors[id] = cursor
            body.append(Data("\"nextRecordsUrl\":".utf8) + JSONValue.string("/services/data/\(version)/query/\(id)-\(end)").jsonData() + Data(",".utf8))
        } else if let locator {
            state.cursors[locator] = nil
        }
        body.append(Data("\"records\":[".utf8))
        var first = true
        for id in cursor.ids[min(offset, end)..<end] {
            guard let record = state.records[id] else { continue }
            if !first { body.append(UInt8(ascii: ",")) }
            first = false
            body.append(project(record, paths: cursor.plan.paths, children: cursor.plan.children, version: version,
                                includeDeleted: cursor.includeDeleted, state).jsonData())
        }
        body.append(Data("],\"totalSize\":\(total)}".utf8))
        return HTTPResponse(status: 200, headers: ["Content-Type": "application/json;charset=UTF-8"], body: body)
    }
}
