import AppKernelCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `openssl speed -evp aes-256-gcm`, run on this machine for the sealed section's reference
/// figure: the command-line tool of the same libcrypto, its own tight loop over one context.
enum OpenSSLSpeed {
    /// Why there is no figure.
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The `openssl` executable on `PATH`, if any.
    static var executable: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("openssl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Encryption bytes per second for `size`-byte buffers over `seconds` seconds:
    /// `openssl speed -seconds <s> -bytes <size> -evp aes-256-gcm`, its table's row
    /// ("AES-256-GCM  4131225.60k", in 1000s of bytes per second); ``Missing`` when `openssl`
    /// is missing or its output has no such row.
    static func encryptionBytesPerSecond(size: Int, seconds: Int) -> Result<Double, Missing> {
        guard let executable else {
            return .failure(Missing(description: "openssl is not installed (no openssl on PATH): no reference figure (apt-get install openssl)"))
        }
        // Spawned with no signal blocked: openssl ends its loop on SIGALRM, which a child of
        // Foundation's Process started from this async context would inherit blocked (it then
        // spins forever; CleanSpawn says why).
        let child: CleanSpawn.Child
        do { child = try CleanSpawn.start(executable, arguments: ["speed", "-seconds", "\(seconds)", "-bytes", "\(size)", "-evp", "aes-256-gcm"],
                                          piping: .output) } catch {
            return .failure(Missing(description: "openssl could not be run: \(error)"))
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(seconds + 10)
        var timedOut = false
        while let output = child.output {
            var ready = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            // poll(2) reads and fills the local pollfd, for the call only.
            if poll(&ready, 1, 100) > 0 {
                // read(2) fills the local buffer, borrowed for the call.
                let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
            if ContinuousClock.now >= deadline { timedOut = true; break }
        }
        if let output = child.output { close(output) }
        if timedOut { kill(child.pid, SIGKILL) }
        var status: Int32 = 0
        waitpid(child.pid, &status, 0)
        if timedOut {
            return .failure(Missing(description: "openssl speed did not finish within \(seconds + 10) s (killed): no reference figure"))
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let row = text.split(separator: "\n").last(where: { $0.uppercased().hasPrefix("AES-256-GCM") }),
              let figure = row.split(separator: " ").last, figure.hasSuffix("k"), let thousands = Double(figure.dropLast()) else {
            return .failure(Missing(description: "openssl speed printed no AES-256-GCM row (wait status \(status))"))
        }
        return .success(thousands * 1000)
    }
}
