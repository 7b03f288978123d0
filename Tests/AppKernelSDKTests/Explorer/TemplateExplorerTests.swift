import AppKernel
import AppKernelCore
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Foundation
import TestSupport
import Testing

/// The forceios template as ported in "Porting the forceios template" (PortingGuideTests' app
/// delegate, scene delegate and `AppSDKManager`, unchanged) under the lifecycle explorer: its
/// config files, a sealed data home in a temporary folder removed when the schedule ends, users
/// 005A (current) and 005B, logins and passcode prompts answered by steps.
@MainActor
enum PortedTemplateWorld {
    static func make(passcode: String? = nil) throws -> SDKWorld {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("explored-template-\(UUID().uuidString)")
        let config = folder.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let files = ["bootconfig.json": TemplateFiles.bootconfig, "userstore.json": TemplateFiles.userstore,
                     "usersyncs.json": TemplateFiles.usersyncs]
        for (name, text) in files { try Data(text.utf8).write(to: config.appendingPathComponent(name)) }
        let home = try DataHome(url: folder.appendingPathComponent("data"))
        let world = try SDKWorld(expression: "try PortedTemplateWorld.make()", manager: AppSDKManager.self, users: explorerUsers(2),
                                 passcode: passcode) { _ in AppDelegate() }
        world.onTearDown { try? FileManager.default.removeItem(at: folder) }
        AppResources.configDirectory = config
        AppResources.dataDirectory = home.url
        AppResources.keyRing = try KeyRing(dataHome: home.url, provider: .inMemory(SecretKey.random()))
        AppResources.accounts = world.accounts
        return world
    }
}

@MainActor
struct TemplateExplorerTests {
    /// Every ordering of the system's events, logins, user switches and logouts to depth 4 on
    /// the ported template: every invariant holds (the SDK's included: no other user's data, one
    /// root per user change).
    @Test(.exploresManySchedules, .reportsProgress) func thePortedTemplateHoldsEveryInvariantToDepthFour() async throws {
        let explorer = LifecycleExplorer(world: { try PortedTemplateWorld.make() }, steps: .system + .sdk())
        let report = try await explorer.check(depth: 4, budget: .seconds(240), walkDepth: 0)
        #expect(report.firstViolation == nil, "\(report)")
        #expect(report.refusedSteps == 0, "\(report.firstRefusedStep ?? "")")
        #expect(report.exhaustedDepth == 4)
        figure("the ported template:", report)
    }

    /// The same with a passcode set (answers right and wrong, 10 attempts): to depth 4.
    @Test(.exploresManySchedules, .reportsProgress) func thePortedTemplateWithAPasscodeHoldsEveryInvariantToDepthFour() async throws {
        let explorer = LifecycleExplorer(world: { try PortedTemplateWorld.make(passcode: "1111") },
                                         steps: .system + .sdk(passcodeAnswers: ["1111", "0000"]))
        let report = try await explorer.check(depth: 4, budget: .seconds(240), walkDepth: 0)
        #expect(report.firstViolation == nil, "\(report)")
        #expect(report.refusedSteps == 0, "\(report.firstRefusedStep ?? "")")
        #expect(report.exhaustedDepth == 4)
        figure("the ported template with a passcode:", report)
    }
}
