// The README's REST snippet, as written.
import Testing
import AppKernelREST
import AppKernelEmbeddedOrg
import TestSupport

/// The snippet's `print`, kept out of the test run's output (shown when `APPKERNEL_TEST_FIGURES`
/// is set): the block runs verbatim, its lines go nowhere else.
private func print(_ items: Any...) { figure(items.map { "\($0)" }.joined(separator: " ")) }

@MainActor
struct ReadmeRESTTests {
    @Test func theReadmeSnippetDeletesNothingThatHasCases() async throws {
        let org = EmbeddedOrg.sample()                      // contacts (some with cases), two users, no network
        let client = try await org.loggedInClient()          // a real web-server + PKCE login
        let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
        try await list.load()
        let outcome = await list.delete(at: 0)               // Ada has cases: refused, row put back
        print(outcome.failureMessage ?? "deleted")            // "Your attempt to delete Ada Lovelace could not be completed…"
        #expect(outcome.failureMessage?.hasPrefix("Your attempt to delete Ada Lovelace could not be completed") == true)
        #expect(list.rows.count == 5, "the row is put back")
    }
}
