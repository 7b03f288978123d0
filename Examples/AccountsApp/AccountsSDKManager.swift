import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelSDK
import Foundation

/// The app's SDK manager — the forceios template's `SalesforceManager` subclass. It prints each
/// launch phase and points the boot config at the org the app talks to.
@MainActor
final class AccountsSDKManager: SDKManager {
    /// Where the app logs in: the embedded org (offline), or a real one.
    enum Org {
        case embedded(EmbeddedOrg)
        case real(loginHost: URL, clientID: String, redirectURI: String)
    }

    /// Set before the launch; the config phase fails without it.
    var org: Org?

    /// Prints the phase and how long it took.
    override func run(_ phase: LaunchPhase) async throws {
        let start = ContinuousClock.now
        try await super.run(phase)
        Console.say(String(format: "launch phase \(phase) done (%.1f ms)", Console.milliseconds(ContinuousClock.now - start)))
    }

    /// Loads `bootconfig.json`, then points it at the org chosen on the command line.
    override func loadConfig() throws {
        try super.loadConfig()
        switch org {
        case nil:
            throw ConfigError(code: .invalidValue, file: BootConfig.fileNames[0], keyPath: "loginHost",
                              reason: "AccountsSDKManager.org is not set: no org to log in to")
        case .embedded(let org):
            bootConfig?.loginHost = org.baseURL.absoluteString
            bootConfig?.remoteAccessConsumerKey = org.clientID
            bootConfig?.oauthRedirectURI = org.redirectURI.absoluteString
        case .real(let loginHost, let clientID, let redirectURI):
            bootConfig?.loginHost = loginHost.absoluteString
            bootConfig?.remoteAccessConsumerKey = clientID
            bootConfig?.oauthRedirectURI = redirectURI
        }
        try bootConfig?.validate()
    }
}
