import AppKernelAuth
import AppKernelREST
import Foundation
import LoopbackServer

/// A hostile answer over loopback — a body of 1 GB (--quick: 256 MB), announced with
/// `Content-Length` or not — to a `RestClient` with its default limit (64 MiB), through the
/// default ``SocketTransport`` and through ``URLSessionTransport``, side by side: what the call
/// ended with, how long it took, how far the process's resident memory rose, and how much the
/// server managed to send before the client hung up (issue 29: a 1 GB body grew the process to
/// 24 GB). The socket transport runs first, on a heap no earlier run has grown.
@MainActor
enum HostileBodyBenchmark {
    struct Figures {
        var transport: String
        var answer: String
        /// `responseTooLarge (announced)`, `accepted`, …
        var outcome: String
        var seconds: Double
        /// Peak resident memory during the call minus resident memory before it, in MB.
        var peakGrowthMB: Double
        /// Body bytes the server wrote before the client hung up (or the call ended), in MB.
        var sentMB: Double
        var refused: Bool
    }

    /// Runs every transport against every answer, prints the table, and returns the targets:
    /// through ``SocketTransport``, each body refused with peak growth < 100 MB.
    static func report(quick: Bool) async throws -> [(String, Bool)] {
        let bytes = quick ? 256 << 20 : 1 << 30
        let figures = try await run(bytes: bytes)
        print(AppKernelBenchmarks.table(
            title: "A hostile body of \(bytes >> 20) MB over loopback to RestClient (limit 64 MiB), one call each",
            header: ["transport", "body", "outcome", "time", "peak growth", "server sent"],
            rows: figures.map { Row(name: $0.transport, values: [$0.answer, $0.outcome, Format.time($0.seconds),
                                                                String(format: "%.1f MB", $0.peakGrowthMB), String(format: "%.1f MB", $0.sentMB)]) }) + "\n")
        return figures.filter { $0.transport == "SocketTransport" }.map { figures in
            (String(format: "a %@ hostile body of %d MB through SocketTransport: refused, peak memory grows < 100 MB (%.1f MB)",
                    figures.answer, bytes >> 20, figures.peakGrowthMB), figures.refused && figures.peakGrowthMB < 100)
        }
    }

    /// Every transport against every answer, `bytes` a body.
    static func run(bytes: Int) async throws -> [Figures] {
        var figures: [Figures] = []
        for (name, make) in [("SocketTransport", { SocketTransport() as any HTTPTransport }), ("URLSessionTransport", { URLSessionTransport() })] {
            for (label, answer) in [("announced", HostileServer.Answer.body(bytes: bytes)), ("unannounced", .unannounced(bytes: bytes))] {
                figures.append(try await measure(name, make(), label, answer))
            }
        }
        return figures
    }

    private static func measure(_ name: String, _ transport: any HTTPTransport, _ label: String, _ answer: HostileServer.Answer) async throws -> Figures {
        let server = try await HostileServer.start(answer)
        let instance = server.url
        let credentials = Credentials(accessToken: "A0", refreshToken: "R", instanceURL: instance,
                                      identityURL: instance.appendingPathComponent("id/00D000000000001/005000000000001"),
                                      userID: "005000000000001", orgID: "00D000000000001")
        let client = RestClient(credentials: credentials, transport: transport)
        Machine.releaseFreeMemory()
        ProcessMemory.resetPeak()
        let start = ContinuousClock.now
        let outcome: String
        var refused = false
        do {
            let response = try await client.send(request: client.requestForVersions())
            outcome = "accepted \(response.data.count) bytes"
        } catch .responseTooLarge(let error) {
            refused = true
            if case .announced = error.evidence { outcome = "refused (announced)" } else { outcome = "refused (counted)" }
        } catch {
            outcome = "failed: \(error)"
        }
        let seconds = Measure.seconds(ContinuousClock.now - start)
        let growth = Double(ProcessMemory.peakGrowthSinceStart) / 1_048_576
        _ = await server.clientsLeft(within: .seconds(30))
        let sent = Double(server.bodyBytesSent) / 1_048_576
        server.stop()
        return Figures(transport: name, answer: label, outcome: outcome, seconds: seconds, peakGrowthMB: growth, sentMB: sent, refused: refused)
    }
}
