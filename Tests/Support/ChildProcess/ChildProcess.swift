import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs one of the package's executables (built next to the test bundle) and collects what it
/// prints. Waits are bounded by wall-clock deadlines: this is a real process, and a broken one
/// must fail the test, not hang it.
public final class ChildProcess: Sendable {
    struct Output {
        var lines: [String] = []
        var errors = ""
        var status: Int32?
        /// The exit code Foundation reaped, and how many of the two output pipes have closed: the
        /// status is known once all three are (so every line the child wrote has been read by then).
        var reaped: Int32?
        var pipesClosed = 0
        /// When Foundation reaped it, stamped on Foundation's thread (not a waiting task's).
        var exited: ContinuousClock.Instant?

        mutating func settle() {
            if pipesClosed == 2, let reaped { status = reaped }
        }
    }

    private let output = Locked(Output())
    private let standardInput: Pipe
    /// The child's process id.
    public let pid: Int32

    /// Where the executable `name` was built (beside the test runner); an absolute path as it is.
    public static func executable(_ name: String) -> URL {
        if name.hasPrefix("/") { return URL(fileURLWithPath: name) }
        let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: sibling.path) ? sibling
            : Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` with `arguments` and the test's environment plus `environment`
    /// (systemd's variables removed); `input`, if given, is written to its standard input,
    /// which is then closed (else standard input stays open until the child exits).
    public init(executable: String, environment: [String: String] = [:], arguments: [String] = [], input: String? = nil) throws {
        let process = Process()
        process.executableURL = Self.executable(executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NOTIFY_") && !$0.key.hasPrefix("WATCHDOG_") }
            .merging(environment) { _, new in new }
        let standardOutput = Pipe(), standardError = Pipe()
        process.standardOutput = standardOutput
        process.standardError = standardError
        let standardInput = Pipe()
        process.standardInput = standardInput
        let output = self.output
        process.terminationHandler = { process in
            let code = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
            let now = ContinuousClock.now
            output.withLock { $0.reaped = code; $0.exited = now; $0.settle() }
        }
        try process.run()
        if let input {
            standardInput.fileHandleForWriting.write(Data(input.utf8))
            try? standardInput.fileHandleForWriting.close()
        }
        self.standardInput = standardInput
        pid = process.processIdentifier
        let closed: @Sendable () -> Void = { output.withLock { $0.pipesClosed += 1; $0.settle() } }
        Self.read(standardOutput, line: { line in output.withLock { $0.lines.append(line) } }, done: closed)
        Self.read(standardError, line: { line in output.withLock { $0.errors += line + "\n" } }, done: closed)
    }

    private static func read(_ pipe: Pipe, line: @escaping @Sendable (String) -> Void, done: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var buffer = Data()
            while let chunk = try? pipe.fileHandleForReading.read(upToCount: 1), let byte = chunk.first {
                if byte == UInt8(ascii: "\n") {
                    line(String(decoding: buffer, as: UTF8.self))
                    buffer.removeAll()
                } else {
                    buffer.append(byte)
                }
            }
            done()
        }
    }

    /// The lines printed on standard output so far.
    public var lines: [String] { output.withLock { $0.lines } }
    /// What was printed on standard error so far.
    public var errors: String { output.withLock { $0.errors } }
    /// The exit status (128 + the signal for a killed child); `nil` while it runs.
    public var status: Int32? { output.withLock { $0.status } }
    /// When the child was reaped, stamped by the thread that reaped it — a bound on how long it
    /// ran that a loaded machine's late resumption of the waiting test does not stretch; `nil`
    /// while it runs.
    public var exited: ContinuousClock.Instant? { output.withLock { $0.exited } }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Writes `text` to the child's standard input (when it was left open).
    public func write(_ text: String) { standardInput.fileHandleForWriting.write(Data(text.utf8)) }

    /// Waits until `condition` holds for the output, or `seconds` pass. Returns whether it held.
    public func waitUntil(seconds: Double = 10, _ condition: @escaping @Sendable ([String], Int32?) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (lines, status) = output.withLock { ($0.lines, $0.status) }
            if condition(lines, status) { return true }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { done.resume() }
            }
        }
        let (lines, status) = output.withLock { ($0.lines, $0.status) }
        return condition(lines, status)
    }

    /// Waits until the child printed `line`, or `seconds` pass. Returns whether it did.
    public func waitForLine(_ line: String, seconds: Double = 10) async -> Bool {
        await waitUntil(seconds: seconds) { lines, _ in lines.contains(line) }
    }

    /// Waits until the child exits, or `seconds` pass. Returns its status.
    public func waitForExit(seconds: Double = 10) async -> Int32? {
        _ = await waitUntil(seconds: seconds) { _, status in status != nil }
        return status
    }

    deinit { if status == nil { kill(pid, SIGKILL) } }
}
