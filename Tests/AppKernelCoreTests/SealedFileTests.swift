import Foundation
import Testing
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder of its own under the temporary directory, removed at the end.
final class KeyScratch {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false) }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    func mode(_ relative: String) -> UInt32 {
        var status = stat()
        return lstat(path(relative).path, &status) == 0 ? UInt32(status.st_mode & 0o7777) : 0
    }
}

/// The sealed-file format: every bad input of issue 30 ("truncated, bit-flipped, … one user's
/// file copied over another's") is a typed error naming the file, and nothing that failed is
/// decrypted.
struct SealedFileTests {
    static let secret = Array(#"{"refresh_token":"5Aep-canary-refresh"}"#.utf8)

    @Test func aSealedFileIsPrivateAndHoldsNoPlaintext() throws {
        let scratch = try KeyScratch(), key = try SecretKey.random()
        let file = scratch.path("account.json")
        try SealedFile.write(Self.secret, to: file, purpose: "credentials", owner: "005A-alice", key: key)
        #expect(scratch.mode("account.json") == 0o600)
        let bytes = try Data(contentsOf: file)
        #expect(bytes.range(of: Data("5Aep-canary-refresh".utf8)) == nil)
        #expect(bytes.prefix(4) == Data("AKSF".utf8))
        #expect(try SealedFile.read(file, purpose: "credentials", owner: "005A-alice", key: key) == Self.secret)
        #expect(try SealedFile.read(scratch.path("absent"), purpose: "credentials", owner: "005A-alice", key: key) == nil)
        let header = try SealedFile.header(of: Array(bytes), path: file.path)
        #expect(header == SealedFile.Header(version: 1, keyID: key.id, purpose: "credentials", owner: "005A-alice"))
    }

    @Test func everyFlippedBitIsATypedErrorAndNothingOpens() throws {
        let key = try SecretKey.random()
        let sealed = try SealedFile.seal(Self.secret, purpose: "credentials", owner: "alice", key: key, path: "/data/account.json")
        var seen: Set<String> = []
        for bit in 0..<(sealed.count * 8) {
            var damaged = sealed
            damaged[bit / 8] ^= 1 << (bit % 8)
            do {
                _ = try SealedFile.open(damaged, purpose: "credentials", owner: "alice", key: key, path: "/data/account.json")
                Issue.record("bit \(bit) flipped and the file still opened")
            } catch {
                #expect(error.path == "/data/account.json")
                #expect(error.description.contains("/data/account.json"))
                seen.insert("\(error.problem)".prefix(while: { $0 != "(" }).description)
            }
        }
        // Magic, version, key id, lengths and names, nonce/ciphertext/tag: each says what it is.
        #expect(seen.isSuperset(of: ["notSealed", "unsupportedVersion", "wrongKey", "wrongPurpose", "wrongOwner", "damaged", "truncated"]), "\(seen)")
    }

    @Test func everyTruncationIsRefused() throws {
        let key = try SecretKey.random()
        let sealed = try SealedFile.seal(Self.secret, purpose: "credentials", owner: "alice", key: key, path: "f")
        for length in 0..<sealed.count {
            #expect(throws: SealedFileError.self, "\(length) of \(sealed.count) bytes") {
                try SealedFile.open(Array(sealed.prefix(length)), purpose: "credentials", owner: "alice", key: key, path: "f")
            }
        }
        #expect(throws: SealedFileError(path: "f", problem: .truncated)) {
            try SealedFile.open(Array(sealed.prefix(30)), purpose: "credentials", owner: "alice", key: key, path: "f")
        }
    }

    @Test func aFileCopiedFromAnotherUserIsRefusedEvenWithItsHeaderRewritten() throws {
        let scratch = try KeyScratch(), key = try SecretKey.random()
        try FileManager.default.createDirectory(at: scratch.path("alice"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: scratch.path("bob"), withIntermediateDirectories: false)
        try SealedFile.write(Self.secret, to: scratch.path("alice/account.json"), purpose: "credentials", owner: "alice", key: key)
        // Copied over bob's file (the same key, as a shared app key would be).
        try FileManager.default.copyItem(at: scratch.path("alice/account.json"), to: scratch.path("bob/account.json"))
        let bobFile = scratch.path("bob/account.json")
        #expect(throws: SealedFileError(path: bobFile.path, problem: .wrongOwner(found: "alice"))) {
            try SealedFile.read(bobFile, purpose: "credentials", owner: "bob", key: key)
        }
        // The attacker rewrites the header's owner ("alice" → "bobby", same length): the tag fails.
        var bytes = Array(try Data(contentsOf: bobFile))
        let range = try #require(bytes.firstRange(of: Array("alice".utf8)))
        bytes.replaceSubrange(range, with: Array("bobby".utf8))
        #expect(throws: SealedFileError(path: "x", problem: .damaged)) {
            try SealedFile.open(bytes, purpose: "credentials", owner: "bobby", key: key, path: "x")
        }
        // Another kind of secret in the same place: refused too.
        #expect(throws: SealedFileError(path: bobFile.path, problem: .wrongPurpose(found: "credentials"))) {
            try SealedFile.read(bobFile, purpose: "passcode", owner: "alice", key: key)
        }
    }

    @Test func aWrongKeyIsNamedAndNothingIsOverwritten() throws {
        let scratch = try KeyScratch(), key = try SecretKey.random(), other = try SecretKey.random()
        let file = scratch.path("org.json")
        try SealedFile.write(Self.secret, to: file, purpose: "org", owner: "global", key: key)
        let before = try Data(contentsOf: file)
        #expect(throws: SealedFileError(path: file.path, problem: .wrongKey(found: key.description.dropFirst(14).dropLast().description))) {
            try SealedFile.read(file, purpose: "org", owner: "global", key: other)
        }
        #expect(try Data(contentsOf: file) == before)
    }

    @Test func aPlainFileIsNotSealedAndAnUnknownVersionIsNamed() throws {
        let key = try SecretKey.random()
        #expect(throws: SealedFileError(path: "a", problem: .notSealed)) {
            try SealedFile.open(Array(#"{"refresh_token":"x"}"#.utf8), purpose: "credentials", owner: "alice", key: key, path: "a")
        }
        var sealed = try SealedFile.seal([1, 2, 3], purpose: "credentials", owner: "alice", key: key, path: "a")
        sealed[4] = 2
        #expect(throws: SealedFileError(path: "a", problem: .unsupportedVersion(2))) {
            try SealedFile.open(sealed, purpose: "credentials", owner: "alice", key: key, path: "a")
        }
        #expect(throws: SealedFileError.self) { try SealedFile.seal([], purpose: "", owner: "alice", key: key, path: "a") }
        #expect(throws: SealedFileError.self) {
            try SealedFile.seal([], purpose: "p", owner: String(repeating: "o", count: 1025), key: key, path: "a")
        }
    }

    @Test func anEmptySecretSealsAndOpens() throws {
        let key = try SecretKey.random()
        let sealed = try SealedFile.seal([], purpose: "p", owner: "o", key: key, path: "a")
        #expect(try SealedFile.open(sealed, purpose: "p", owner: "o", key: key, path: "a") == [])
    }
}
