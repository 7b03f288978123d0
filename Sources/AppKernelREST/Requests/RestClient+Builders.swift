public import AppKernelCore
import AppKernelAuth
import Foundation

/// The Mobile SDK's request builders. Paths, methods and bodies are the Salesforce REST API's:
/// `/services/data/<version>/…`, SOQL and SOSL URL-encoded in `q`, JSON bodies for writes.
///
/// A builder given a malformed `apiVersion` (`60.0`, `v60`) still returns a request, but
/// ``send(request:)`` refuses it with ``RestClientError/invalidAPIVersion(_:reason:)`` before
/// anything is sent.
extension RestClient {
    /// A request under `/services/data/<version>/`, marked when the version is malformed.
    private func data(_ version: String?, _ method: RestRequest.Method, _ tail: String, query: [RestRequest.QueryParameter] = [],
                      body: Data? = nil) -> RestRequest {
        let version = version ?? apiVersion
        var request = RestRequest(method: method, path: "/services/data/\(version)\(tail)", queryParameters: query, body: body)
        if (try? APIVersion(version)) == nil { request.malformedAPIVersion = version }
        return request
    }

    /// One path segment (record ids, object names, external ids), RFC 3986-strict.
    private static func encode(_ segment: String) -> String { FormEncoding.percentEncode(segment) }

    private static func json(_ fields: [String: JSONValue]) -> Data { JSONValue.object(fields).jsonData() }

    /// `GET …/query?q=<soql>`.
    public func request(forQuery soql: String, apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/query", query: [.init("q", soql)])
    }

    /// `GET …/queryAll?q=<soql>` (deleted and archived records too).
    public func requestForQueryAll(_ soql: String, apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/queryAll", query: [.init("q", soql)])
    }

    /// `GET …/search?q=<sosl>`.
    public func requestForSearch(_ sosl: String, apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/search", query: [.init("q", sosl)])
    }

    /// `GET …/parameterizedSearch?q=<text>&sobject=<type>&<type>.fields=a,b…`: a search without
    /// SOSL. `objectTypes` maps each type searched to the fields returned (empty: `Id` only);
    /// no types searches every searchable one.
    public func requestForParameterizedSearch(_ text: String, objectTypes: KeyValuePairs<String, [String]> = [:], limitPerType: Int? = nil,
                                              apiVersion: String?) -> RestRequest {
        var query: [RestRequest.QueryParameter] = [.init("q", text)]
        for (type, fields) in objectTypes {
            query.append(.init("sobject", type))
            if !fields.isEmpty { query.append(.init("\(type).fields", fields.joined(separator: ","))) }
        }
        if let limitPerType { query.append(.init("defaultLimit", String(limitPerType))) }
        return data(apiVersion, .get, "/parameterizedSearch", query: query)
    }

    /// `POST …/sobjects/<type>` with the fields as JSON.
    public func requestForCreate(withObjectType objectType: String, fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        data(apiVersion, .post, "/sobjects/\(Self.encode(objectType))", body: Self.json(fields))
    }

    /// `GET …/sobjects/<type>/<id>?fields=a,b`.
    public func requestForRetrieve(withObjectType objectType: String, objectId: String, fieldList: [String]?, apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))",
             query: fieldList.map { [.init("fields", $0.joined(separator: ","))] } ?? [])
    }

    /// `PATCH …/sobjects/<type>/<id>` with the fields as JSON.
    public func requestForUpdate(withObjectType objectType: String, objectId: String, fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        data(apiVersion, .patch, "/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))", body: Self.json(fields))
    }

    /// `PATCH …/sobjects/<type>/<external id field>/<external id>` with the fields as JSON; with
    /// an empty `externalId`, `POST …/sobjects/<type>/<external id field>` (the Mobile SDK's form
    /// for upserting on `Id` with no id yet: a create).
    public func requestForUpsert(withObjectType objectType: String, externalIdField: String, externalId: String,
                                 fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        let path = "/sobjects/\(Self.encode(objectType))/\(Self.encode(externalIdField))"
        guard !externalId.isEmpty else { return data(apiVersion, .post, path, body: Self.json(fields)) }
        return data(apiVersion, .patch, path + "/\(Self.encode(externalId))", body: Self.json(fields))
    }

    /// `GET …/sobjects/<type>/<external id field>/<external id>?fields=a,b`: the record whose
    /// external id is `externalId` (404 when none; 300 with the records' URLs when several).
    public func requestForRetrieve(withObjectType objectType: String, externalIdField: String, externalId: String, fieldList: [String]?,
                                   apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/sobjects/\(Self.encode(objectType))/\(Self.encode(externalIdField))/\(Self.encode(externalId))",
             query: fieldList.map { [.init("fields", $0.joined(separator: ","))] } ?? [])
    }

    /// `DELETE …/sobjects/<type>/<id>`.
    public func requestForDelete(withObjectType objectType: String, objectId: String, apiVersion: String?) -> RestRequest {
        data(apiVersion, .delete, "/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))")
    }

    /// `GET …/sobjects/<type>/describe`.
    public func requestForDescribe(withObjectType objectType: String, apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/sobjects/\(Self.encode(objectType))/describe")
    }

    /// `GET …/sobjects`.
    public func requestForDescribeGlobal(apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/sobjects")
    }

    /// `GET /services/data` (the versions the org offers).
    public func requestForVersions() -> RestRequest {
        RestRequest(method: .get, path: "/services/data")
    }

    /// `GET …/limits`.
    public func requestForLimits(apiVersion: String?) -> RestRequest {
        data(apiVersion, .get, "/limits")
    }

    /// `GET /services/oauth2/userinfo`.
    public func requestForUserInfo() -> RestRequest {
        RestRequest(method: .get, path: "/services/oauth2/userinfo")
    }

    /// Any call: a method, a path under the instance, query parameters and an optional JSON body.
    public func request(method: RestRequest.Method, path: String, queryParameters: [RestRequest.QueryParameter] = [],
                        body: JSONValue? = nil) -> RestRequest {
        RestRequest(method: method, path: path.hasPrefix("/") ? path : "/" + path, queryParameters: queryParameters,
                    body: body.map { $0.jsonData() })
    }
}
