// Writes the page behind Examples/Pictures/launch.png: the launch of a forceios-style app, drawn
// by LaunchTimeline.html(title:) — the page APPKERNEL_TRACE=launch.html writes for a real launch.
//
//   LaunchPicture <output.html>
//
// The launch is real — an Application with mPaaS's BootLoader (AppKernelModules'
// ContextBootLoader starting services), an SDK-manager-like phase engine behind a launch gate,
// hooks, and an optional service that fails — but it runs on a virtual clock (TestClock) on which
// each piece of work takes a fixed time, so the page, and the screenshot of it, are the same byte
// for byte on every run and machine.
import AppKernelPOSIX
import Foundation
import ScriptedLaunch

@MainActor
func drawLaunch(to path: String) async throws {
    let launch = ScriptedLaunch(
        services: [
            .init("keychain", milliseconds: 18),
            .init("network", milliseconds: 30),
            .init("session", milliseconds: 12, dependencies: ["keychain", "network"]),
            .init("analytics", milliseconds: 22, failure: "the analytics endpoint refused the key (HTTP 403)"),
        ],
        hooks: [
            .init(.didFinishLaunching, "restoreState", milliseconds: 4),
            .init(.phase("setupWindow"), "applyTheme", milliseconds: 3),
            .init(.phase("showWindow"), "logStartup", milliseconds: 1, after: true),
            .init(.phase("auth"), "refreshToken", milliseconds: 5),
        ],
        // The SDK manager's five launch phases (AppKernelSDK's LaunchPhase), as scripted work.
        sdkPhases: [("config", 6), ("sdkInit", 9), ("passcode", 4), ("auth", 26), ("rootController", 7)])
    let timeline = try await launch.record()
    try Data(timeline.html(title: "An AppKernel launch: BootLoader, services, SDK phases").utf8)
        .write(to: URL(fileURLWithPath: path), options: .atomic)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
    FileHandle.standardError.write(Data("usage: LaunchPicture <output.html>\n".utf8))
    exit(arguments.contains("--help") ? 0 : 64)
}
do {
    try await drawLaunch(to: path)
} catch {
    FileHandle.standardError.write(Data("LaunchPicture: \(error)\n".utf8))
    exit(1)
}
