import Foundation
import Testing
@testable import AppKernelAuth
import LoopbackServer
import AppKernelCore

/// Attacks on the loopback redirect (RFC 8252 §7.3, §8.3), over real loopback sockets: another
/// local program on the other loopback address, and forged answers that arrive first.
///
/// `localhost` is resolved by a browser to `127.0.0.1` or `::1` (many try `::1` first), so a
/// listener on `127.0.0.1` alone lets any local program on `[::1]:port` receive the code.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct LoopbackRedirectAttackTests {
    func withServer(_ body: (LoginFormServer, LoginSession) async throws -> Void) async throws {
        let server = try await LoginFormServer.start()
        defer { server.stop() }
        try await body(server, LoginSession(config: server.oauthConfig, transport: URLSessionTransport(timeout: 10)))
    }

    /// The config with a `localhost` redirect, as connected apps register it.
    func localhostConfig(_ server: LoginFormServer, port: UInt16? = nil) -> OAuthConfig {
        var config = server.oauthConfig
        config.redirectURI = URL(string: "http://localhost\(port.map { ":\($0)" } ?? "")/OauthRedirect")!
        return config
    }

    struct NotOpened: Error {}

    /// A port free on 127.0.0.1 a moment ago.
    static func freePort() throws -> UInt16 { try LoopbackSquatter("127.0.0.1").port }

    // MARK: The other loopback address

    @Test func aProgramOnIPv6LoopbackAtTheRedirectPortMakesTheLoginRefuseToListen() async throws {
        try await withServer { server, _ in
            let squatter = try LoopbackSquatter("::1")
            let session = LoginSession(config: localhostConfig(server, port: squatter.port), transport: URLSessionTransport(timeout: 10))
            let error = await #expect(throws: LoginError.self) {
                _ = try await session.logIn(using: .loopback(opener: BrowserOpener { _ in throw NotOpened() }))
            }
            #expect(error == LoginError(step: .listen, error: .portInUse(Int(squatter.port), address: "::1")))
            #expect(error?.description.contains("port \(squatter.port) on ::1 is in use") == true)
            // Neither address stays bound: 127.0.0.1 at that port is free again.
            _ = try LoopbackSquatter("127.0.0.1", port: squatter.port)
        }
    }

    @Test func aProgramOnIPv4LoopbackIsNamedToo() async throws {
        let squatter = try LoopbackSquatter("127.0.0.1")
        let error = #expect(throws: OAuthError.self) { _ = try LoopbackListener(port: squatter.port, path: "/cb", host: "localhost") }
        #expect(error == .portInUse(Int(squatter.port), address: "127.0.0.1"))
        _ = try LoopbackSquatter("::1", port: squatter.port)   // ::1 was not left bound
    }

    @Test func aLocalhostListenerListensOnBothAddressesOnOneEphemeralPort() async throws {
        let listener = try LoopbackListener(port: 0, path: "/cb", host: "localhost")
        defer { listener.stop(.cancelled) }
        #expect(listener.addresses == [.ipv4, .ipv6])
        #expect(listener.port != 0)
        #expect(throws: LoopbackSquatter.Failure.self) { _ = try LoopbackSquatter("127.0.0.1", port: listener.port) }
        #expect(throws: LoopbackSquatter.Failure.self) { _ = try LoopbackSquatter("::1", port: listener.port) }
    }

    @Test func anIPLiteralRedirectListensOnThatAddressAlone() async throws {
        let listener = try LoopbackListener(port: 0, path: "/cb", host: "127.0.0.1")
        defer { listener.stop(.cancelled) }
        #expect(listener.addresses == [.ipv4])
    }

    @Test func theCallbackOverIPv6LoopbackReachesTheListener() async throws {
        try await withServer { server, _ in
            let session = LoginSession(config: localhostConfig(server), transport: URLSessionTransport(timeout: 10))
            let login = Task { try await session.logIn(using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let callback = try await server.submitLoginForm(at: authorizeURL, user: "ada", password: "secret")
            #expect(callback.absoluteString.hasPrefix("http://localhost:"), "the redirect URI keeps the registered host")
            let port = try #require(callback.port)
            let target = "\(callback.path)?\(try #require(callback.query(percentEncoded: true)))"
            let page = try await LoopbackClient.get("::1", port: UInt16(port), target)
            #expect(page.status == 200 && page.text.contains("You are logged in"))
            #expect(try await login.value.1.username == "ada@example.com")
        }
    }

    // MARK: A machine without IPv6 loopback

    @Test(arguments: ["EADDRNOTAVAIL", "EAFNOSUPPORT"])
    func withoutIPv6LoopbackLocalhostIsServedOnIPv4Alone(errorName: String) async throws {
        let listener = try LoopbackListener(port: 0, path: "/cb", host: "localhost") { (address, port) throws(POSIX.ListenFailure) in
            guard address == .ipv4 else { throw .unavailable("bind ::1 port \(port): \(errorName) (injected)") }
            return try POSIX.listenOnLoopback(address, port: port)
        }
        #expect(listener.addresses == [.ipv4])
        let wait = Task { try await listener.waitForCallback(state: "s", host: "localhost") }
        let stray = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/favicon.ico")
        #expect(stray.status == 404, "the IPv4 listener serves")
        let callback = try await LoopbackClient.get("127.0.0.1", port: listener.port, "/cb?code=c&state=s", host: "localhost:\(listener.port)")
        #expect(callback.status == 200)
        #expect(try await wait.value.absoluteString == "http://localhost:\(listener.port)/cb?code=c&state=s")
    }

    @Test func anyOtherIPv6FailureFailsTheListenAndLeavesNothingBound() async throws {
        let port = try Self.freePort()
        let error = #expect(throws: OAuthError.self) {
            _ = try LoopbackListener(port: port, path: "/cb", host: "localhost") { (address, port) throws(POSIX.ListenFailure) in
                guard address == .ipv4 else { throw .failed("bind ::1 port \(port): Permission denied (injected)") }
                return try POSIX.listenOnLoopback(address, port: port)
            }
        }
        #expect(error == .listenerFailed("bind ::1 port \(port): Permission denied (injected)"))
        _ = try LoopbackSquatter("127.0.0.1", port: port)
    }

    @Test func anEphemeralPortTakenOnIPv6IsTradedForAnother() async throws {
        let refusals = Refusals(count: 2)
        let listener = try LoopbackListener(port: 0, path: "/cb", host: "localhost") { (address, port) throws(POSIX.ListenFailure) in
            if address == .ipv6, refusals.take(port) { throw .portInUse }
            return try POSIX.listenOnLoopback(address, port: port)
        }
        defer { listener.stop(.cancelled) }
        #expect(listener.addresses == [.ipv4, .ipv6])
        #expect(!refusals.refused.contains(listener.port), "the port in use on ::1 was not kept")
        #expect(refusals.refused.count == 2)
        #expect(throws: LoopbackSquatter.Failure.self) { _ = try LoopbackSquatter("::1", port: listener.port) }
    }

    /// Refuses the first `count` ports asked for.
    final class Refusals: Sendable {
        private let state: Locked<(left: Int, refused: [UInt16])>
        init(count: Int) { state = Locked((count, [])) }
        func take(_ port: UInt16) -> Bool {
            state.withLock { state in
                guard state.left > 0 else { return false }
                state.left -= 1
                state.refused.append(port)
                return true
            }
        }
        var refused: [UInt16] { state.withLock { $0.refused } }
    }

    // MARK: Forged answers that arrive first

    @Test func forgedAnswersOnEitherAddressDoNotEndTheLogin() async throws {
        try await withServer { server, _ in
            let session = LoginSession(config: localhostConfig(server), transport: URLSessionTransport(timeout: 10))
            let login = Task { try await session.logIn(using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let redirect = try #require(TestHTTPServer.decodeForm(authorizeURL.query(percentEncoded: true) ?? "")["redirect_uri"])
            let port = try #require(URL(string: redirect)?.port)
            for (address, host) in [("127.0.0.1", "127.0.0.1"), ("::1", "[::1]"), ("::1", "localhost"), ("127.0.0.1", "localhost")] {
                for query in ["code=stolen&state=forged", "code=stolen", "code=stolen&state=",
                              "error=access_denied&state=forged", "error=access_denied",
                              "error=invalid_request&error_description=forged&state=forged"] {
                    let answer = try await LoopbackClient.get(address, port: UInt16(port), "/OauthRedirect?\(query)", host: "\(host):\(port)")
                    #expect(answer.status == 400 && answer.text.contains("the login is still waiting"), "\(address) \(host) \(query)")
                }
            }
            // The real answer, after all the forged ones, still ends the login.
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
            #expect(try await login.value.1.username == "ada@example.com")
            #expect(server.tokenRequests.count == 1, "no forged code was exchanged")
        }
    }

    @Test func aForgedAnswerBeforeTheRealErrorLeavesTheRealErrorToEndIt() async throws {
        try await withServer { server, session in
            let login = Task { try await session.logIn(using: .loopback(port: 0, opener: server.browser)) }
            let authorizeURL = try await server.nextAuthorizeRequest()
            let redirect = try #require(TestHTTPServer.decodeForm(authorizeURL.query(percentEncoded: true) ?? "")["redirect_uri"])
            let forged = try await URLSessionTransport(timeout: 10).send(HTTPRequest(url: URL(string: "\(redirect)?error=server_error&state=forged")!))
            #expect(forged.status == 400)
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "", action: "deny")
            let error = await #expect(throws: LoginError.self) { try await login.value }
            #expect(error == LoginError(step: .callback, error: .serverError(code: "access_denied", description: "end-user denied authorization")))
        }
    }
}
