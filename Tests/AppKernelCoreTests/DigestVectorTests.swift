import Testing
import AppKernelCore

/// Published test vectors for the digests Core takes from the system's libcrypto (moved here
/// from AppKernelAuth, whose hand-written SHA-256, HMAC and PBKDF2 they checked): FIPS 180-4 /
/// NIST CSRC examples (SHA-256), RFC 4231 (HMAC-SHA256), RFC 7914 §11 (PBKDF2-HMAC-SHA256).
struct DigestVectorTests {
    static let sha256Vectors: [(String, String)] = [
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ]

    @Test func sha256MatchesFIPS180Examples() {
        for (message, digest) in Self.sha256Vectors {
            #expect(SHA256.hash(Array(message.utf8)).hex == digest, "\(message)")
        }
    }

    @Test func sha256OfAMillionAs() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000)
        for _ in 0..<1_000 { hasher.update(chunk) }
        #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256IsTheSameFedInPiecesAtEveryBoundary() {
        let message = Array((0..<200).map { UInt8($0) })
        let whole = SHA256.hash(message)
        for split in [0, 1, 55, 56, 63, 64, 65, 119, 128, 199, 200] {
            var hasher = SHA256()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize() == whole, "split at \(split)")
        }
    }

    @Test func hmacMatchesRFC4231() {
        let cases: [([UInt8], [UInt8], String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            ([UInt8](repeating: 0xaa, count: 131),
             Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (index, (key, data, mac)) in cases.enumerated() {
            #expect(HMACSHA256.authenticationCode(for: data, key: key).hex == mac, "RFC 4231 case \(index + 1)")
        }
        // Case 5 checks a truncated MAC.
        let truncated = HMACSHA256.authenticationCode(for: Array("Test With Truncation".utf8), key: [UInt8](repeating: 0x0c, count: 20))
        #expect(truncated.prefix(16).hex == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test func pbkdf2MatchesRFC7914() {
        #expect(PBKDF2.deriveKey(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64).hex
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        #expect(PBKDF2.deriveKey(password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80_000, length: 64).hex
                == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
        #expect(PBKDF2.deriveKey(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 20).count == 20)
    }

    @Test func randomBytesDiffer() throws {
        #expect(SecureRandom.bytes(32).count == 32)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        #expect(try SecureRandom.generate(0).isEmpty)
        #expect(try SecureRandom.generate(64) != SecureRandom.generate(64))
    }

    @Test func hmacVerifiesInConstantTimeAndRefusesAnyOtherCode() {
        // RFC 4231 case 2.
        let mac = HMACSHA256(key: Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        let code = mac.authenticationCode(for: message)
        #expect(mac.isValidAuthenticationCode(code, for: message))
        var flipped = code
        flipped[31] ^= 1
        #expect(!mac.isValidAuthenticationCode(flipped, for: message))
        #expect(!mac.isValidAuthenticationCode(code.prefix(16), for: message))
        #expect(!mac.isValidAuthenticationCode([], for: message))
    }
}
