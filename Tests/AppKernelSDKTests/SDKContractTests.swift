// The acceptance test of the SDK-manager issue, as written there.
import Testing
import AppKernel
import AppKernelSDK
import AppKernelTesting

@MainActor final class TracingManager: SDKManager {
    let trace = CallLog()
    override func run(_ phase: LaunchPhase) async throws {
        trace.lines.append("\(phase)")
        try await super.run(phase)
    }
}

@MainActor @Test func contractPhasesRunInOrderAndHooksCanSkipOne() async throws {
    let host = SimulatedHost()
    let app = try host.launch(delegate: DefaultApplicationDelegate())
    let manager = TracingManager(application: app, bootConfig: BootConfig(
        remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
        oauthScopes: ["api", "refresh_token"], shouldAuthenticate: false))
    let skip = manager.hooks.handle(.passcode) { _ in .return }
    let result = try await manager.launch()
    #expect(manager.trace.lines == ["config", "sdkInit", "passcode", "auth", "rootController"])
    #expect(result.flags.contains(.authBypassed))
    #expect(!result.flags.contains(.passcodeVerified))
    skip.cancel()
}

@MainActor @Test func contractFailedPhaseNamesItselfAndRelaunchWorks() async throws {
    let host = SimulatedHost()
    let app = try host.launch(delegate: DefaultApplicationDelegate())
    let manager = TracingManager(application: app, bootConfig: BootConfig(
        remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
        oauthScopes: ["api"], shouldAuthenticate: false))
    struct Boom: Error {}
    let failing = manager.hooks.before(.sdkInit) { _ in throw Boom() }
    await #expect(throws: LaunchError.self) { try await manager.launch() }
    #expect(manager.launchState.failedPhase == .sdkInit)
    failing.cancel()
    let result = try await manager.launch()
    #expect(result.flags.contains(.authBypassed))
}
