import Foundation
import Testing
import AppKernelAuth
import AppKernelREST
import ChildProcess
import LoopbackServer
import AppKernelCore

extension Credentials {
    /// Credentials for an org served at `instance` (a loopback test server).
    static func sample(instance: URL) -> Credentials {
        Credentials(accessToken: "A0", refreshToken: "R", instanceURL: instance,
                    identityURL: instance.appendingPathComponent("id/00D000000000001/005000000000001"),
                    userID: "005000000000001", orgID: "00D000000000001")
    }
}

extension RestRequest {
    /// `GET /services/data`: the versions the org offers (what `requestForVersions()` builds).
    static func versions() -> RestRequest { RestRequest(method: .get, path: "/services/data") }
}

/// The REST client, over its default transport (``SocketTransport``), against loopback servers
/// that answer like attackers (issue 29, "No limit on what a server sends": a 1 GB body grew the
/// process to 24 GB, a gzip bomb to 2.3 GB, an endless chunked answer to 6.4 GB, and the
/// deadline did not stop a body still arriving). Every answer is refused within its limit or
/// its deadline, the transfer ends, and memory stays bounded.
///
/// Memory is measured in `HostileBodyClient`, a process that runs only the client: a process's
/// high-water mark (`VmHWM`) is process-wide, and this test process runs hundreds of tests side
/// by side. `.serialized`: these transfers are large; one at a time keeps the loopback quiet for
/// the other suites' deadlines.
@Suite(.serialized) struct HostileResponseTests {
    /// The ``ResponseTooLarge`` inside a refused call, or a recorded issue.
    func tooLarge(_ error: RestClientError?, sourceLocation: SourceLocation = #_sourceLocation) -> ResponseTooLarge? {
        guard case .responseTooLarge(let refused)? = error else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return refused
    }

    /// The ``HTTPTransportError`` inside a failed call, or a recorded issue.
    func transportError(_ error: RestClientError?, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPTransportError? {
        guard case .network(let underlying as HTTPTransportError)? = error else {
            Issue.record("expected an HTTPTransportError, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return underlying
    }

    /// Runs the same request from `HostileBodyClient`, a process of its own — a process's peak
    /// memory is the client's only where no other test runs beside it: what it answered, and how
    /// far its resident memory rose (`nil` under a sanitizer, where that says nothing).
    func clientAlone(against server: HostileServer, transport: String = "socket",
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> (outcome: String, peakGrowth: Int?) {
        let child = try ChildProcess(executable: "HostileBodyClient", arguments: [server.url.absoluteString, transport])
        #expect(await child.waitForExit(seconds: 120) == 0, "stderr: \(child.errors)", sourceLocation: sourceLocation)
        let outcome = child.lines.first { $0.hasPrefix("refused: ") || $0.hasPrefix("accepted: ") } ?? "no answer: \(child.lines)"
        let growth = child.lines.first { $0.hasPrefix("peak-growth: ") }.flatMap { Int($0.dropFirst("peak-growth: ".count)) }
        return (outcome, growth)
    }

    @Test func contractAHugeResponseIsRefusedWithinItsLimit() async throws {
        let server = try await HostileServer.start(.body(bytes: 1 << 30))   // loopback
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: SocketTransport())
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        let alone = try await clientAlone(against: server)
        #expect(alone.outcome.hasPrefix("refused: "), "\(alone.outcome)")
        if let growth = alone.peakGrowth { #expect(growth < 100 << 20) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        let refused = tooLarge(error)
        #expect(refused?.evidence == .announced(1 << 30), "refused on its Content-Length, before reading")
        #expect(server.bodyBytesSent < 32 << 20, "no more was sent than the sockets' buffers hold: \(server.bodyBytesSent)")
        #expect(refused?.limit == 64 << 20)
        #expect(refused?.host == "127.0.0.1")
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("RestClient(maximumResponseBytes:)"), "\(message)")
        #expect(message.contains("67108864 bytes (64 MiB)"), "\(message)")
        #expect(message.contains("http://127.0.0.1:\(server.port)/services/data"), "\(message)")
    }

    @Test func anUnannouncedHugeBodyIsRefusedWhenItPassesTheLimit() async throws {
        let server = try await HostileServer.start(.unannounced(bytes: 1 << 30))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url))          // the default transport
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        guard case .received(let count)? = tooLarge(error)?.evidence else { return }
        #expect(count > 64 << 20 && count <= (64 << 20) + SocketTransport.maximumHeaderBytes + 65536)
        #expect(server.bodyBytesSent < 72 << 20, "the server stopped soon after the limit: \(server.bodyBytesSent)")
        let alone = try await clientAlone(against: server)
        #expect(alone.outcome.contains("64 MiB"), "\(alone.outcome)")
        if let growth = alone.peakGrowth { #expect(growth < 100 << 20) }
    }

    @Test func anEndlessChunkedAnswerIsRefusedAtTheClientsLimit() async throws {
        let server = try await HostileServer.start(.endlessChunked)
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), maximumResponseBytes: 1 << 20)
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        guard let refused = tooLarge(error), case .received(let count) = refused.evidence else { return }
        #expect(refused.limit == 1 << 20 && count > 1 << 20)
        #expect(refused.setting == "RestClient(maximumResponseBytes:)")
    }

    @Test func aGzipBombIsRefusedUnread() async throws {
        let server = try await HostileServer.start(.gzipBomb(expandedBytes: 1 << 30))    // about 6.5 MB of gzip
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url))
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        let refused = transportError(error)
        #expect(refused?.code == .unsupportedContentEncoding)
        #expect(refused?.reason.contains("gzip") == true && refused?.reason.contains("identity") == true)
        let alone = try await clientAlone(against: server)
        #expect(alone.outcome.contains("gzip"), "\(alone.outcome)")
        if let growth = alone.peakGrowth { #expect(growth < 100 << 20) }
    }

    @Test func theTransportAsksForNoContentCoding() async throws {
        let seen = SeenHeaders()
        let server = try TestHTTPServer.start { request in
            seen.record(request.headers)
            return .json(200, ["ok": true])
        }
        defer { server.stop() }
        _ = try await SocketTransport().send(HTTPRequest(url: server.baseURL.appendingPathComponent("x"), headers: ["Accept-Encoding": "gzip"]))
        #expect(seen.last.first { $0.key.lowercased() == "accept-encoding" }?.value == "identity")
    }

    @Test func aBodyOfExactlyTheLimitIsAcceptedAndOneByteMoreIsNot() async throws {
        for (answer, size) in [(HostileServer.Answer.body(bytes: 1 << 20), 1 << 20), (.unannounced(bytes: 1 << 20), 1 << 20)] {
            let server = try await HostileServer.start(answer)
            defer { server.stop() }
            let client = RestClient(credentials: .sample(instance: server.url), maximumResponseBytes: size)
            #expect(try await client.send(request: .versions()).data.count == size)
            let smaller = RestClient(credentials: .sample(instance: server.url), maximumResponseBytes: size - 1)
            let error = await #expect(throws: RestClientError.self) { try await smaller.send(request: .versions()) }
            #expect(tooLarge(error)?.limit == size - 1)
        }
    }

    @Test func aTrickledBodyIsCancelledAtTheDeadline() async throws {
        let server = try await HostileServer.start(.trickle(every: .milliseconds(20)))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: SocketTransport(timeout: 1))
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        // Timed by the server (a loaded machine resumes this task late): a megabyte at a byte per
        // 20 ms would take almost 6 hours.
        let connection = await server.log.closedConnection(within: .seconds(60))
        #expect(try #require(connection?.duration) < .seconds(30), "ended by the 1 s deadline, not by the endless body's end")
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        guard case .network(let underlying as OAuthError)? = error, case .timedOut(let what) = underlying else {
            Issue.record("expected a timeout, got \(String(describing: error))"); return
        }
        #expect(what.contains("within 1 s"))
        #expect(server.bodyBytesSent > 0, "the body had started to arrive")
    }

    @Test func anEndlessHeaderIsRefusedAtItsLimit() async throws {
        let server = try await HostileServer.start(.endlessHeader)
        defer { server.stop() }
        let error = await #expect(throws: RestClientError.self) {
            try await RestClient(credentials: .sample(instance: server.url)).send(request: .versions())
        }
        #expect(transportError(error)?.code == .headerTooLarge)
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
    }

    @Test func theTransportsOwnLimitAppliesToARequestThatNamesNone() async throws {
        let server = try await HostileServer.start(.unannounced(bytes: 4 << 20))
        defer { server.stop() }
        let transport = SocketTransport(maximumResponseBytes: 1 << 20)
        let error = await #expect(throws: ResponseTooLarge.self) { _ = try await transport.send(HTTPRequest(url: server.url)) }
        #expect(error?.setting == "SocketTransport(maximumResponseBytes:)")
        #expect(error?.limit == 1 << 20)
    }

    @Test func aTransportThatDoesNotBoundItsAnswerIsCheckedByTheClient() async throws {
        let transport = InProcessTransport { _ in HTTPResponse(status: 200, body: Data(count: 2048)) }
        let client = RestClient(credentials: .sample(instance: URL(string: "https://na1.example.com")!), transport: transport, maximumResponseBytes: 1024)
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        #expect(tooLarge(error)?.evidence == .received(2048))
    }

    /// URLSessionTransport stays an option; its limit is best-effort (FoundationNetworking keeps
    /// reading after a cancel), so it is checked with bodies small enough not to matter.
    @Test func urlSessionTransportRefusesABodyOverItsLimit() async throws {
        let announced = try await HostileServer.start(.body(bytes: 4 << 20))
        defer { announced.stop() }
        let client = RestClient(credentials: .sample(instance: announced.url), transport: URLSessionTransport(timeout: 10), maximumResponseBytes: 1 << 20)
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: .versions()) }
        #expect(tooLarge(error)?.evidence == .announced(4 << 20))
    }
}

/// The header fields of the last request a test server saw.
final class SeenHeaders: Sendable {
    private let headers = Locked<[String: String]>([:])
    func record(_ fields: [String: String]) { headers.withLock { $0 = fields } }
    var last: [String: String] { headers.withLock { $0 } }
}
