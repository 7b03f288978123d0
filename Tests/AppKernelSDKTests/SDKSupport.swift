import Foundation
import AppKernel
import AppKernelCore
import AppKernelSDK

struct SDKTestError: Error, CustomStringConvertible {
    var description: String { "SDKTestError" }
}

let deferredConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
                                oauthScopes: ["api"], shouldAuthenticate: false)
let authConfig = BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "testapp://callback",
                            oauthScopes: ["api", "refresh_token"], shouldAuthenticate: true)

/// A directory with the given config files, removed when the returned closure runs.
func configDirectory(_ files: [String: String]) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
    return directory
}

/// Config folders a suite's tests made, removed when the suite's instance (one per test) goes —
/// for helpers that return a launched manager and so cannot remove the folder themselves.
final class ConfigFolders: @unchecked Sendable {
    // `@unchecked Sendable`: touched only by the one test that owns the instance.
    private var folders: [URL] = []

    /// A folder with `files`, removed with this instance.
    func make(_ files: [String: String]) throws -> URL {
        let folder = try configDirectory(files)
        folders.append(folder)
        return folder
    }

    deinit {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }
}

let userstoreJSON = #"{"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}]}]}"#
let usersyncsJSON = #"{"syncs": [{"syncName": "syncDownAccounts", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "query": "SELECT Id FROM Account"}, "options": {"mergeMode": "OVERWRITE"}}]}"#

/// A root controller that names its user.
@MainActor final class AccountsController: RootController {
    let user: String?
    init(user: String?) { self.user = user }
}

/// Runs `body` in a `SharedScope` of its own, finished after: `SDKManager.shared`, the launch
/// observers, `RestClient.shared` and the shared store managers are this test's (issue 31).
@MainActor
func inOwnScope<Result>(_ name: String = #function, _ body: () async throws -> Result) async rethrows -> Result {
    let scope = SharedScope(name: name)
    defer { scope.finish() }
    return try await scope.withValue(body)
}

/// ``inOwnScope(_:_:)``, synchronously.
@MainActor
func inOwnScope<Result>(_ name: String = #function, _ body: () throws -> Result) rethrows -> Result {
    let scope = SharedScope(name: name)
    defer { scope.finish() }
    return try scope.withValue(body)
}
