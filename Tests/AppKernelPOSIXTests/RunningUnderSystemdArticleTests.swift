// The AppKernelPOSIX catalog's "Running under systemd" article
// (Sources/AppKernelPOSIX/AppKernelPOSIX.docc/RunningUnderSystemd.md): its `serve()` compiled as
// written (it runs a real process host and exits, so it is not called here: ProcessHostTests run
// one in a child process and send it the signals the article lists), and the defaults it states.
import AppKernel
import AppKernelPOSIX
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The app's own settings reload the article's snippet calls.
@MainActor private func reloadSettings() {}

@MainActor
struct RunningUnderSystemdArticle {
    final class AppDelegate: ApplicationDelegate {}
    struct Silent: LogHandler { func log(_ level: LogLevel, _ message: String) {} }

    @MainActor
    func serve() async -> Never {
        do {
            let host = try ProcessHost(delegate: AppDelegate())   // reads --open-url, --background, …
            host.onConfigurationChange = { reloadSettings() }     // SIGHUP: between RELOADING=1 and READY=1
            exit(await host.run())                                // 0 once willTerminate has run
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)                                               // a bad flag, as ProcessHost.run(delegate:) answers
        }
    }

    /// The article's signal table is the default mapping.
    @Test func theSignalTableIsTheDefaultMapping() {
        #expect(ProcessHost.defaultSignalActions == [
            SIGTERM: .terminate, SIGINT: .terminate, SIGTSTP: .backgroundAndStop, SIGCONT: .foreground,
            SIGHUP: .reloadConfiguration, SIGUSR1: .memoryWarning,
        ])
        #expect(ProcessHost.Configuration(environment: [:]).terminationDeadline == .seconds(5))
    }

    /// What the snippet's `catch` handles: a bad flag makes the initializer throw, and
    /// `ProcessHost.run(delegate:)` answers 2 for it.
    @Test func aBadFlagIsRefusedWithStatus2() async throws {
        let configuration = ProcessHost.Configuration(signalActions: [:], memoryPressure: nil, arguments: ["--no-such-flag"],
                                                      environment: [:], log: Silent())
        #expect(throws: LaunchArguments.Error.self) { try ProcessHost(delegate: AppDelegate(), configuration: configuration) }
        #expect(await ProcessHost.run(delegate: AppDelegate(), configuration: configuration) == 2)
    }
}
