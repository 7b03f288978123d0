import Foundation
import Testing
import AppKernel
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

/// Issue 29, "failures speak": a launch that failed with no `launchErrorHandler` reaches the
/// host (`ProcessHost` logs it and exits; here, `SimulatedHost` records it).
@MainActor
struct FailuresSpeakTests {
    @Test func aFailedConfigPhaseWithNoHandlerReachesTheHost() async throws {
        let host = SimulatedHost()
        let manager = SDKManager()   // no boot config and no config directory: the config phase fails
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        #expect(host.unhandledLaunchErrors.map(\.phase) == [.config])
        let report = try #require(host.unhandledErrors.first)
        #expect(report.subject == "sdk.launch")
        #expect(report.exitStatus == 70)
        #expect(report.message.hasPrefix("the launch phase 'config' failed: "), "\(report.message)")
        #expect(report.advice.contains("launchErrorHandler"), "says what to do: \(report.advice)")
    }

    @Test func aFailedAuthPhaseWithNoHandlerReachesTheHost() async throws {
        let host = SimulatedHost()
        let accounts = FakeAccountManager()   // no scripted login: the login is refused
        let manager = SDKManager(bootConfig: BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "app://done"),
                                 accountManager: accounts)
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        #expect(host.unhandledLaunchErrors.map(\.phase) == [.auth])
    }

    @Test func aFailureTheHandlerTakesDoesNotReachTheHost() async throws {
        let host = SimulatedHost()
        let manager = SDKManager()
        var heard: [LaunchPhase?] = []
        manager.launchErrorHandler = { heard.append($0.phase) }
        host.attach(manager)
        try host.launch(delegate: DefaultApplicationDelegate())
        await manager.automaticLaunch?.value
        #expect(heard == [.config])
        #expect(host.unhandledErrors.isEmpty)
    }

    @Test func aLaunchTheCallerAwaitsIsTheCallersToHandle() async throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let manager = SDKManager(application: app)   // attached after the launch: it launches when asked
        await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(host.unhandledErrors.isEmpty)
    }
}
