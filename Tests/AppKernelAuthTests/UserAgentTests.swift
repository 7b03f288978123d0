import Foundation
import AppKernelCore
import Testing
@testable import AppKernelAuth

/// The Mobile SDK's User-Agent. Source: SalesforceMobileSDK-iOS
/// `libs/SalesforceSDKCore/SalesforceSDKCore/Classes/Common/SalesforceSDKManager.m`
/// (`defaultUserAgentString`: `SalesforceMobileSDK/%@ %@/%@ (%@) %@/%@ %@%@ uid_%@ ftr_%@ %@`,
/// the app type's designators `Native`, `Hybrid`, `ReactNative`, `NativeSwift`, features sorted
/// case-insensitively and joined by `.`).
@MainActor @Suite struct UserAgentTests {
    static let fixed = UserAgent(sdkVersion: "13.2.0", osName: "Linux", osVersion: "6.8.0-45-generic", model: "x86_64",
                                 appName: "Accounts", appVersion: "1.2(7)", appType: .native, deviceID: "0A1B", features: ["MU", "bw", "AI"])

    @Test func theFormatIsTheSDKs() {
        #expect(Self.fixed.string() == "SalesforceMobileSDK/13.2.0 Linux/6.8.0-45-generic (x86_64) Accounts/1.2(7) Native uid_0A1B ftr_AI.bw.MU")
        #expect(Self.fixed.string(qualifier: "MobileSync").contains(" NativeMobileSync uid_"), "the qualifier follows the type with no space")
        #expect(UserAgent.AppType.allCases.map(\.rawValue) == ["Native", "Hybrid", "ReactNative", "NativeSwift"])
    }

    @Test func onLinuxTheOSIsLinuxAndTheModelTheMachine() {
        let agent = UserAgent(appName: "Accounts", appVersion: "1.0")
        #if os(Linux)
        #expect(agent.osName == "Linux")
        #expect(agent.osVersion == (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines))
        #endif
        #expect(["x86_64", "aarch64", "i686", "armv7l"].contains(agent.model))
        #expect(agent.sdkVersion == UserAgent.mobileSDKVersion)
    }

    @Test func theDeviceIDIsTheMachineIDMadeAppSpecific() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("machine-id-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("4c4c4544003510528035b7c04f4d3532\n".utf8).write(to: file)
        let one = UserAgent.deviceID(forApp: "Accounts", machineIDFile: file.path)
        #expect(one.count == 36 && one.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(one == UserAgent.deviceID(forApp: "Accounts", machineIDFile: file.path), "stable")
        #expect(one != UserAgent.deviceID(forApp: "Other", machineIDFile: file.path), "one per app")
        #expect(!one.lowercased().replacingOccurrences(of: "-", with: "").contains("4c4c4544"), "the machine id is not shown")
        #expect(UserAgent.deviceID(forApp: "Accounts", machineIDFile: "/nonexistent/machine-id") == "")
    }

    @Test func controlCharactersCannotSplitTheHeader() {
        var agent = Self.fixed
        agent.appName = "Evil\r\nX-Injected: 1"
        #expect(!agent.string().contains("\r") && !agent.string().contains("\n"))
    }

    /// Every OAuth request of the account manager carries it: the token requests of a login
    /// and a refresh, and the identity request.
    @Test func tokenRequestsCarryTheAccountManagersAgent() async throws {
        let agents = Locked<[String: String]>([:])
        let transport = InProcessTransport { request in
            agents.withLock { $0[request.url.path + "#\($0.count)"] = request.headers["User-Agent"] }
            if request.url.path.hasPrefix("/id/") {
                return HTTPResponse(status: 200, body: Data(#"{"user_id":"005","organization_id":"00D","username":"ada@acme.com"}"#.utf8))
            }
            return HTTPResponse(status: 200, body: Data(#"{"access_token":"AT","refresh_token":"RT","token_type":"Bearer","instance_url":"https://acme.my.salesforce.com","id":"https://acme.my.salesforce.com/id/00D/005"}"#.utf8))
        }
        let accounts = try UserAccountManager(store: InMemoryCredentialStore(), transport: transport)
        accounts.userAgent = Self.fixed
        let config = OAuthConfig(clientID: "c", redirectURI: URL(string: "app://cb")!, loginHost: URL(string: "https://acme.my.salesforce.com")!)
        let account = try await accounts.logIn(config: config, using: .userAgent(flow: .userAgent) { url in
            let state = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value ?? ""
            return URL(string: "app://cb#access_token=AT&refresh_token=RT&instance_url=https%3A%2F%2Facme.my.salesforce.com"
                + "&id=https%3A%2F%2Facme.my.salesforce.com%2Fid%2F00D%2F005&token_type=Bearer&state=\(state)")!
        })
        try await accounts.refreshCredentials(for: account.identity)
        let seen = agents.withLock { $0 }
        #expect(seen.keys.contains { $0.hasPrefix("/services/oauth2/token") }, "the refresh went out")
        #expect(seen.count >= 2 && seen.values.allSatisfy { $0 == Self.fixed.string() }, "\(seen)")
    }

    @Test func aRequestsOwnAgentIsKept() async throws {
        let seen = Locked<[String?]>([])
        let base = InProcessTransport { request in
            seen.withLock { $0.append(request.headers["user-agent"] ?? request.headers["User-Agent"]) }
            return HTTPResponse(status: 200)
        }
        let transport = UserAgentTransport(UserAgentTransport(base, userAgent: .default), userAgent: Self.fixed)
        _ = try await transport.send(HTTPRequest(url: URL(string: "https://x.example")!))
        _ = try await transport.send(HTTPRequest(url: URL(string: "https://x.example")!, headers: ["user-agent": "Mine/1"]))
        #expect(seen.withLock { $0 } == [Self.fixed.string(), "Mine/1"], "a wrapper's wrapper replaces the agent; a request's own is kept")
    }
}
