import AppKernelCore
import AppKernelAuth
import Foundation

/// The Mobile SDK's request builders. Paths, methods and bodies are the Salesforce REST API's:
/// `/services/data/<version>/…`, SOQL and SOSL URL-encoded in `q`, JSON bodies for writes.
extension RestClient {
    private func data(_ version: String?) -> String { "/services/data/\(version ?? apiVersion)" }

    /// One path segment (record ids, object names, external ids), RFC 3986-strict.
    private static func encode(_ segment: String) -> String { FormEncoding.percentEncode(segment) }

    private static func json(_ fields: [String: JSONValue]) -> Data { JSONValue.object(fields).jsonData() }

    /// `GET …/query?q=<soql>`.
    public func request(forQuery soql: String, apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/query", queryParameters: [.init("q", soql)])
    }

    /// `GET …/queryAll?q=<soql>` (deleted and archived records too).
    public func requestForQueryAll(_ soql: String, apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/queryAll", queryParameters: [.init("q", soql)])
    }

    /// `GET …/search?q=<sosl>`.
    public func requestForSearch(_ sosl: String, apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/search", queryParameters: [.init("q", sosl)])
    }

    /// `POST …/sobjects/<type>` with the fields as JSON.
    public func requestForCreate(withObjectType objectType: String, fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        RestRequest(method: .post, path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))", body: Self.json(fields))
    }

    /// `GET …/sobjects/<type>/<id>?fields=a,b`.
    public func requestForRetrieve(withObjectType objectType: String, objectId: String, fieldList: [String]?, apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))",
                    queryParameters: fieldList.map { [.init("fields", $0.joined(separator: ","))] } ?? [])
    }

    /// `PATCH …/sobjects/<type>/<id>` with the fields as JSON.
    public func requestForUpdate(withObjectType objectType: String, objectId: String, fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        RestRequest(method: .patch, path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))", body: Self.json(fields))
    }

    /// `PATCH …/sobjects/<type>/<external id field>/<external id>` with the fields as JSON.
    public func requestForUpsert(withObjectType objectType: String, externalIdField: String, externalId: String,
                                 fields: [String: JSONValue], apiVersion: String?) -> RestRequest {
        RestRequest(method: .patch,
                    path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))/\(Self.encode(externalIdField))/\(Self.encode(externalId))",
                    body: Self.json(fields))
    }

    /// `DELETE …/sobjects/<type>/<id>`.
    public func requestForDelete(withObjectType objectType: String, objectId: String, apiVersion: String?) -> RestRequest {
        RestRequest(method: .delete, path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))/\(Self.encode(objectId))")
    }

    /// `GET …/sobjects/<type>/describe`.
    public func requestForDescribe(withObjectType objectType: String, apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/sobjects/\(Self.encode(objectType))/describe")
    }

    /// `GET …/sobjects`.
    public func requestForDescribeGlobal(apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/sobjects")
    }

    /// `GET /services/data` (the versions the org offers).
    public func requestForVersions() -> RestRequest {
        RestRequest(method: .get, path: "/services/data")
    }

    /// `GET …/limits`.
    public func requestForLimits(apiVersion: String?) -> RestRequest {
        RestRequest(method: .get, path: "\(data(apiVersion))/limits")
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
