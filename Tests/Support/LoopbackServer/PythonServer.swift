import Foundation

/// Runs a Python-standard-library server script on an ephemeral loopback port for the duration
/// of a test. The script prints `PORT <n>` on its first line and exits when its standard input
/// closes. Shared by the auth and REST test targets.
///
/// `@unchecked Sendable`: `process` and `input` are set once in `init`; afterwards only `stop()`
/// touches `input`, once.
public final class PythonServer: @unchecked Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    private let process: Process
    private let input: Pipe

    private init(process: Process, input: Pipe, port: Int) {
        self.process = process
        self.input = input
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts `script` and waits for it to say which port it took.
    public static func start(script: URL) async throws -> PythonServer {
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
        return PythonServer(process: process, input: input, port: port)
    }

    /// Closes the server's standard input, which makes it exit (a signal would reach only the
    /// pyenv shim that may stand in between). Not `waitUntilExit()`: on Linux it spins a run loop
    /// that test tasks never run, and hangs.
    public func stop() {
        try? input.fileHandleForWriting.close()
    }

    /// The script did not print its port.
    public enum ServerError: Error { case didNotStart(String) }
}
