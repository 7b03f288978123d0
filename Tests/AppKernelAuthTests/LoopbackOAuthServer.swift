import Foundation

/// Runs `Fixtures/oauth_server.py` (Python standard library) on an ephemeral loopback port for
/// the duration of a test, so the auth code talks real HTTP through URLSession.
/// `@unchecked Sendable`: `process` and `input` are set once in `init`; afterwards only `stop()`
/// touches `input`, once.
final class LoopbackOAuthServer: @unchecked Sendable {
    static let clientID = "3MVG9-loopback"
    let baseURL: URL
    private let process: Process
    private let input: Pipe

    private init(process: Process, input: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts the server and waits for it to say which port it took.
    static func start() async throws -> LoopbackOAuthServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/oauth_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let port: Int = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var line = Data()
                while let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
                    line.append(first)
                }
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) {
                    continuation.resume(returning: port)
                } else {
                    continuation.resume(throwing: ServerError.didNotStart(text))
                }
            }
        }
        return LoopbackOAuthServer(process: process, input: input, port: port)
    }

    /// Closes the server's standard input, which makes it exit (a signal would reach only the
    /// pyenv shim that may stand in between). Not `waitUntilExit()`: on Linux it spins a run loop
    /// that test tasks never run, and hangs.
    func stop() {
        try? input.fileHandleForWriting.close()
    }

    enum ServerError: Error { case didNotStart(String) }
}
