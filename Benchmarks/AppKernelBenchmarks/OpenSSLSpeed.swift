import Foundation

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
        let process = Process()
        process.executableURL = executable
        process.arguments = ["speed", "-seconds", "\(seconds)", "-bytes", "\(size)", "-evp", "aes-256-gcm"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failure(Missing(description: "openssl could not be run: \(error)"))
        }
        // openssl stops its loop with SIGALRM: a child that cannot take it (seen once in a full
        // run here: it spun 18 minutes) is stopped by this deadline instead of hanging the run.
        let deadline = Date().addingTimeInterval(Double(seconds) + 10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return .failure(Missing(description: "openssl speed did not finish within \(seconds + 10) s (stopped): no reference figure"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        guard let row = text.split(separator: "\n").last(where: { $0.uppercased().hasPrefix("AES-256-GCM") }),
              let figure = row.split(separator: " ").last, figure.hasSuffix("k"), let thousands = Double(figure.dropLast()) else {
            return .failure(Missing(description: "openssl speed printed no AES-256-GCM row (exit \(process.terminationStatus))"))
        }
        return .success(thousands * 1000)
    }
}
