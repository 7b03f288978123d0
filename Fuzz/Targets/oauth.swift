// libFuzzer target: what the OAuth flows read from outside — the user-agent and web-server
// callbacks (AuthorizationRequest.parseCallback / parseCodeCallback), token responses (the JSON
// body's fields, then Credentials from them) and identity JSON (UserIdentity). The first byte
// picks the reader. Built and run by .ci/fuzz.
@testable import AppKernelAuth
import Foundation

let config = OAuthConfig(clientID: "3MVG9fuzz", redirectURI: URL(string: "sfdc://success")!)
let userAgent = try! AuthorizationRequest(config: config, flow: .userAgent, state: "fuzzstate", codeVerifier: nil)
let webServer = try! AuthorizationRequest(config: config, flow: .webServer, state: "fuzzstate", codeVerifier: "verifier-0123456789-0123456789-0123456789-01")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let body = Data(UnsafeBufferPointer(start: data + 1, count: count - 1))
    let text = String(decoding: body, as: UTF8.self)
    switch data[0] % 4 {
    case 0:
        if let url = URL(string: text) {
            _ = try? userAgent.parseCallback(url)
            _ = try? webServer.parseCodeCallback(url)
        }
    case 1:
        if let fields = try? TokenClient.stringFields(of: HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: body)) {
            _ = try? Credentials(oauthParameters: fields, previousRefreshToken: "previous")
        }
    case 2:
        _ = try? UserIdentity(json: body)
    default:
        if let pairs = FormEncoding.decode(text) {
            _ = try? Credentials(oauthParameters: Dictionary(pairs, uniquingKeysWith: { first, _ in first }))
        }
        _ = Base64URL.decode(text)
    }
    return 0
}
