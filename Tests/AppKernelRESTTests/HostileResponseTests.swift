import Foundation
import Testing
import AppKernelAuth
import AppKernelREST
import LoopbackServer

extension Credentials {
    /// Credentials for an org served at `instance` (a loopback test server).
    static func sample(instance: URL) -> Credentials {
        Credentials(accessToken: "A0", refreshToken: "R", instanceURL: instance,
                    identityURL: instance.appendingPathComponent("id/00D000000000001/005000000000001"),
                    userID: "005000000000001", orgID: "00D000000000001")
    }
}

/// The REST client against servers that answer like attackers, over real URLSession on loopback:
/// every answer is refused within its limit or its deadline, and memory stays bounded.
/// `.serialized`: the memory checks read the process-wide high-water mark.
@Suite(.serialized) struct HostileResponseTests {
    /// Run alone, the suite stays under 100 MB of growth and the download stops just past the
    /// limit. Beside other tests on a busy machine, FoundationNetworking's URLSession acts on a
    /// cancel late: it keeps reading and queueing chunks for the delegate (which drops them)
    /// for a while, so the high-water mark rises further. Not fixed yet (issue 29).
    static let lateCancel: Comment = "FoundationNetworking acts on cancel late under load (issue 29, open)"

    /// The `ResponseTooLarge` inside a refused call, or a recorded issue.
    func tooLarge(_ error: RestClientError?, sourceLocation: SourceLocation = #_sourceLocation) -> ResponseTooLarge? {
        guard case .responseTooLarge(let refused)? = error else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return refused
    }

    @Test func contractAHugeResponseIsRefusedWithinItsLimit() async throws {
        ProcessMemory.resetPeak()
        let server = try await HostileServer.start(.body(bytes: 1 << 30))   // loopback
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport())
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: client.requestForVersions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        let growth = ProcessMemory.peakGrowthSinceStart
        withKnownIssue(Self.lateCancel, isIntermittent: true) { #expect(growth < 100 << 20) }
        let refused = tooLarge(error)
        #expect(refused?.evidence == .announced(1 << 30), "refused on its Content-Length, before reading")
        #expect(refused?.limit == 64 << 20)
        #expect(refused?.host == "127.0.0.1")
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("RestClient(maximumResponseBytes:)"), "\(message)")
        #expect(message.contains("67108864 bytes (64 MiB)"), "\(message)")
        #expect(message.contains("http://127.0.0.1:\(server.port)/services/data"), "\(message)")
    }

    @Test func anUnannouncedHugeBodyIsCancelledWhenItPassesTheLimit() async throws {
        ProcessMemory.resetPeak()
        let server = try await HostileServer.start(.unannounced(bytes: 1 << 30))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport())
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: client.requestForVersions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        let growth = ProcessMemory.peakGrowthSinceStart
        withKnownIssue(Self.lateCancel, isIntermittent: true) { #expect(growth < 100 << 20) }
        guard case .received(let count)? = tooLarge(error)?.evidence else { Issue.record("\(String(describing: error))"); return }
        #expect(count > 64 << 20)
        let sent = server.bodyBytesSent
        withKnownIssue(Self.lateCancel, isIntermittent: true) { #expect(sent < 256 << 20, "the download stopped soon after the limit") }
    }

    @Test func aGzipBombIsCountedDecompressed() async throws {
        ProcessMemory.resetPeak()
        let server = try await HostileServer.start(.gzipBomb(expandedBytes: 1 << 30))    // about 6.5 MB of gzip
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport())
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: client.requestForVersions()) }
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        let growth = ProcessMemory.peakGrowthSinceStart
        withKnownIssue(Self.lateCancel, isIntermittent: true) { #expect(growth < 100 << 20) }
        guard case .received(let count)? = tooLarge(error)?.evidence else { Issue.record("\(String(describing: error))"); return }
        #expect(count > 64 << 20)
        #expect(server.bodyBytesSent < 64 << 20, "less gzip than the limit arrived: the count is after decompression")
    }

    @Test func aSmallGzipBodyStillArrivesDecompressed() async throws {
        let server = try await HostileServer.start(.gzipBomb(expandedBytes: 100_000))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport(), maximumResponseBytes: 100_000)
        let response = try await client.send(request: client.requestForVersions())
        let expanded: Int = 1 + 387 * 258                    // one literal zero, then whole 258-byte copies
        #expect(response.data.count == expanded)
        #expect(response.data.allSatisfy { $0 == 0 })
    }

    @Test func anEndlessChunkedAnswerIsCancelledAtTheClientsLimit() async throws {
        let server = try await HostileServer.start(.endlessChunked)
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport(), maximumResponseBytes: 1 << 20)
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: client.requestForVersions()) }
        guard let refused = tooLarge(error), case .received(let count) = refused.evidence else { return }
        #expect(refused.limit == 1 << 20 && count > 1 << 20)
        #expect(refused.setting == "RestClient(maximumResponseBytes:)")
        let left = await server.clientsLeft(within: .seconds(10))
        withKnownIssue(Self.lateCancel, isIntermittent: true) { #expect(left, "the transfer ended") }
    }

    @Test func aBodyOfExactlyTheLimitIsAccepted() async throws {
        let server = try await HostileServer.start(.body(bytes: 1 << 20))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport(), maximumResponseBytes: 1 << 20)
        #expect(try await client.send(request: client.requestForVersions()).data.count == 1 << 20)
    }

    @Test func aTrickledBodyIsCancelledAtTheDeadline() async throws {
        let server = try await HostileServer.start(.trickle(every: .milliseconds(20)))
        defer { server.stop() }
        let client = RestClient(credentials: .sample(instance: server.url), transport: URLSessionTransport(timeout: 1))
        let start = ContinuousClock.now
        let error = await #expect(throws: RestClientError.self) { try await client.send(request: client.requestForVersions()) }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await server.clientsLeft(within: .seconds(10)), "the transfer ended")
        guard case .network(let underlying as OAuthError)? = error, case .timedOut(let what) = underlying else {
            Issue.record("expected a timeout, got \(String(describing: error))"); return
        }
        #expect(what.contains("within 1 s"))
        #expect(server.bodyBytesSent > 0, "the body had started to arrive")
    }

    @Test func theTransportsOwnLimitAppliesToARequestThatNamesNone() async throws {
        let server = try await HostileServer.start(.unannounced(bytes: 4 << 20))
        defer { server.stop() }
        let transport = URLSessionTransport(maximumResponseBytes: 1 << 20)
        let error = await #expect(throws: ResponseTooLarge.self) { _ = try await transport.send(HTTPRequest(url: server.url)) }
        #expect(error?.setting == "URLSessionTransport(maximumResponseBytes:)")
        #expect(error?.limit == 1 << 20)
    }
}
