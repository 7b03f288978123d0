import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

/// A failed call's body — whatever it is — reaches the error and the user's message.
struct ErrorBodyTests {
    func failure(status: Int, contentType: String, body: String) async throws -> RestClientError? {
        let org = EmbeddedOrg.sample()
        let transport = org.urlSessionTransport()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: transport).logIn(flow: .webServer)
        let client = RestClient(credentials: credentials, transport: transport)
        org.injectFault(.respondNext(1, status: status, contentType: contentType, body: body))
        return await #expect(throws: RestClientError.self) { _ = try await client.send(request: client.requestForLimits(apiVersion: nil)) }
    }

    @Test func anHTMLErrorPageIsSummarisedWithoutItsTags() async throws {
        let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body { font: 12px }</style></head>"
            + "<body><h1>Bad Gateway</h1><p>The proxy got no answer from &quot;na1&quot;.</p><script>track()</script></body></html>"
        let error = try await failure(status: 502, contentType: "text/html; charset=utf-8", body: page)
        #expect(error?.statusCode == 502)
        #expect(error?.responseBody == page, "the whole body is kept")
        #expect(error?.serverErrors == [])
        #expect(error?.bodySummary() == "502 Bad Gateway — Bad Gateway The proxy got no answer from \"na1\".")
        #expect(error?.userFacingMessage(fallback: "Failed to load")
            == "Failed to load (HTTP 502: 502 Bad Gateway — Bad Gateway The proxy got no answer from \"na1\".)")
        #expect(error?.description == "the REST call failed with HTTP 502: 502 Bad Gateway — Bad Gateway The proxy got no answer from \"na1\".")
    }

    @Test func aLongBodyIsTruncatedAtAWord() async throws {
        let body = String(repeating: "overloaded ", count: 100)
        let error = try await failure(status: 503, contentType: "text/plain", body: body)
        let message = try #require(error?.userFacingMessage(fallback: "Failed"))
        #expect(message.hasPrefix("Failed (HTTP 503: overloaded overloaded"))
        #expect(message.hasSuffix("overloaded…)"), "cut between words")
        #expect(message.count < 200)
        #expect(error?.responseBody == body)
        #expect(try #require(error?.bodySummary(limit: 40)).count <= 40)
    }

    @Test func aJSONBodyThatIsNotAnErrorArrayIsShown() async throws {
        let error = try await failure(status: 400, contentType: "application/json", body: #"{"error":"invalid_request","error_description":"bad things"}"#)
        #expect(error?.userFacingMessage(fallback: "Failed") == "Failed (HTTP 400: invalid_request: bad things)")
        let other = try await failure(status: 500, contentType: "application/json", body: #"{"detail": "upstream timeout"}"#)
        #expect(other?.description == #"the REST call failed with HTTP 500: {"detail": "upstream timeout"}"#)
    }

    @Test func perRecordErrorsNamedStatusCodeDecodeToo() throws {
        let entry = try JSONDecoder().decode(ServerError.self, from: Data(#"{"statusCode":"REQUIRED_FIELD_MISSING","message":"Required fields are missing: [Name]","fields":["Name"]}"#.utf8))
        #expect(entry == ServerError(message: "Required fields are missing: [Name]", errorCode: "REQUIRED_FIELD_MISSING", fields: ["Name"]))
    }
}

