import AppKernelCore
import AppKernelREST
import AppKernelAuth
import Foundation

/// Connect REST API's `GET /services/data/vXX.X/connect/briefcase/priming-records` (since 54.0;
/// `changedAfterTimestamp` since 55.0), in the shape the Connect REST API Developer Guide
/// documents ("Briefcase Priming Records Resource", "Priming Record Collection"):
///
/// ```json
/// {"primingRecords": {"Account": {"012000000000000AAA": [{"id": "001…", "systemModstamp": "2026-…Z"}]}},
///  "relayToken": "…" or null, "ruleErrors": [],
///  "stats": {"recordCountServed": 2, "recordCountTotal": 5, "ruleCountServed": 1, "ruleCountTotal": 2}}
/// ```
///
/// The embedded org's connected app has one briefcase with a rule per object type that has
/// records (in the order types first got records), each priming every record of the user's org.
/// Rules are processed in order; a response holds at most `queryBatchSize` records, and a
/// `relayToken` (opaque, the position) says where the next request picks up — null once all are
/// served. Records are grouped by object type, then by record type (`RecordTypeId`, or the master
/// record type `012000000000000AAA`). `changedAfterTimestamp` (ISO 8601) keeps the records whose
/// `SystemModstamp` is later; giving it and `relayToken` together is refused (400), as is a relay
/// token the org did not give.
extension EmbeddedOrg {
    /// The master record type's id, for records of an object without record types.
    static let masterRecordTypeId = "012000000000000AAA"

    func primingRecords(_ request: HTTPRequest, query: [String: String], version: APIVersion, user: User, _ state: State) throws(Refusal) -> HTTPResponse {
        try Self.allow(request.method, "GET,HEAD")
        guard version.major >= 54 else { throw Refusal.notFound }
        let changedAfterText = query["changedAfterTimestamp"]
        if changedAfterText != nil, version.major < 55 { throw Refusal(400, "INVALID_INPUT", "changedAfterTimestamp is available since API version 55.0") }
        if changedAfterText != nil, query["relayToken"] != nil {
            throw Refusal(400, "INVALID_INPUT", "You can include either changedAfterTimestamp or relayToken in a request, but not both.")
        }
        var changedAfter: Int64?
        if let changedAfterText {
            guard let millis = SalesforceDateTime.millis(from: changedAfterText) else {
                throw Refusal(400, "INVALID_INPUT", "changedAfterTimestamp is not an ISO 8601 date-time: \(changedAfterText)")
            }
            changedAfter = millis
        }
        var start = 0
        if let token = query["relayToken"] {
            guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8), text.hasPrefix("priming:"),
                  let offset = Int(text.dropFirst("priming:".count)), offset >= 0 else {
                throw Refusal(400, "INVALID_INPUT", "the relayToken is not one this org gave")
            }
            start = offset
        }
        // One rule per object type, in the order types first got records; each its records.
        var rules: [(type: String, records: [Record])] = []
        for id in state.order {
            guard let record = state.records[id], !record.isDeleted, record.orgID == user.orgID else { continue }
            if let changedAfter {
                let stamp = (record.fields["SystemModstamp"] ?? record.fields["LastModifiedDate"])?.stringValue.flatMap(SalesforceDateTime.millis(from:))
                guard let stamp, stamp > changedAfter else { continue }
            }
            if let index = rules.firstIndex(where: { $0.type == record.type }) { rules[index].records.append(record) } else { rules.append((record.type, [record])) }
        }
        let all = rules.flatMap { rule in rule.records.map { (rule: rule.type, record: $0) } }
        let served = Array(all.dropFirst(start).prefix(max(queryBatchSize, 1)))
        var byType: [String: [String: [JSONValue]]] = [:]
        for (_, record) in served {
            let recordType = record.fields["RecordTypeId"]?.stringValue ?? Self.masterRecordTypeId
            let entry: JSONValue = ["id": record.fields["Id"] ?? .null, "systemModstamp": record.fields["SystemModstamp"] ?? record.fields["LastModifiedDate"] ?? .null]
            byType[record.type, default: [:]][recordType, default: []].append(entry)
        }
        let end = start + served.count
        let token: JSONValue = end < all.count ? .string(Data("priming:\(end)".utf8).base64EncodedString()) : .null
        let rulesServed = Set(served.map(\.rule)).count
        let body: JSONValue = [
            "primingRecords": .object(byType.mapValues { .object($0.mapValues(JSONValue.array)) }),
            "relayToken": token,
            "ruleErrors": [],
            "stats": ["recordCountServed": .int(served.count), "recordCountTotal": .int(all.count),
                      "ruleCountServed": .int(rulesServed), "ruleCountTotal": .int(rules.count)],
        ]
        return Self.json(200, body)
    }
}
