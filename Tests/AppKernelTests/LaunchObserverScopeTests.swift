// Issue 31: the application-launch observers (how a shared SDK manager finds the app it serves)
// resolve through the current SharedScope: an application launched inside a scope is seen only
// by that scope's observers; one launched outside any scope, only by the process's.
import AppKernel
import AppKernelCore
import AppKernelTesting
import Testing

@MainActor
struct LaunchObserverScopeTests {
    /// Two scopes side by side and the process: each observer hears its own launches only.
    /// Before the scope, both scoped observers heard both scoped apps (one process-wide list).
    @Test func anApplicationLaunchedInAScopeIsSeenOnlyByThatScopesObservers() throws {
        let first = SharedScope(name: "first"), second = SharedScope(name: "second")
        defer { first.finish(); second.finish() }
        var seen: [String: [ObjectIdentifier]] = [:]
        func observe(_ name: String) -> ListenerToken {
            Application.observeLaunches { seen[name, default: []].append(ObjectIdentifier($0)) }
        }
        let tokens = [first.withValue { observe("first") }, second.withValue { observe("second") }]
        let outside = observe("process")
        let firstApp = try first.withValue { try SimulatedHost().launch(delegate: DefaultApplicationDelegate()) }
        let secondApp = try second.withValue { try SimulatedHost().launch(delegate: DefaultApplicationDelegate()) }
        let processApp = try SimulatedHost().launch(delegate: DefaultApplicationDelegate())
        #expect(seen["first"] == [ObjectIdentifier(firstApp)])
        #expect(seen["second"] == [ObjectIdentifier(secondApp)])
        // Other tests launch apps outside any scope at the same time: the process's observer
        // hears this test's unscoped app and neither scoped one.
        let processSeen = seen["process"] ?? []
        #expect(processSeen.contains(ObjectIdentifier(processApp)))
        #expect(!processSeen.contains(ObjectIdentifier(firstApp)) && !processSeen.contains(ObjectIdentifier(secondApp)))
        withExtendedLifetime((tokens, outside)) {}
    }

    /// A scope's observers belong to it: a child task of the scope's task shares them, and a
    /// finished scope's list is gone (a new one is empty).
    @Test func aScopesObserversReachItsChildTasksAndEndWithIt() async throws {
        let scope = SharedScope(name: "scope")
        var seen = 0
        let token = scope.withValue { Application.observeLaunches { _ in seen += 1 } }
        try await scope.withValue {
            try await Task { @MainActor in _ = try SimulatedHost().launch(delegate: DefaultApplicationDelegate()) }.value
        }
        #expect(seen == 1, "a child task launches in its parent's scope")
        scope.finish()
        try scope.withValue { _ = try SimulatedHost().launch(delegate: DefaultApplicationDelegate()) }
        #expect(seen == 1, "the finished scope's observers are gone")
        withExtendedLifetime(token) {}
    }
}
