import AppKernelCore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A child started from a Swift concurrency thread gets no blocked and no ignored signal
/// (`openssl speed` spun for 18 minutes in the benchmark when Foundation's Process handed it the
/// cooperative thread's mask, SIGALRM blocked; a SIGTERM could not stop it either).
struct CleanSpawnTests {
    /// The child's own `SigBlk` and `SigIgn` lines of /proc/self/status (proc(5)).
    func signalLines(of child: CleanSpawn.Child) throws -> [String: String] {
        let output = try #require(child.output)
        let text = String(decoding: FileHandle(fileDescriptor: output, closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        var status: Int32 = 0
        waitpid(child.pid, &status, 0)
        var lines: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { lines[parts[0]] = parts[1] }
        }
        return lines
    }

    @Test func aChildStartsWithNoSignalBlockedOrIgnored() async throws {
        let grep = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/grep") ? "/usr/bin/grep" : "/bin/grep")
        let child = try CleanSpawn.start(grep, arguments: ["-E", "^Sig(Blk|Ign):", "/proc/self/status"], piping: .output)
        let lines = try signalLines(of: child)
        #expect(lines["SigBlk"] == "0000000000000000")
        // Signals 1–31 (bits 0–30); 32 and 33 are glibc's own (thread cancellation, set-id).
        let ignored = try #require(UInt64(lines["SigIgn"] ?? "", radix: 16))
        #expect(ignored & 0x7fff_ffff == 0, "ignored: \(String(ignored, radix: 16))")
    }

    /// The browser `xdg-open` starts must not hold the app's sockets, pipes or files: a child
    /// gets its three standard streams and nothing else, even a descriptor the parent left
    /// inheritable (here a plain `pipe(2)`, as C libraries and older code make them).
    @Test func aChildInheritsOnlyItsThreeStreams() async throws {
        var open: [Int32] = [-1, -1]
        #expect(pipe(&open) == 0)
        defer { open.forEach { _ = close($0) } }
        let child = try CleanSpawn.start(URL(fileURLWithPath: "/bin/ls"), arguments: ["-1", "/proc/self/fd"], piping: .output)
        let output = try #require(child.output)
        let text = String(decoding: FileHandle(fileDescriptor: output, closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        var status: Int32 = 0
        waitpid(child.pid, &status, 0)
        // 0, 1 and 2, and the descriptor `ls` itself opened to read the folder.
        #expect(text.split(separator: "\n").compactMap { Int32($0) }.sorted() == [0, 1, 2, 3], "the child saw: \(text)")
    }

    @Test func aChildNobodyWaitsForIsReaped() async throws {
        let child = try CleanSpawn.start(URL(fileURLWithPath: "/bin/true"), arguments: [])
        CleanSpawn.reapWhenDone(child.pid)
        let deadline = ContinuousClock.now + .seconds(60)   // tells "reaped" from "never", under any load
        while kill(child.pid, 0) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(kill(child.pid, 0) == -1 && errno == ESRCH, "no zombie left")
    }
}
