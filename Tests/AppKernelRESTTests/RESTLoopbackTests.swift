import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import LoopbackServer

/// The REST client and the record list over real HTTP on loopback, through URLSession, against
/// `Fixtures/rest_server.py`.
@MainActor @Suite(.serialized, .enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
struct RESTLoopbackTests {
    func withServer(_ body: (PythonServer, RestClient) async throws -> Void) async throws {
        let server = try await PythonServer.start(script: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/rest_server.py"))
        defer { server.stop() }
        let transport = URLSessionTransport(timeout: 10)
        let config = OAuthConfig(clientID: "3MVG9-loopback", redirectURI: URL(string: "test://callback")!, loginHost: server.baseURL)
        let tokens = TokenClient(config: config, transport: transport)
        let expired = Credentials(accessToken: "A0", refreshToken: "R", instanceURL: server.baseURL,
                                  identityURL: server.baseURL.appendingPathComponent("id/00D000000000001/005000000000001"),
                                  userID: "005000000000001", orgID: "00D000000000001")
        try await body(server, RestClient(credentials: expired, transport: transport) { try await tokens.refresh($0) })
    }

    @Test func theRecordListWorksOverHTTPAfterRefreshingAnExpiredToken() async throws {
        try await withServer { _, client in
            let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact")
            try await list.load()
            #expect(list.rows.map { $0.name ?? "" } == ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"],
                    "three pages followed")
            #expect(await client.refreshCount == 1, "the expired token was refreshed once")
            let before = list.rows.map(\.id)
            let refused = await list.delete(at: 2)
            #expect(refused.failureMessage == "Your attempt to delete Grace Hopper could not be completed because it is associated with the following cases.")
            #expect(list.rows.map(\.id) == before)
            let done = await list.delete(at: 1)
            #expect(done.failureMessage == nil)
            #expect(list.rows.map { $0.name ?? "" } == ["Ada Lovelace", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"])
        }
    }

    @Test func createsAndErrorsTravelOverHTTP() async throws {
        try await withServer { _, client in
            let created = try await client.send(request: client.requestForCreate(withObjectType: "Contact", fields: ["LastName": "Johnson"], apiVersion: nil))
            #expect(created.status == 201)
            #expect(try created.asJSON()["success"] == true)
            let missing = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.requestForDelete(withObjectType: "Contact", objectId: "003NOPE", apiVersion: nil))
            }
            #expect(missing?.statusCode == 404)
            #expect(missing?.serverErrors.first?.errorCode == "NOT_FOUND")
            let malformed = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.request(forQuery: "SELECT Id FROM Account", apiVersion: nil))
            }
            #expect(malformed?.serverErrors.first?.errorCode == "MALFORMED_QUERY")
        }
    }

    @Test func anUpsertMatchingSeveralRecordsSurfacesTheir300URLList() async throws {
        try await withServer { _, client in
            let error = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.requestForUpsert(withObjectType: "Account", externalIdField: "External_Id__c",
                                                                          externalId: "DUP", fields: ["Name": "Acme"], apiVersion: nil))
            }
            #expect(error?.statusCode == 300, "URLSession hands the 300 over: no Location, nothing to follow")
            #expect(error?.matchingRecordURLs == ["/services/data/v62.0/sobjects/Account/001000000000001AAA",
                                                  "/services/data/v62.0/sobjects/Account/001000000000002AAA"])
            #expect(error?.userFacingMessage(fallback: "Could not save")
                == "Could not save (HTTP 300: more than one record matches: /services/data/v62.0/sobjects/Account/001000000000001AAA, /services/data/v62.0/sobjects/Account/001000000000002AAA)")
            let created = try await client.send(request: client.requestForUpsert(withObjectType: "Account", externalIdField: "External_Id__c",
                                                                                externalId: "NEW", fields: ["Name": "Acme"], apiVersion: nil))
            #expect(created.status == 201)
        }
    }

    @Test func anHTMLErrorPageOverHTTPReachesTheMessage() async throws {
        try await withServer { _, client in
            let error = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.requestForDescribe(withObjectType: "Account", apiVersion: nil))
            }
            #expect(error?.statusCode == 500)
            #expect(error?.responseBody?.hasPrefix("<html>") == true)
            #expect(error?.userFacingMessage(fallback: "Failed to load")
                == "Failed to load (HTTP 500: Service Unavailable — Down for maintenance We'll be back at 10:00 & sooner.)")
            #expect(error?.description == "the REST call failed with HTTP 500: Service Unavailable — Down for maintenance We'll be back at 10:00 & sooner.")
        }
    }

    @Test func aVersionWithoutItsVIsRefusedBeforeTheNetworkAndA404ByTheServer() async throws {
        try await withServer { _, client in
            let refused = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.requestForLimits(apiVersion: "62.0"))
            }
            guard case .invalidAPIVersion("62.0", _)? = refused else { Issue.record("\(String(describing: refused))"); return }
            let error = await #expect(throws: RestClientError.self) {
                _ = try await client.send(request: client.request(method: .get, path: "/services/data/62.0/limits"))
            }
            #expect(error?.statusCode == 404)
            #expect(error?.serverErrors == [ServerError(message: "The requested resource does not exist", errorCode: "NOT_FOUND")])
            #expect(error?.userFacingMessage(fallback: "Failed") == "The requested resource does not exist")
        }
    }
}
