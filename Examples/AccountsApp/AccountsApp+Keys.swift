import AppKernel
import Foundation

/// The app's master key: a systemd credential when its unit passes one, else a key file apart
/// from the data home. Every sealed file of the data home opens through the key ring it opens.
extension AccountsApp {
    /// The systemd credential the app reads its master key from, when its unit passes one
    /// (`LoadCredentialEncrypted=accountsapp.key:/etc/credstore.encrypted/accountsapp.key`).
    static let credentialName = "accountsapp.key"

    /// The master key's provider: the systemd credential `accountsapp.key` when
    /// `$CREDENTIALS_DIRECTORY` holds one, else `$XDG_CONFIG_HOME/AccountsApp/master.key`
    /// (created `0600` on the first run).
    static func keyProvider(environment: [String: String]) throws(KeyError) -> KeyProvider {
        if let credentials = environment["CREDENTIALS_DIRECTORY"], credentials.hasPrefix("/"),
           FileManager.default.fileExists(atPath: credentials + "/" + credentialName) {
            return KeyProvider.systemdCredential(named: credentialName, environment: environment)
        }
        return try KeyProvider.keyFile(application: "AccountsApp", environment: environment)
    }

    /// What to do when the key ring cannot open: said after the error, which names the provider.
    static func keyAdvice(provider: KeyProvider, dataHome: URL) -> String {
        let source = provider.keyFileURL.map { "the key file \($0.path) (from a backup)" }
            ?? "the credential \(credentialName) the unit passes (LoadCredentialEncrypted=)"
        return "AccountsApp: the data in \(dataHome.path) was left as it is. Fix: restore \(source); "
            + "or, to start afresh without that data, move \(dataHome.path) away\n"
    }
}
