public import AppKernelCore
import AppKernelAuth
import Foundation

/// The Mobile SDK's builders for the calls MobileSync makes beyond plain CRUD: paged queries,
/// object metadata with recent items, the UI API layout, composite requests and sObject
/// collections.
extension RestClient {
    private func versioned(_ version: String?, _ method: RestRequest.Method, _ tail: String, query: [RestRequest.QueryParameter] = [],
                           body: JSONValue? = nil) -> RestRequest {
        let version = version ?? apiVersion
        var request = RestRequest(method: method, path: "/services/data/\(version)\(tail)", queryParameters: query, body: body?.jsonData())
        if (try? APIVersion(version)) == nil { request.malformedAPIVersion = version }
        return request
    }

    /// `GET …/query?q=<soql>` asking for pages of `batchSize` records
    /// (`Sforce-Query-Options: batchSize=N`; Salesforce takes 200…2000 and may send fewer).
    public func request(forQuery soql: String, apiVersion: String?, batchSize: Int) -> RestRequest {
        var request = request(forQuery: soql, apiVersion: apiVersion)
        request.headers["Sforce-Query-Options"] = "batchSize=\(batchSize)"
        return request
    }

    /// `GET …/sobjects/<type>`: the object's basic describe and its `recentItems` (what the
    /// Mobile SDK's MRU sync-down target reads).
    public func requestForMetadata(withObjectType objectType: String, apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .get, "/sobjects/\(FormEncoding.percentEncode(objectType))")
    }

    /// `GET …/ui-api/layout/<object>?formFactor=&layoutType=&mode=&recordTypeId=`: a record
    /// layout of the User Interface API (each `nil` parameter left out: the server's default).
    public func requestForLayout(withObjectAPIName objectAPIName: String, formFactor: String?, layoutType: String?, mode: String?,
                                 recordTypeId: String?, apiVersion: String?) -> RestRequest {
        var query: [RestRequest.QueryParameter] = []
        for (name, value) in [("formFactor", formFactor), ("layoutType", layoutType), ("mode", mode), ("recordTypeId", recordTypeId)] {
            if let value { query.append(.init(name, value)) }
        }
        return versioned(apiVersion, .get, "/ui-api/layout/\(FormEncoding.percentEncode(objectAPIName))", query: query)
    }

    /// `POST …/composite`: the requests as subrequests, in order, each under its reference id
    /// (a later one may use `@{refId.id}`); with `allOrNone`, one failure rolls them all back.
    public func compositeRequest(_ requests: [RestRequest], refIds: [String], allOrNone: Bool, apiVersion: String?) -> RestRequest {
        let subrequests: [JSONValue] = zip(requests, refIds).map { request, refId in
            var url = request.path
            if !request.queryParameters.isEmpty { url += "?" + FormEncoding.encode(request.queryParameters.map { ($0.name, $0.value) }) }
            var entry: [String: JSONValue] = ["method": .string(request.method.rawValue), "url": .string(url), "referenceId": .string(refId)]
            if let body = request.body, let json = try? JSONValue(jsonData: body) { entry["body"] = json }
            return .object(entry)
        }
        return versioned(apiVersion, .post, "/composite", body: ["allOrNone": .bool(allOrNone), "compositeRequest": .array(subrequests)])
    }

    /// `POST …/composite/sobjects`: creates up to 200 records, each with `attributes.type`.
    public func requestForCollectionCreate(allOrNone: Bool, records: [[String: JSONValue]], apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .post, "/composite/sobjects", body: ["allOrNone": .bool(allOrNone), "records": .array(records.map(JSONValue.object))])
    }

    /// `PATCH …/composite/sobjects`: updates up to 200 records, each with `attributes.type` and `Id`.
    public func requestForCollectionUpdate(allOrNone: Bool, records: [[String: JSONValue]], apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .patch, "/composite/sobjects", body: ["allOrNone": .bool(allOrNone), "records": .array(records.map(JSONValue.object))])
    }

    /// `PATCH …/composite/sobjects/<type>/<external id field>`: upserts up to 200 records on an
    /// external id.
    public func requestForCollectionUpsert(allOrNone: Bool, objectType: String, externalIdField: String, records: [[String: JSONValue]],
                                           apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .patch, "/composite/sobjects/\(FormEncoding.percentEncode(objectType))/\(FormEncoding.percentEncode(externalIdField))",
                  body: ["allOrNone": .bool(allOrNone), "records": .array(records.map(JSONValue.object))])
    }

    /// `DELETE …/composite/sobjects?ids=a,b&allOrNone=false`: deletes up to 200 records.
    public func requestForCollectionDelete(allOrNone: Bool, objectIds: [String], apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .delete, "/composite/sobjects",
                  query: [.init("allOrNone", allOrNone ? "true" : "false"), .init("ids", objectIds.joined(separator: ","))])
    }

    /// `POST …/composite/sobjects/<type>` `{"ids", "fields"}`: up to 2000 records of a type, in
    /// the order of the ids (`null` for one that is not there).
    public func requestForCollectionRetrieve(withObjectType objectType: String, objectIds: [String], fieldList: [String],
                                             apiVersion: String?) -> RestRequest {
        versioned(apiVersion, .post, "/composite/sobjects/\(FormEncoding.percentEncode(objectType))",
                  body: ["ids": .array(objectIds.map(JSONValue.string)), "fields": .array(fieldList.map(JSONValue.string))])
    }
}
