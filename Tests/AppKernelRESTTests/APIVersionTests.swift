import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST

/// The client refuses a malformed API version before anything is sent, naming it.
struct APIVersionTests {
    @Test(arguments: [("60.0", "it lacks the leading lower-case \"v\" (write v60.0)"), ("v60", "it lacks the minor number (write v60.0)"),
                      ("vabc", "a version is written v<major>.<minor>, such as v62.0"), ("", "it is empty (write a version such as v62.0)"),
                      ("V60.0", "it lacks the leading lower-case \"v\" (write v60.0)"), ("v60.0.1", "a version is written v<major>.<minor>, such as v62.0")])
    func aMalformedVersionIsATypedErrorNamingIt(_ version: String, _ reason: String) async {
        let sent = RefreshCounter()
        let transport = InProcessTransport { _ in _ = await sent.next(); return HTTPResponse(status: 200) }
        let atConstruction = #expect(throws: RestClientError.self) {
            _ = try RestClient(credentials: credentials(), transport: transport, apiVersion: version)
        }
        guard case .invalidAPIVersion(let value, let why)? = atConstruction else { Issue.record("\(String(describing: atConstruction))"); return }
        #expect(value == version)
        #expect(why == reason)
        #expect(atConstruction?.description == "the API version \"\(version)\" is malformed: \(reason)")
        let client = RestClient(credentials: credentials(), transport: transport)
        let atSend = await #expect(throws: RestClientError.self) {
            _ = try await client.send(request: client.request(forQuery: "SELECT Id FROM Account", apiVersion: version))
        }
        guard case .invalidAPIVersion(version, reason)? = atSend else { Issue.record("\(String(describing: atSend))"); return }
        #expect(await sent.count == 0, "nothing was sent")
    }

    @Test func aWellFormedVersionIsUsed() async throws {
        let client = try RestClient(credentials: credentials(), transport: InProcessTransport { _ in HTTPResponse(status: 200) }, apiVersion: "v59.0")
        #expect(client.apiVersion == "v59.0")
        #expect(client.requestForLimits(apiVersion: nil).path == "/services/data/v59.0/limits")
        #expect(try APIVersion("v62.0") == APIVersion(major: 62))
        #expect(try APIVersion("v9.0") < APIVersion("v10.0"))
    }
}
