public import Foundation
import ChildProcess

/// Runs a Python-standard-library server script on an ephemeral loopback port for the duration
/// of a test. The script prints `PORT <n>` on its first line and exits when its standard input
/// closes. Shared by the auth and REST test targets.
public final class PythonServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    private let child: ChildProcess

    private init(child: ChildProcess, port: Int) {
        self.child = child
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
        let child = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", script.path])
        // Generous: a loaded machine starts Python slowly; a script that fails exits at once.
        _ = await child.waitUntil(seconds: 120) { lines, status in !lines.isEmpty || status != nil }
        let first = child.lines.first ?? ""
        guard first.hasPrefix("PORT "), let port = Int(first.dropFirst(5)) else {
            throw ServerError.didNotStart(first.isEmpty ? child.errors : first)
        }
        return PythonServer(child: child, port: port)
    }

    /// Closes the server's standard input, which makes it exit (a signal would reach only the
    /// pyenv shim that may stand in between).
    public func stop() {
        child.closeInput()
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
            case .didNotStart(let printed): "the server script did not print its port (it printed: '\(printed)')"
            }
        }
    }
}
