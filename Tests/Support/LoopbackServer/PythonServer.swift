public import Foundation

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

    /// Where `python3` is on the `PATH`, if it is.
    public static let python3: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether `python3` is installed: the loopback servers' suites run only if it is, and one
    /// test (`PythonRequirementTests`) fails with ``missingMessage`` if it is not.
    public static var isInstalled: Bool { python3 != nil }

    /// What to do when `python3` is missing.
    public static let missingMessage = "python3 is not on the PATH: the OAuth and REST loopback tests run servers written with "
        + "Python's standard library. Install it (Debian: apt-get install python3); .ci/run installs it when it is missing."

    /// Starts `script` and waits for it to say which port it took.
    public static func start(script: URL) async throws -> PythonServer {
        guard isInstalled else { throw ServerError.python3Missing }
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

    /// The server could not start.
    public enum ServerError: Error, CustomStringConvertible {
        /// `python3` is not installed.
        case python3Missing
        /// The script did not print its port; what it printed instead.
        case didNotStart(String)

        /// What went wrong, in words.
        public var description: String {
            switch self {
            case .python3Missing: PythonServer.missingMessage
            case .didNotStart(let printed): "the server script did not print its port (its first line: '\(printed)')"
            }
        }
    }
}
