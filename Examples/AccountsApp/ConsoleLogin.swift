import AppKernel
import AppKernelAuth
import AppKernelSDK
import Foundation

/// Logs in to a real org from a terminal: prints the authorize URL (web-server flow with PKCE),
/// reads the callback URL the browser was sent to, checks its state, exchanges the code and
/// fetches the identity; everything else is the `UserAccountManager`'s.
@MainActor
final class ConsoleLoginAccountManager: AccountManaging {
    let accounts: UserAccountManager

    init(accounts: UserAccountManager) { self.accounts = accounts }

    var currentAccount: UserAccount? { accounts.currentAccount }
    var allAccounts: [UserAccount] { accounts.allAccounts }

    func logIn(config: OAuthConfig, flow: AuthorizationRequest.Flow, loginHint: String?, makeCurrent: Bool) async throws -> UserAccount {
        let request = AuthorizationRequest(config: config, flow: .webServer, loginHint: loginHint)
        Console.say("open this URL in a browser and log in:\n\(request.url.absoluteString)")
        Console.prompt("then paste the URL the browser was sent to (\(config.redirectURI.absoluteString)…): ")
        guard let line = await Console.readLine(), let callback = URL(string: line.trimmingCharacters(in: .whitespaces)) else {
            throw OAuthError.serverError(code: "access_denied", description: "no callback URL was entered")
        }
        let code = try request.parseCodeCallback(callback)
        let credentials = try await TokenClient(config: config, transport: accounts.transport)
            .exchange(code: code, codeVerifier: request.codeVerifier ?? "")
        let identity = try await LoginSession(config: config, transport: accounts.transport).identity(for: credentials)
        let account = UserAccount(credentials: credentials, userIdentity: identity, loginHost: config.loginHost, clientID: config.clientID)
        try accounts.add(account, makeCurrent: makeCurrent)
        return account
    }

    func switchTo(_ identity: UserAccountIdentity?) throws(CredentialStoreError) { try accounts.switchTo(identity) }
    func logout(_ identity: UserAccountIdentity, reason: LogoutReason) async { await accounts.logout(identity, reason: reason) }
    func observe(_ handler: @escaping @MainActor (AccountEvent) -> Void) -> ListenerToken { accounts.observe(handler) }
}
