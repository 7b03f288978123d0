import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg

/// Forwards to the org, but holds every DELETE until the test releases it.
actor HoldingTransport: HTTPTransport {
    let org: EmbeddedOrg
    private var held: [String: CheckedContinuation<Void, Never>] = [:]
    private var arrivals: [String: CheckedContinuation<Void, Never>] = [:]
    init(org: EmbeddedOrg) { self.org = org }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.method == "DELETE" {
            let id = request.url.lastPathComponent
            await withCheckedContinuation { continuation in
                held[id] = continuation
                arrivals.removeValue(forKey: id)?.resume()
            }
        }
        return try await org.send(request)
    }

    /// Waits until the delete of `id` has arrived and is being held.
    func waitForDelete(of id: String) async {
        if held[id] != nil { return }
        await withCheckedContinuation { arrivals[id] = $0 }
    }

    /// Lets the delete of `id` reach the org.
    func release(_ id: String) { held.removeValue(forKey: id)?.resume() }
}

@MainActor
struct RecordListTests {
    @Test func concurrentDeletesAnsweredOutOfOrderEndWithTheServersRows() async throws {
        let org = EmbeddedOrg.sample()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer)
        let transport = HoldingTransport(org: org)
        let client = RestClient(credentials: credentials, transport: transport)
        let list = RecordList(client: client, query: "SELECT Name, Id FROM Contact ORDER BY Name")
        var changes: [RecordList.Change] = []
        list.onChange = { changes.append($0) }
        try await list.load()
        #expect(list.rows.map { $0.name ?? "" } == ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"])
        let ids = Dictionary(uniqueKeysWithValues: list.rows.map { ($0.name ?? "", $0.id) })

        // Four deletes in flight: Ada and Grace have cases (the server refuses), Alan and Linus do not.
        var outcomes: [String: RecordList.DeleteOutcome] = [:]
        var tasks: [Task<Void, Never>] = []
        for name in ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds"] {
            let index = try #require(list.rows.firstIndex { $0.name == name })
            tasks.append(Task { outcomes[name] = await list.delete(at: index) })
            await transport.waitForDelete(of: ids[name]!)
        }
        #expect(list.rows.map { $0.name ?? "" } == ["Margaret Hamilton"], "every row left at once")

        // Answers arrive in reverse order.
        for name in ["Linus Torvalds", "Grace Hopper", "Alan Turing", "Ada Lovelace"] {
            await transport.release(ids[name]!)
            while outcomes[name] == nil { await Task.yield() }
        }
        for task in tasks { await task.value }
        #expect(list.rows.map { $0.name ?? "" } == ["Ada Lovelace", "Grace Hopper", "Margaret Hamilton"],
                "the refused rows are back in their places; exactly the server's rows remain")
        #expect(outcomes["Ada Lovelace"]?.failureMessage?.hasPrefix("Your attempt to delete Ada Lovelace") == true)
        #expect(outcomes["Grace Hopper"]?.error?.serverErrors.first?.errorCode == "DELETE_FAILED")
        #expect(outcomes["Alan Turing"]?.failureMessage == nil)
        #expect(outcomes["Linus Torvalds"]?.failureMessage == nil)
        let server = try await client.send(request: client.request(forQuery: "SELECT Id FROM Contact", apiVersion: nil)).asJSON()
        #expect(Set(server["records"]?.arrayValue?.compactMap { $0["Id"]?.stringValue } ?? []) == Set(list.rows.map(\.id)))
        #expect(changes.contains(.removed(index: 0, id: ids["Ada Lovelace"]!)))
        #expect(changes.contains(.reloaded))
    }

    @Test func aRefusedRowReturnsBetweenItsNeighboursEvenAfterOtherChanges() async throws {
        let org = EmbeddedOrg.sample()
        let (credentials, _) = try await LoginSession(config: org.oauthConfig, transport: org).logIn(flow: .webServer)
        let transport = HoldingTransport(org: org)
        let list = RecordList(client: RestClient(credentials: credentials, transport: transport), query: "SELECT Name, Id FROM Contact ORDER BY Name")
        try await list.load()
        let grace = list.rows[2]
        let pending = Task { await list.delete(at: 2) }
        await transport.waitForDelete(of: grace.id)
        list.insert(id: "003NEW", fields: ["Name": "Aaron Swartz"], at: 0)      // a row inserted at the top meanwhile
        #expect(list.rows.map { $0.name ?? "" } == ["Aaron Swartz", "Ada Lovelace", "Alan Turing", "Linus Torvalds", "Margaret Hamilton"])
        await transport.release(grace.id)
        let outcome = await pending.value
        #expect(outcome.failureMessage != nil)
        #expect(list.rows.map { $0.name ?? "" } == ["Aaron Swartz", "Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"],
                "not at index 0 (the tutorial's bug), not at the stale index 2: between Alan and Linus")
    }

    @Test func rowsPastTheEndCannotBeDeleted() async throws {
        let org = EmbeddedOrg.sample()
        let list = RecordList(client: try await org.loggedInClient(), query: "SELECT Name, Id FROM Contact")
        try await list.load()
        #expect(list.canDelete(row: 4))
        #expect(!list.canDelete(row: 5))
        #expect(!list.canDelete(row: -1))
        let outcome = await list.delete(at: 5)
        #expect(outcome.failureMessage == "There is no row 5 to delete.")
        #expect(list.rows.count == 5)
        #expect(list.objectType == "Contact")
    }

    @Test func aFailureWithoutAServerMessageUsesTheFallback() async throws {
        let org = EmbeddedOrg.sample()
        let list = RecordList(client: try await org.loggedInClient(), query: "SELECT Name, Id FROM Contact")
        try await list.load()
        org.injectFault(.dropNext(1))
        let outcome = await list.delete(at: 1)
        #expect(outcome.failureMessage == "Failed to delete item")
        #expect(list.rows.count == 5)
    }

    @Test(arguments: [("SELECT Name, Id FROM Contact ORDER BY Name", "Contact"), ("select Id from Account where Name = 'x'", "Account"),
                      ("SELECT Id, (SELECT Id FROM Contacts) FROM Account", "Account"), ("SELECT Id FROM Case WHERE Subject = 'from FROM x'", "Case"),
                      ("SELECT Id FROM Account WHERE Name LIKE 'A%' GROUP BY Id", "Account")])
    func theObjectTypeIsTheNameAfterTheTopLevelFrom(_ query: String, _ type: String) {
        let client = RestClient(credentials: credentials(), transport: InProcessTransport { _ in HTTPResponse(status: 200) })
        #expect(RecordList(client: client, query: query).objectType == type)
    }
}
