import LoopbackServer
import Testing

/// The loopback OAuth and REST servers are Python standard-library scripts: without python3
/// their suites are skipped, and this one test says what is missing and how to install it —
/// one clear message instead of a failure per test.
struct PythonRequirementTests {
    @Test func python3IsInstalledForTheLoopbackServers() {
        #expect(PythonServer.isInstalled, Comment(rawValue: PythonServer.missingMessage))
    }
}
