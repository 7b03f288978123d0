import Foundation
import AppKernelCore
import Testing
@testable import AppKernelAuth

/// The client-credentials login of a daemon. Source: Salesforce Help "OAuth 2.0 Client
/// Credentials Flow for Server-to-Server Integration" (a POST to the My Domain's token endpoint
/// with `grant_type=client_credentials`, `client_id` and `client_secret`; the answer has an
/// access token and no refresh token); systemd.exec(5) "Credentials" (`$CREDENTIALS_DIRECTORY`).
@MainActor @Suite struct ClientCredentialsTests {
    /// A My Domain token endpoint that issues numbered tokens for the right secret.
    final class Org: Sendable {
        let forms = Locked<[[String: String]]>([])
        let agents = Locked<[String?]>([])
        var transport: InProcessTransport {
            InProcessTransport { [self] request in
                agents.withLock { $0.append(request.headers["User-Agent"]) }
                if request.url.path == "/id/00DORG/005INTEGRATION" {
                    return HTTPResponse(status: 200, body: Data(#"{"user_id":"005INTEGRATION","organization_id":"00DORG","username":"integration@acme.com"}"#.utf8))
                }
                let form = Dictionary(FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self)) ?? [], uniquingKeysWith: { $1 })
                let count = forms.withLock { forms in
                    forms.append(form)
                    return forms.count
                }
                guard form["client_secret"] == "s3cret-from-systemd" else {
                    return HTTPResponse(status: 400, body: Data(#"{"error":"invalid_client","error_description":"invalid client credentials"}"#.utf8))
                }
                return HTTPResponse(status: 200, body: Data(#"{"access_token":"AT\#(count)","token_type":"Bearer","instance_url":"https://acme.my.salesforce.com","id":"https://acme.my.salesforce.com/id/00DORG/005INTEGRATION","scope":"api","issued_at":"1700000000000","signature":"sig"}"#.utf8))
            }
        }
    }

    static let config = OAuthConfig(clientID: "3MVG9-daemon", redirectURI: URL(string: "http://localhost/unused")!,
                                    loginHost: URL(string: "https://acme.my.salesforce.com")!)

    /// A temporary `$CREDENTIALS_DIRECTORY` holding `name` = `secret` (with the line break a
    /// shell leaves), removed by the caller.
    static func credentialsDirectory(_ name: String = "salesforce-secret", secret: String = "s3cret-from-systemd\n") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(secret.utf8).write(to: directory.appendingPathComponent(name))
        return directory
    }

    static func secret(in directory: URL, exposing values: [(where: String, value: String)] = []) -> ClientSecret {
        ClientSecret.systemdCredential(named: "salesforce-secret", environment: ["CREDENTIALS_DIRECTORY": directory.path]).checkingExposure(in: values)
    }

    @Test func aDaemonLogsInWithTheConsumerKeyAndASystemdCredential() async throws {
        let directory = try Self.credentialsDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let org = Org()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org.transport)
        let account = try await accounts.logIn(config: Self.config, using: .clientCredentials(secret: Self.secret(in: directory)))
        #expect(account.userIdentity?.username == "integration@acme.com")
        #expect(account.credentials.refreshToken == nil, "Salesforce issues no refresh token in this flow")
        #expect(org.forms.withLock { $0 } == [["grant_type": "client_credentials", "client_id": "3MVG9-daemon", "client_secret": "s3cret-from-systemd"]])
    }

    @Test func anExpiredTokenIsRenewedByLoggingInAgain() async throws {
        let directory = try Self.credentialsDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let org = Org()
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: org.transport)
        let account = try await accounts.logIn(config: Self.config, using: .clientCredentials(secret: Self.secret(in: directory)))
        #expect(account.credentials.accessToken == "AT1")
        let renewed = try await accounts.refreshCredentials(for: account.identity)
        #expect(renewed.credentials.accessToken == "AT2")
        #expect(org.forms.withLock { $0.map { $0["grant_type"] } } == ["client_credentials", "client_credentials"], "no refresh_token grant is tried")
    }

    @Test func aSecretNamedOnTheCommandLineIsRefusedWithTheFix() async throws {
        let directory = try Self.credentialsDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let org = Org()
        let session = LoginSession(config: Self.config, transport: org.transport)
        let secret = Self.secret(in: directory, exposing: [("the process's command line", "--client-secret=whatever")])
        await #expect(throws: LoginError(step: .clientSecret, error: .clientSecret(
            ClientSecretError(source: secret.description, problem: .passedAsText("the process's command line"))))) {
            _ = try await session.logIn(using: .clientCredentials(secret: secret))
        }
        let error = ClientSecretError(source: secret.description, problem: .passedAsText("the process's command line"))
        #expect(error.description.contains("systemd credential") && error.description.contains("ClientSecret.seal"))
        #expect(org.forms.withLock { $0.isEmpty }, "nothing was sent")
    }

    @Test func aSecretThatLeakedIntoTheEnvironmentIsRefused() async throws {
        let directory = try Self.credentialsDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = Self.secret(in: directory, exposing: [("the environment variable DEPLOY_TOKEN", "x s3cret-from-systemd")])
        #expect(throws: ClientSecretError(source: secret.description, problem: .exposed("the environment variable DEPLOY_TOKEN"))) {
            _ = try secret.read()
        }
    }

    @Test func withoutCredentialsDirectoryTheErrorNamesTheUnitSetting() throws {
        let secret = ClientSecret.systemdCredential(named: "salesforce-secret", environment: [:]).checkingExposure(in: [])
        do {
            _ = try secret.read()
            Issue.record("read without a credentials directory")
        } catch {
            #expect(error.problem == .credentialsDirectoryUnset)
            #expect(error.description.contains("LoadCredentialEncrypted="))
        }
    }

    @Test func theLoginHostMustBeTheMyDomain() async throws {
        let directory = try Self.credentialsDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let org = Org()
        var config = Self.config
        config.loginHost = OAuthConfig.productionLoginHost
        let session = LoginSession(config: config, transport: org.transport)
        let result: Result<(Credentials, UserIdentity), LoginError>
        do throws(LoginError) { result = .success(try await session.logIn(using: .clientCredentials(secret: Self.secret(in: directory)))) } catch {
            result = .failure(error)
        }
        guard case .failure(let error) = result else { Issue.record("logged in through login.salesforce.com"); return }
        #expect(error.step == .clientCredentials)
        #expect(error.description.contains("my.salesforce.com"))
        #expect(org.forms.withLock { $0.isEmpty })
    }

    @Test func aSealedSecretFileRoundTrips() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-secret-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let keyRing = try KeyRing(dataHome: home, provider: .inMemory(FileCredentialStore.testMasterKey))
        let file = home.appendingPathComponent("client-secret.sealed")
        try ClientSecret.seal("s3cret-sealed", to: file, keyRing: keyRing)
        #expect(!(try Data(contentsOf: file)).contains(Data("s3cret-sealed".utf8)), "the file holds ciphertext")
        #expect(try ClientSecret.sealedFile(file, keyRing: keyRing).checkingExposure(in: []).read() == "s3cret-sealed")
        let missing = ClientSecret.sealedFile(home.appendingPathComponent("none"), keyRing: keyRing).checkingExposure(in: [])
        #expect(throws: ClientSecretError(source: missing.description, problem: .missing(home.appendingPathComponent("none").path))) { _ = try missing.read() }
    }
}
