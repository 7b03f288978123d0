import Foundation
import Testing
import AppKernelCore

/// AES-256-GCM and HKDF-SHA256 checked against an independent implementation, Python's
/// `cryptography` (https://cryptography.io, hazmat `AESGCM` and `HKDF`; Debian's
/// `python3-cryptography`), in both directions: what Swift seals Python opens, what Python seals
/// Swift opens, a damaged box is refused by both, and HKDF gives the same bytes.
@Suite(.enabled(if: PythonCryptography.isAvailable, "needs python3 with the cryptography module (Debian: apt-get install python3-cryptography)"))
struct CryptoCrossCheckTests {
    /// Sizes that cross GCM's 16-byte blocks, plus an empty message and 1 MB.
    static let sizes = [0, 1, 15, 16, 17, 255, 4096, 1 << 20]

    @Test func aesGCMAgreesWithPythonBothWays() throws {
        var requests: [String] = []
        var expectations: [(SecretKey, [UInt8], [UInt8])] = []   // key, aad, plaintext of each "seal" request
        var swiftSealed: [[UInt8]] = []                           // plaintexts Python must give back, in order
        for size in Self.sizes {
            let key = try SecretKey.random()
            let aad = SecureRandom.bytes(size % 3 == 0 ? 0 : 1 + size % 61)
            let plaintext = SecureRandom.bytes(size)
            let box = try AES256GCM.seal(plaintext, using: key, authenticating: aad)
            let keyHex = key.withUnsafeBytes { Array($0) }.hex
            requests.append("open \(keyHex) \(aad.field) \(box.combined.field)")
            swiftSealed.append(plaintext)
            var damaged = box.combined
            damaged[damaged.count / 2] ^= 0x80
            requests.append("open \(keyHex) \(aad.field) \(damaged.field)")
            requests.append("seal \(keyHex) \(aad.field) \(plaintext.field)")
            expectations.append((key, aad, plaintext))
        }
        let answers = try PythonCryptography.run(requests)
        try #require(answers.count == requests.count, "python answered \(answers.count) of \(requests.count) requests")
        for (index, size) in Self.sizes.enumerated() {
            let opened = answers[index * 3], refused = answers[index * 3 + 1], sealed = answers[index * 3 + 2]
            #expect(opened == swiftSealed[index].field, "Python opens what Swift sealed (\(size) bytes)")
            #expect(refused == "INVALID", "Python refuses a damaged Swift box (\(size) bytes)")
            let (key, aad, plaintext) = expectations[index]
            let box = try AES256GCM.SealedBox(combined: [UInt8](hex: sealed == "-" ? "" : sealed))
            #expect(try AES256GCM.open(box, using: key, authenticating: aad) == plaintext, "Swift opens what Python sealed (\(size) bytes)")
            var damaged = box.combined
            damaged[damaged.count - 1] ^= 0x01
            #expect(throws: CryptoError.self, "Swift refuses a damaged Python box (\(size) bytes)") {
                try AES256GCM.open(AES256GCM.SealedBox(combined: damaged), using: key, authenticating: aad)
            }
        }
    }

    @Test func hkdfAgreesWithPython() throws {
        var requests: [String] = []
        var derived: [[UInt8]] = []
        for round in 0..<24 {
            let ikm = SecureRandom.bytes(1 + round * 7 % 80)
            let salt = SecureRandom.bytes(round % 4 == 0 ? 0 : round * 5 % 90)
            let info = SecureRandom.bytes(round % 3 == 0 ? 0 : round * 11 % 70)
            let length = [16, 32, 42, 64, 82, 255 * 32][round % 6]
            requests.append("hkdf \(ikm.field) \(salt.field) \(info.field) \(length)")
            derived.append(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: length))
        }
        let answers = try PythonCryptography.run(requests)
        try #require(answers.count == requests.count)
        for (index, answer) in answers.enumerated() {
            #expect(answer == derived[index].field, "round \(index)")
        }
    }
}

extension [UInt8] {
    /// Hex, or "-" for no bytes (one field of the driver's lines).
    var field: String { isEmpty ? "-" : hex }
}

/// Runs the cross-check driver: one request per line on its input, one answer per line out.
enum PythonCryptography {
    /// The driver: `open KEY AAD BOX` → plaintext or `INVALID`; `seal KEY AAD PLAINTEXT` → box
    /// (nonce ‖ ciphertext ‖ tag, Python's own random nonce); `hkdf IKM SALT INFO LENGTH` → OKM.
    /// Fields are hex, `-` for empty.
    static let script = """
        import sys, os
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF
        from cryptography.hazmat.primitives import hashes
        from cryptography.exceptions import InvalidTag
        def field(text): return b"" if text == "-" else bytes.fromhex(text)
        def out(data): return data.hex() if data else "-"
        for line in sys.stdin:
            parts = line.split()
            if parts[0] == "open":
                key, aad, box = field(parts[1]), field(parts[2]), field(parts[3])
                try:
                    print(out(AESGCM(key).decrypt(box[:12], box[12:], aad or None)))
                except InvalidTag:
                    print("INVALID")
            elif parts[0] == "seal":
                key, aad, plaintext = field(parts[1]), field(parts[2]), field(parts[3])
                nonce = os.urandom(12)
                print(out(nonce + AESGCM(key).encrypt(nonce, plaintext, aad or None)))
            elif parts[0] == "hkdf":
                ikm, salt, info, length = field(parts[1]), field(parts[2]), field(parts[3]), int(parts[4])
                print(out(HKDF(algorithm=hashes.SHA256(), length=length, salt=salt or None, info=info or None).derive(ikm)))
        """

    /// Whether `python3` is on the `PATH` and can import `cryptography`.
    static let isAvailable: Bool = {
        guard let process = try? python(arguments: ["-c", "import cryptography.hazmat.primitives.ciphers.aead"]) else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    private static func python(arguments: [String], input: FileHandle? = nil, output: Pipe? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Sends `requests` to the driver and returns its answers.
    static func run(_ requests: [String]) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crosscheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scriptURL = directory.appendingPathComponent("driver.py"), inputURL = directory.appendingPathComponent("requests")
        try Data(script.utf8).write(to: scriptURL)
        try Data((requests.joined(separator: "\n") + "\n").utf8).write(to: inputURL)
        let input = try FileHandle(forReadingFrom: inputURL)
        defer { try? input.close() }
        let output = Pipe()
        let process = try python(arguments: [scriptURL.path], input: input, output: output)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CrossCheckFailure(status: process.terminationStatus) }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    struct CrossCheckFailure: Error, CustomStringConvertible {
        var status: Int32
        var description: String { "the Python cross-check driver exited with status \(status)" }
    }
}
