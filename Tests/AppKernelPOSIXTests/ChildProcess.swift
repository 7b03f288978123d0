import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A value behind a lock that closures on other threads can share.
/// `@unchecked Sendable`: every access to `value` goes through `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&value) } }
}

/// Runs the `ProcessHostDemo` executable and collects what it prints. Waits are bounded by
/// wall-clock deadlines: this is a real process, and a broken one must fail the test, not hang it.
final class ChildProcess: Sendable {
    struct Output {
        var lines: [String] = []
        var errors = ""
        var status: Int32?
    }

    private let output = Locked(Output())
    let pid: Int32

    static var demo: URL {
        let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ProcessHostDemo")
        return FileManager.default.fileExists(atPath: sibling.path) ? sibling
            : Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("ProcessHostDemo")
    }

    init(environment: [String: String] = [:], arguments: [String] = []) throws {
        let process = Process()
        process.executableURL = Self.demo
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NOTIFY_") && !$0.key.hasPrefix("WATCHDOG_") }
            .merging(environment) { _, new in new }
        let standardOutput = Pipe(), standardError = Pipe()
        process.standardOutput = standardOutput
        process.standardError = standardError
        try process.run()
        pid = process.processIdentifier
        let output = self.output
        Self.read(standardOutput) { line in output.withLock { $0.lines.append(line) } } done: {}
        let box = ProcessBox(process)
        Self.read(standardError) { line in output.withLock { $0.errors += line + "\n" } } done: {
            // stderr closes when the process is gone; Foundation reaps it and keeps the status.
            while box.process.isRunning { usleep(1_000) }
            let code = box.process.terminationReason == .exit ? box.process.terminationStatus : 128 + box.process.terminationStatus
            output.withLock { $0.status = code }
        }
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

    var lines: [String] { output.withLock { $0.lines } }
    var errors: String { output.withLock { $0.errors } }
    var status: Int32? { output.withLock { $0.status } }

    func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits until `condition` holds for the output, or `seconds` pass. Returns whether it held.
    func waitUntil(seconds: Double = 10, _ condition: @escaping @Sendable ([String], Int32?) -> Bool) async -> Bool {
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

    func waitForLine(_ line: String, seconds: Double = 10) async -> Bool {
        await waitUntil(seconds: seconds) { lines, _ in lines.contains(line) }
    }

    func waitForExit(seconds: Double = 10) async -> Int32? {
        _ = await waitUntil(seconds: seconds) { _, status in status != nil }
        return status
    }

    deinit { if status == nil { kill(pid, SIGKILL) } }
}

/// The child `Process`, for the reading thread.
/// `@unchecked Sendable`: after `run()`, only `isRunning` and the termination fields are read.
final class ProcessBox: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }
}

/// A Unix datagram socket standing in for systemd's notify socket.
final class NotifySocket: Sendable {
    let path: String
    private let descriptor: Int32
    private let received = Locked<[(message: String, time: Date)]>([])

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
        let received = self.received
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { return }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                received.withLock { $0.append((message, Date())) }
            }
        }
    }

    var messages: [String] { received.withLock { $0.map(\.message) } }
    var timedMessages: [(message: String, time: Date)] { received.withLock { $0 } }

    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
        unlink(path)
    }
}
