// The README's REST snippet, run as written.
import Testing
import AppKernelREST

@MainActor @Test func readmeRESTOfflineExample() async throws {
    let org = EmbeddedOrg.sample()                      // contacts (some with cases), two users, no network
    let client = try await org.loggedInClient()          // a real web-server + PKCE login
    let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
    try await list.load()
    let outcome = await list.delete(at: 0)               // Ada has cases: refused, row put back
    #expect((outcome.failureMessage ?? "deleted").hasPrefix("Your attempt to delete Ada Lovelace could not be completed"))
    #expect(list.rows.first?.name == "Ada Lovelace")
}
