// The acceptance test of the REST issue, as written there.
import Testing
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

@MainActor @Test func contractFailedDeletePutsTheRowBackWhereItWas() async throws {
    let org = EmbeddedOrg.sample()                 // contacts seeded; some have child cases
    let client = try await org.loggedInClient()    // a RestClient for the sample user
    let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
    try await list.load()
    let before = list.rows.map(\.id)
    let parent = try #require(list.rows.firstIndex { org.hasChildren(recordID: $0.id) })
    let outcome = await list.delete(at: parent)
    #expect(list.rows.map(\.id) == before)
    #expect(outcome.failureMessage?.isEmpty == false)
    let leaf = try #require(list.rows.firstIndex { !org.hasChildren(recordID: $0.id) })
    let leafID = list.rows[leaf].id
    let ok = await list.delete(at: leaf)
    #expect(ok.failureMessage == nil)
    #expect(!list.rows.map(\.id).contains(leafID))
    let request = client.requestForDelete(withObjectType: "Contact", objectId: leafID, apiVersion: nil)
    await #expect(throws: RestClientError.self) { _ = try await client.send(request: request) }
}
