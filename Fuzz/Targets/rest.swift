// libFuzzer target: REST response decoding — a response body as JSON (RestResponse.asJSON), and
// an error response as the client reads it (server errors, the 300's record URLs, the body's
// one-line summary, the message for the user). The first byte picks the status and content type.
// Built and run by .ci/fuzz.
import AppKernelAuth
import AppKernelCore
import AppKernelREST
import Foundation

let statuses = [200, 300, 400, 401, 404, 500]
let contentTypes = ["application/json;charset=UTF-8", "text/html", "text/plain"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let body = Data(UnsafeBufferPointer(start: data + 1, count: count - 1))
    let status = statuses[Int(data[0]) % statuses.count]
    let headers = ["content-type": contentTypes[Int(data[0] / 8) % contentTypes.count]]
    let response = RestResponse(status: status, headers: headers, data: body)
    if let json = try? response.asJSON() {
        _ = json["records"]?.arrayValue?.first?["Id"]?.stringValue
        _ = json.description
    }
    let error = RestClientError.apiFailed(response: response, underlyingError: nil,
                                          urlResponse: HTTPResponse(status: status, headers: headers, body: body))
    _ = error.serverErrors
    _ = error.matchingRecordURLs
    _ = error.bodySummary(limit: 120)
    _ = error.userFacingMessage(fallback: "Failed")
    return 0
}
