// The README's `@main` snippet, as written, with the AppDelegate it assumes; run by
// AppKernelPOSIXTests (a test target cannot hold an `@main` type).
import AppKernel
import AppKernelPOSIX
import Foundation

@MainActor
final class AppDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        FileHandle.standardOutput.write(Data("server.didFinishLaunching\n".utf8))
        return true
    }

    func applicationWillTerminate(_ application: Application) {
        FileHandle.standardOutput.write(Data("server.willTerminate\n".utf8))
    }
}

@main enum Server {
    @MainActor static func main() async {
        exit(await ProcessHost.run(delegate: AppDelegate()))
    }
}
