import Foundation
import Testing
import AppKernelAuth
import LoopbackServer

/// The default transport over real sockets on loopback: TLS verified against trust and host
/// name, keep-alive reuse, cancellation, IPv6, redirects returned, requests that cannot be sent
/// refused before anything is.
@Suite struct SocketTransportTests {
    func transportError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPTransportError? {
        guard let error = error as? HTTPTransportError else {
            Issue.record("expected an HTTPTransportError, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }

    // MARK: TLS

    @Test(.enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
    func tlsToATrustedCertificateForTheHostSucceeds() async throws {
        let server = try await TLSTestServer.start()
        defer { server.stop() }
        let transport = try SocketTransport(timeout: 10, trustedCertificates: [server.certificate])
        for host in ["localhost", "127.0.0.1"] {                 // SNI + host name; an IP address SAN
            let response = try await transport.send(HTTPRequest(url: server.url(host: host).appendingPathComponent("services/data")))
            #expect(response.status == 200 && response.text == #"{"tls":true}"#)
        }
        let again = try await transport.send(HTTPRequest(url: server.url().appendingPathComponent("again")))
        #expect(again.status == 200)
        #expect(transport.idleConnectionCount >= 1, "the TLS connection was kept for reuse")
    }

    @Test(.enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
    func anUntrustedCertificateIsRefused() async throws {
        let server = try await TLSTestServer.start()
        defer { server.stop() }
        let error = await #expect(throws: HTTPTransportError.self) {
            _ = try await SocketTransport(timeout: 10).send(HTTPRequest(url: server.url()))       // only the system's roots
        }
        #expect(error?.code == .certificateRejected)
        #expect(error?.reason.contains("self-signed") == true, "\(String(describing: error))")
    }

    @Test(.enabled(if: PythonServer.isInstalled, "needs python3: PythonRequirementTests says how to install it"))
    func aCertificateForAnotherHostIsRefused() async throws {
        let server = try await TLSTestServer.start(names: ["DNS:login.example.invalid"])
        defer { server.stop() }
        let transport = try SocketTransport(timeout: 10, trustedCertificates: [server.certificate])
        for host in ["localhost", "127.0.0.1"] {
            let error = await #expect(throws: HTTPTransportError.self) { _ = try await transport.send(HTTPRequest(url: server.url(host: host))) }
            #expect(error?.code == .certificateRejected)
            #expect(error?.reason.contains("mismatch") == true, "\(String(describing: error))")
        }
    }

    @Test func aBlobWithoutACertificateIsRefusedWhenTheTransportIsMade() {
        let error = #expect(throws: HTTPTransportError.self) { try SocketTransport(trustedCertificates: [Data("not a certificate".utf8)]) }
        #expect(error?.code == .invalidRequest)
    }

    @Test func theDeadlineCoversATLSHandshakeThatNeverEnds() async throws {
        let server = try await HostileServer.start(.silent)           // takes the ClientHello, never answers
        defer { server.stop() }
        let url = URL(string: "https://127.0.0.1:\(server.port)/")!
        await #expect(throws: OAuthError.timedOut("GET /: no complete answer within 1 s")) {
            _ = try await SocketTransport(timeout: 1).send(HTTPRequest(url: url))
        }
        // The deadline closed the connection, timed by the server, not by this task's resumption
        // (a loaded machine resumed it 39 s late once, under ThreadSanitizer beside 1,100 tests).
        let connection = await server.log.closedConnection(within: .seconds(60))
        #expect(try #require(connection?.duration) < .seconds(30), "closed at the 1 s deadline, not never")
        #expect(await server.clientsLeft(within: .seconds(10)), "the connection was closed")
    }

    // MARK: Connections

    @Test func idleConnectionsAreReusedUpToTheCap() async throws {
        let server = try await HostileServer.start(.keepAlive(body: #"{"n":1}"#))
        defer { server.stop() }
        // An hour of idle time: a starved machine (this test once took 49 s under ThreadSanitizer)
        // must not age the connection out between two requests.
        let transport = SocketTransport(timeout: 60, maximumIdleTime: .seconds(3600))
        for _ in 0..<3 {
            let response = try await transport.send(HTTPRequest(url: server.url.appendingPathComponent("services/data")))
            #expect(response.status == 200 && response.text == #"{"n":1}"#)
        }
        #expect(server.requestsRead == 3)
        #expect(server.connectionsAccepted == 1, "one connection carried all three")
        #expect(transport.idleConnectionCount == 1)

        let none = SocketTransport(timeout: 10, maximumIdleConnectionsPerHost: 0)
        for _ in 0..<2 { _ = try await none.send(HTTPRequest(url: server.url)) }
        #expect(server.connectionsAccepted == 3, "no reuse without idle connections")
        #expect(none.idleConnectionCount == 0)
    }

    @Test func anIdleConnectionTheServerClosedIsNotUsed() async throws {
        let server = try await HostileServer.start(.keepAlive(body: "{}"))
        let transport = SocketTransport(timeout: 10)
        _ = try await transport.send(HTTPRequest(url: server.url))
        let port = server.port
        server.stop()                                          // closes the kept connection
        let error = await #expect(throws: HTTPTransportError.self) {
            _ = try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        }
        #expect(error?.code == .connectionFailed, "a new connection was tried, and refused")
    }

    @Test func cancellingTheTaskEndsTheRequestAndTheConnection() async throws {
        let server = try await HostileServer.start(.silent)
        defer { server.stop() }
        let transport = SocketTransport(timeout: 600)
        let task = Task { try await transport.send(HTTPRequest(url: server.url)) }
        while server.requestsRead == 0 { try await Task.sleep(for: .milliseconds(5)) }   // polling loopback I/O
        let cancelled = ContinuousClock.now
        task.cancel()
        await #expect(throws: OAuthError.cancelled) { _ = try await task.value }
        // At once, not at the 600 s deadline: the bound tells those apart on the server's clock,
        // which a busy cooperative pool does not delay.
        let connection = await server.log.closedConnection(within: .seconds(60))
        #expect(try #require(connection?.closed) - cancelled < .seconds(60))
        #expect(await server.clientsLeft(within: .seconds(10)), "the connection was closed")
    }

    @Test func ipv6LoopbackIsReached() async throws {
        let server = try await HostileServer.start(.keepAlive(body: #"{"v6":true}"#), on: .ipv6)
        defer { server.stop() }
        let response = try await SocketTransport(timeout: 10).send(HTTPRequest(url: server.url.appendingPathComponent("x")))
        #expect(server.url.absoluteString.hasPrefix("http://[::1]:"))
        #expect(response.status == 200 && response.text == #"{"v6":true}"#)
    }

    @Test func aRefusedConnectionNamesTheHostAndPort() async throws {
        let server = try await HostileServer.start(.silent)
        let url = server.url
        server.stop()
        let error = await #expect(throws: HTTPTransportError.self) { _ = try await SocketTransport(timeout: 5).send(HTTPRequest(url: url)) }
        #expect(error?.code == .connectionFailed)
        #expect(error?.reason.contains("127.0.0.1 port \(server.port)") == true, "\(String(describing: error))")
    }

    // MARK: Requests and answers

    @Test func aRedirectIsReturnedNotFollowed() async throws {
        let server = try TestHTTPServer.start { _ in .redirect("myapp://callback#access_token=x") }
        defer { server.stop() }
        let response = try await SocketTransport(timeout: 10).send(HTTPRequest(url: server.baseURL.appendingPathComponent("authorize")))
        #expect(response.status == 302)
        #expect(response.headers["location"] == "myapp://callback#access_token=x")
    }

    @Test func aFormPostArrivesWithItsBody() async throws {
        let server = try TestHTTPServer.start { request in .json(200, ["grant_type": request.form["grant_type"] ?? "", "method": request.method]) }
        defer { server.stop() }
        let response = try await SocketTransport(timeout: 10).send(.form(server.baseURL.appendingPathComponent("token"), [("grant_type", "refresh_token")]))
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
        #expect(object == ["grant_type": "refresh_token", "method": "POST"])
    }

    @Test func aHeaderWithALineBreakIsRefusedBeforeAnythingIsSent() async throws {
        let server = try await HostileServer.start(.keepAlive(body: "{}"))
        defer { server.stop() }
        let request = HTTPRequest(url: server.url, headers: ["X-Note": "a\r\nX-Injected: 1"])
        let error = await #expect(throws: HTTPTransportError.self) { _ = try await SocketTransport().send(request) }
        #expect(error?.code == .invalidRequest)
        #expect(server.connectionsAccepted == 0)
    }

    @Test func aSchemeOtherThanHTTPIsRefused() async throws {
        let error = await #expect(throws: HTTPTransportError.self) { _ = try await SocketTransport().send(HTTPRequest(url: URL(string: "ftp://example.com/x")!)) }
        #expect(transportError(error)?.code == .invalidRequest)
    }
}
