import AppKernel
import AppKernelAuth
import AppKernelEmbeddedOrg
import AppKernelREST
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import TestSupport
import Testing

/// Issue 32's network steps over an `OrgWorld` (the embedded org behind a `HeldTransport`): each
/// does what the SDK and its REST client do, and the explorer finds a page written into another
/// user's cache with them.
@MainActor
struct NetworkStepsTests {
    /// An app with nothing of its own: the world's `request` step sends its query itself.
    static func makeWorld() throws -> OrgWorld {
        try OrgWorld(expression: "try NetworkStepsTests.makeWorld()", users: explorerUsers(2)) { _ in EmptyAppDelegate() }
    }

    /// A launched world with one request waiting.
    static func launchedWithARequest() async throws -> OrgWorld {
        let world = try makeWorld()
        try world.launch(); await world.settle()
        world.startRequest(); await world.settle()
        #expect(world.network.held.map(\.summary) == ["GET /services/data/v62.0/query"])
        #expect(world.network.held.first?.user == "005A")
        return world
    }

    @Test(.appKernel) @MainActor
    func aPageArrivesWhenTheStepPassesIt() async throws {
        let world = try await Self.launchedWithARequest()
        world.deliverPage(); await world.settle()
        #expect(world.network.held.isEmpty)
        let response = try #require(try world.requestResults.first?.get())
        #expect(response.status == 200)
        #expect(Set(world.servedRecords.values) == [FakeAccountManager.account("005A").identity])
        #expect(world.servedRecords.count == 2)          // Acme Corporation and Globex: Ada's org
        #expect(world.trackedWork.filter { !$0.isDone }.isEmpty)
        await world.tearDown()
    }

    @Test(.appKernel) @MainActor
    func aFailedPageFailsTheRequestWith503() async throws {
        let world = try await Self.launchedWithARequest()
        world.failPage(); await world.settle()
        guard case .failure(.apiFailed(let response, _, _)) = try #require(world.requestResults.first) else {
            Issue.record("expected apiFailed, got \(world.requestResults)")
            return
        }
        #expect(response?.status == 503)
        #expect(world.servedRecords.isEmpty)
        await world.tearDown()
    }

    @Test(.appKernel) @MainActor
    func a401IsAnsweredByARefreshAndTheRequestIsSentAgain() async throws {
        let world = try await Self.launchedWithARequest()
        world.answerWith401(refreshRefused: false); await world.settle()
        #expect(world.org.requestLog.contains("POST /services/oauth2/token"), "the refresh went to the org, not held")
        #expect(world.network.held.count == 1, "the retry waits for the network like the first try")
        let client = try #require(world.client(for: "005A"))
        #expect(await client.refreshCount == 1)
        world.deliverPage(); await world.settle()
        #expect(try world.requestResults.first?.get().status == 200, "the retry with the new token succeeded")
        #expect(world.tokenExpiredLogouts.isEmpty)
        #expect(world.accounts.currentIdentity?.userID == "005A")
        await world.tearDown()
    }

    @Test(.appKernel) @MainActor
    func invalidGrantLogsTheUserOutWithTokenExpired() async throws {
        let world = try await Self.launchedWithARequest()
        world.answerWith401(refreshRefused: true); await world.settle()
        #expect(world.tokenExpiredLogouts == ["005A"])
        #expect(world.network.held.isEmpty, "no retry after a refused refresh")
        guard case .failure(.apiFailed(_, let underlying, _)) = try #require(world.requestResults.first),
              case .serverError(code: "invalid_grant", _, _) = underlying as? OAuthError else {
            Issue.record("expected the refresh's invalid_grant, got \(world.requestResults)")
            return
        }
        let change = try #require(world.userChanges.last?.change)
        #expect(change.kind == .loggedOut && change.reason == .tokenExpired)
        #expect(change.from?.userID == "005A" && change.to?.userID == "005B")
        #expect(world.accounts.currentIdentity?.userID == "005B")
        #expect(world.client(for: "005A") !== nil, "a new login gets a new client")
        await world.finish()
        for invariant in world.standardInvariants { #expect(world.violation(of: invariant) == nil, "\(invariant)") }
        await world.tearDown()
    }

    @Test(.appKernel) @MainActor
    func theNetworkDownFailsWaitingAndNewRequestsUntilItIsUp() async throws {
        let world = try await Self.launchedWithARequest()
        world.setNetwork(down: true); await world.settle()
        #expect(world.network.held.isEmpty)
        world.startRequest(); await world.settle()
        #expect(world.network.held.isEmpty, "a request while down fails at once")
        #expect(world.requestResults.count == 2)
        for result in world.requestResults {
            guard case .failure(.network(let underlying)) = result else { Issue.record("expected a network error, got \(result)"); continue }
            #expect((underlying as? HTTPTransportError)?.code == .connectionFailed)
        }
        world.setNetwork(down: false)
        world.startRequest(); await world.settle()
        #expect(world.network.held.count == 1)
        await world.tearDown()
    }

    @Test(.appKernel) @MainActor
    func tearDownAnswersEveryHeldRequest() async throws {
        let world = try await Self.launchedWithARequest()
        world.startRequest(); await world.settle()
        #expect(world.network.held.count == 2)
        await world.tearDown()
        #expect(world.network.held.isEmpty)
        #expect(world.trackedWork.filter { !$0.isDone }.isEmpty)
    }

    @Test(.appKernel) @MainActor
    func eachStepIsEnabledOnlyWhenItCanHappen() async throws {
        let steps = StepSet.network
        func enabled(_ world: ExplorerWorld) -> [String] {
            steps.definitions.flatMap { definition in
                definition.arguments.filter { definition.isEnabled(world, $0) }.map { ExplorerStep(definition.name, $0).description }
            }
        }
        let world = try Self.makeWorld()
        #expect(enabled(world).isEmpty, "nothing before the launch")
        try world.launch(); await world.settle()
        #expect(enabled(world) == ["request", "network(down)"])
        world.startRequest(); await world.settle()
        #expect(enabled(world) == ["request", "syncPage(ok)", "syncPage(fail)", "401(refresh)", "401(invalid_grant)", "network(down)"])
        world.startRequest(); await world.settle()
        #expect(!enabled(world).contains("request"), "two requests wait at most")
        world.setNetwork(down: true); await world.settle()
        #expect(enabled(world) == ["request", "network(up)"])
        await world.tearDown()
    }

    @Test(.exploresManySchedules, .reportsProgress) func findsAPageWrittenIntoTheUserWhoIsCurrentWhenItArrives() async throws {
        let explorer = LifecycleExplorer(world: { try CachedAccountsApp.makeWorld(writesToCurrentUser: true) },
                                         steps: .system + .sdk() + .network)
        // A budget of schedules, not time: the search covers the same schedules under any load.
        let report = try await explorer.check(depth: 6, budget: .schedules(20_000))
        let found = try #require(report.firstViolation)
        figure("foreign page found:", report.schedules, "schedules,", report.distinctStates, "states,", report.elapsed)
        #expect(found.invariant == .noOtherUsersData)
        #expect(found.schedule.description == "launch; request; switchUser(005B); syncPage(ok)")
        #expect(found.printedTest == """
            @Test(.appKernel) @MainActor
            func explorerFound_noOtherUsersData() async throws {
                let world = try CachedAccountsApp.makeWorld(writesToCurrentUser: true)
                try world.launch(); await world.settle()
                world.startRequest(); await world.settle()
                try world.switchUser("005B"); await world.settle()
                world.deliverPage(); await world.settle()
                #expect(world.violation(of: .noOtherUsersData) == nil)   // launch; request; switchUser(005B); syncPage(ok)
            }
            """)
        #expect(try await explorer.replay(found.schedule, world: { try CachedAccountsApp.makeWorld(writesToCurrentUser: false) }).holds)
    }

    /// The printed test, pasted as it is printed: in an `appKernel` test (its own
    /// `SDKManager.shared`; outside one the process's manager may already be another test's
    /// class), where only its expectation may fail.
    @Test(.appKernel) func thePrintedForeignPageTestFailsOnTheBug() async throws {
        try await withKnownIssue { try await printedForeignPageTest() } matching: { $0.isExpectationFailure }
    }

    /// The printed test (its `@Test` line dropped: it fails, inside `withKnownIssue` above).
    func printedForeignPageTest() async throws {
        let world = try CachedAccountsApp.makeWorld(writesToCurrentUser: true)
        try world.launch(); await world.settle()
        world.startRequest(); await world.settle()
        try world.switchUser("005B"); await world.settle()
        world.deliverPage(); await world.settle()
        #expect(world.violation(of: .noOtherUsersData) == nil)   // launch; request; switchUser(005B); syncPage(ok)
        await world.tearDown()
    }

    /// The same test on the fixed app (the page goes into the cache of the user who asked): it
    /// passes.
    @Test(.appKernel) @MainActor
    func explorerFound_noOtherUsersData() async throws {
        let world = try CachedAccountsApp.makeWorld(writesToCurrentUser: false)
        try world.launch(); await world.settle()
        world.startRequest(); await world.settle()
        try world.switchUser("005B"); await world.settle()
        world.deliverPage(); await world.settle()
        #expect(world.violation(of: .noOtherUsersData) == nil)   // launch; request; switchUser(005B); syncPage(ok)
    }

    @Test(.exploresManySchedules, .reportsProgress) func theFixedAppHoldsEveryInvariantToDepthFour() async throws {
        let report = try await LifecycleExplorer(world: { try CachedAccountsApp.makeWorld(writesToCurrentUser: false) },
                                                 steps: .system + .sdk() + .network)
            .check(depth: 4, budget: .schedules(100_000), walkDepth: 0)
        #expect(report.firstViolation == nil, "\(report)")
        #expect(report.exhaustedDepth == 4)
        figure("fixed network app:", report)
    }
}
