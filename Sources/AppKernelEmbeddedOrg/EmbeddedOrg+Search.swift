import AppKernelCore
import AppKernelREST
import AppKernelAuth
import Foundation

/// `…/search?q=<SOSL>` and `…/parameterizedSearch`: `{"searchRecords": [records with attributes]}`
/// (a bare array before v36.0, as Salesforce did).
extension EmbeddedOrg {
    /// One object to search and what to return of it.
    private struct SearchTarget {
        var plan: Plan
        var scope: SOSLSearch.Scope
    }

    func search(_ request: HTTPRequest, version: APIVersion, user: User, _ state: State) -> HTTPResponse {
        let text = Self.queryItems(request).first { $0.0 == "q" }?.1 ?? ""
        let search: SOSLSearch
        do { search = try SOSLSearch(text) } catch {
            return Self.errors(400, "MALFORMED_SEARCH", QueryText(text).pointing(line: error.line, column: error.column, error.message))
        }
        do throws(Refusal) {
            var targets: [SearchTarget] = []
            for returning in search.returning {
                guard let type = Self.object(returning.object) else {
                    throw Refusal(400, "INVALID_TYPE", search.source.pointing(at: returning.places.object, "sObject type '\(returning.object)' is not supported."))
                }
                targets.append(SearchTarget(plan: try Self.plan(returning, on: type, defaultFields: ["Id"], in: search.source), scope: search.scope))
            }
            if search.returning.isEmpty {
                targets = Self.objects.map { SearchTarget(plan: Self.idOnly($0), scope: search.scope) }
            }
            return searchResult(words: SOSLSearch.words(in: search.term), targets: targets, overallLimit: search.limit, version: version, user: user, state)
        } catch {
            return error.response
        }
    }

    /// `GET …/parameterizedSearch?q=Acme&sobject=Account&Account.fields=Id,Name&Account.limit=10`
    /// (also `fields`, `in`, `defaultLimit`, `overallLimit`), or `POST` with the same as JSON
    /// (`{"q", "fields", "sobjects": [{"name", "fields", "limit"}], "in", "defaultLimit", "overallLimit"}`).
    func parameterizedSearch(_ request: HTTPRequest, version: APIVersion, user: User, _ state: State) -> HTTPResponse {
        do throws(Refusal) {
            let parameters = try Self.searchParameters(request)
            guard let term = parameters["q"]?.stringValue, !term.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw Refusal(400, "MISSING_ARGUMENT", "q: the search text is missing")
            }
            guard !term.uppercased().hasPrefix("FIND ") else {
                throw Refusal(400, "INVALID_SEARCH", "q takes plain search text; SOSL goes to the search resource")
            }
            let scopeText = parameters["in"]?.stringValue?.uppercased() ?? "ALL"
            guard let scope = SOSLSearch.Scope(rawValue: scopeText) else {
                throw Refusal(400, "INVALID_SEARCH_SCOPE", "in: '\(scopeText)' is not ALL, NAME, EMAIL or PHONE")
            }
            let defaultLimit = try Self.count(parameters["defaultLimit"], "defaultLimit")
            let fields = Self.names(parameters["fields"])
            var targets: [SearchTarget] = []
            for entry in parameters["sobjects"]?.arrayValue ?? [] {
                let name = entry["name"]?.stringValue ?? ""
                guard let type = Self.object(name) else { throw Refusal(400, "INVALID_TYPE", "sObject type '\(name)' is not supported.") }
                var plan = Self.idOnly(type)
                let own = Self.names(entry["fields"])
                let chosen = own.isEmpty ? fields : own
                if !chosen.isEmpty { plan.paths = [] }
                for field in chosen {
                    guard let resolved = type.field(field) else {
                        throw Refusal(400, "INVALID_FIELD", "No such column '\(field)' on entity '\(type.name)'.")
                    }
                    plan.paths.append(FieldPath(hops: [], field: resolved.name))
                }
                plan.limit = try Self.count(entry["limit"], "\(type.name).limit") ?? defaultLimit
                targets.append(SearchTarget(plan: plan, scope: scope))
            }
            if targets.isEmpty {
                targets = Self.objects.map { SearchTarget(plan: Self.idOnly($0), scope: scope) }
            }
            return searchResult(words: SOSLSearch.words(in: term), targets: targets, overallLimit: try Self.count(parameters["overallLimit"], "overallLimit"),
                                version: version, user: user, state)
        } catch {
            return error.response
        }
    }

    /// The GET parameters, or the POST body, as one JSON object (`sobject` + `<type>.fields` /
    /// `<type>.limit` become `sobjects` entries).
    private static func searchParameters(_ request: HTTPRequest) throws(Refusal) -> [String: JSONValue] {
        if request.method == "POST" {
            guard let body = request.body, case .object(let members)? = try? JSONValue(jsonData: body) else {
                throw Refusal(400, "JSON_PARSER_ERROR", "The request body is not a JSON object")
            }
            return members
        }
        let items = queryItems(request)
        var parameters: [String: JSONValue] = [:]
        for (name, value) in items where !name.contains(".") && name != "sobject" { parameters[name] = .string(value) }
        parameters["sobjects"] = .array(items.filter { $0.0 == "sobject" }.map { item in
            let type = item.1
            return ["name": .string(type),
                    "fields": items.first { $0.0.caseInsensitiveCompare(type + ".fields") == .orderedSame }.map { .string($0.1) } ?? .null,
                    "limit": items.first { $0.0.caseInsensitiveCompare(type + ".limit") == .orderedSame }.map { .string($0.1) } ?? .null]
        })
        return parameters
    }

    /// Field names from `"Id,Name"` or `["Id", "Name"]`.
    private static func names(_ value: JSONValue?) -> [String] {
        if let list = value?.arrayValue { return list.compactMap(\.stringValue) }
        return value?.stringValue?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
    }

    /// A limit given as a number or as text; 400 `INVALID_SEARCH` naming the parameter otherwise.
    private static func count(_ value: JSONValue?, _ name: String) throws(Refusal) -> Int? {
        guard let value, value != .null else { return nil }
        guard let number = value.intValue ?? value.stringValue.flatMap({ Int($0) }), number >= 0 else {
            throw Refusal(400, "INVALID_SEARCH", "\(name): '\(value.stringValue ?? value.description)' is not a count")
        }
        return number
    }

    private static func idOnly(_ type: ObjectInfo) -> Plan {
        Plan(type: type, paths: [FieldPath(hops: [], field: "Id")], conditions: [], order: [], limit: nil, children: [])
    }

    static func queryItems(_ request: HTTPRequest) -> [(String, String)] {
        FormEncoding.decode(request.url.query(percentEncoded: true) ?? "") ?? []
    }

    private func searchResult(words: [String], targets: [SearchTarget], overallLimit: Int?, version: APIVersion, user: User,
                              _ state: State) -> HTTPResponse {
        var found: [JSONValue] = []
        for target in targets {
            let searched = target.plan.type.fields.filter { $0.isSearched(in: target.scope) }.map(\.name)
            let hits = records(of: target.plan.type.name, orgID: user.orgID, includeDeleted: false, state) { record in
                let text = searched.flatMap { record.fields[$0]?.stringValue.map(SOSLSearch.words(in:)) ?? [] }
                return !words.isEmpty && words.allSatisfy { word in
                    word.hasSuffix("*") ? text.contains { $0.hasPrefix(word.dropLast()) } : text.contains(word)
                }
            }
            found += select(target.plan, from: hits, state).map {
                project($0, paths: target.plan.paths, children: [], version: version, includeDeleted: false, state)
            }
        }
        if let overallLimit { found = Array(found.prefix(overallLimit)) }
        return Self.json(200, version.major >= 36 ? ["searchRecords": .array(found)] : .array(found))
    }
}
