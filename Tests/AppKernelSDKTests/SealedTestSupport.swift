import Foundation
import AppKernelCore
import Testing

/// The master key of the tests' data homes: one for the test process, so that a relaunch on a
/// data home (a new manager, a new key ring) opens what the last one sealed, as a key file would.
enum TestKeys {
    static let master = try! SecretKey.random()

    /// The key ring of `home` under the tests' master key.
    static func ring(for home: URL) throws -> KeyRing {
        try KeyRing(dataHome: home, provider: .inMemory(master))
    }
}

extension FileManager {
    /// Every regular file under `directory`, at any depth (links not followed).
    func allFiles(under directory: URL) throws -> [URL] {
        guard let walker = enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var files: [URL] = []
        for case let file as URL in walker where try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            files.append(file)
        }
        return files
    }
}

/// The sealed passcode record of a test's data home, opened and changed the way only a holder of
/// the key (or an attacker without it) could.
enum SealedPasscodeFile {
    /// The record's fields, opened with the data home's global key.
    static func fields(of file: URL, home: URL) throws -> [String: Any] {
        let key = try TestKeys.ring(for: home).dataKey(for: KeyRing.globalOwner)
        let bytes = try #require(try SealedFile.read(file, purpose: "passcode", owner: KeyRing.globalOwner, key: key))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// Flips one bit of the ciphertext (what an edit without the key can do).
    static func flipACiphertextBit(of file: URL) throws {
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 20] ^= 0x01
        try bytes.write(to: file)
    }
}
