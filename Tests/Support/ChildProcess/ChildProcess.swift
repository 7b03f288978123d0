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
        /// The exit code the reaping thread got, and how many of the two output pipes have closed:
        /// the status is known once all three are (so every line the child wrote has been read by then).
        var reaped: Int32?
        var pipesClosed = 0
        /// When it was reaped, stamped on the reaping thread (not a waiting task's).
        var exited: ContinuousClock.Instant?

        mutating func settle() {
            if pipesClosed == 2, let reaped { status = reaped }
        }
    }

    private let output = Locked(Output())
    /// The write end of the child's standard input while it is open.
    private let input: Locked<Int32?>
    /// The child's process id.
    public let pid: Int32
    /// The descriptors this process holds for the child: its standard input's write end (closed by
    /// ``closeInput()``, or when this object goes) and its two outputs' read ends (closed at the
    /// end of each output, before ``status`` is known).
    public let descriptors: [Int32]

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
    ///
    /// Started with `CleanSpawn`, not Foundation's `Process`: the child gets no blocked or ignored
    /// signal and none of the runner's descriptors, and nothing is kept after it ends. (On Linux,
    /// Foundation kept each `Process` and its pipes until someone called `waitUntilExit()` — 2,600
    /// descriptors open by the suite's end — and as of Swift 6.3 its `run()` can crash reading
    /// `/proc/self/fd` when about 1,365 descriptors are open, which took down a CI run.)
    public init(executable: String, environment: [String: String] = [:], arguments: [String] = [], input: String? = nil) throws {
        let child = try CleanSpawn.start(Self.executable(executable), arguments: arguments,
                                         environment: ProcessInfo.processInfo.environment
                                            .filter { !$0.key.hasPrefix("NOTIFY_") && !$0.key.hasPrefix("WATCHDOG_") }
                                            .merging(environment) { _, new in new },
                                         piping: [.input, .output, .errors])
        pid = child.pid
        self.input = Locked(child.input)
        descriptors = [child.input, child.output, child.errors].compactMap { $0 }
        let output = self.output, pid = child.pid
        Thread.detachNewThread {
            // Waits for the end without reaping: until the lock below reaps it, the child stays a
            // zombie and its pid cannot be reused, so `send` (which signals under the same lock)
            // never reaches another process — on Linux a reused pid may even be a thread of the runner.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            let now = ContinuousClock.now
            output.withLock { state in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                // The low seven bits: 0 for an exit (its code in the next byte), else the signal.
                state.reaped = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                state.exited = now
                state.settle()
            }
        }
        let closed: @Sendable () -> Void = { output.withLock { $0.pipesClosed += 1; $0.settle() } }
        if let descriptor = child.output { Self.drain(descriptor, line: { line in output.withLock { $0.lines.append(line) } }, done: closed) }
        if let descriptor = child.errors { Self.drain(descriptor, line: { line in output.withLock { $0.errors += line + "\n" } }, done: closed) }
        if let input {
            write(input)
            closeInput()
        }
    }

    /// Reads `descriptor` line by line on a thread of its own until the end of the output, then
    /// closes it.
    private static func drain(_ descriptor: Int32, line: @escaping @Sendable (String) -> Void, done: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var buffer = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                // read(2) fills the local array's storage, borrowed for the call.
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in chunk[..<count] {
                    if byte == UInt8(ascii: "\n") {
                        line(String(decoding: buffer, as: UTF8.self))
                        buffer.removeAll()
                    } else {
                        buffer.append(byte)
                    }
                }
            }
            close(descriptor)
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

    /// Sends `signal` to the child; nothing once it has ended.
    public func send(_ signal: Int32) {
        output.withLock { if $0.reaped == nil { kill(pid, signal) } }
    }

    /// Writes `text` to the child's standard input (when it was left open).
    public func write(_ text: String) {
        input.withLock { descriptor in
            if let descriptor { writeAll(Array(text.utf8), to: descriptor) }
        }
    }

    /// Closes the child's standard input: it reads the end of its input.
    public func closeInput() {
        input.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

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

    deinit {
        send(SIGKILL)
        closeInput()
    }
}

/// Writes all of `bytes` to `descriptor`, or as much as it takes before an error.
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    var left = bytes[...]
    while !left.isEmpty {
        // write(2) reads the slice's storage, borrowed for the call.
        let written = left.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        left = left.dropFirst(written)
    }
}
