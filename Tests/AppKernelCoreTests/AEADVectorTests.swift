import Testing
import AppKernelCore

/// AES-256-GCM against the GCM specification's AES-256 test cases 13–16 (McGrew & Viega, "The
/// Galois/Counter Mode of Operation", as NIST's CAVP GCM vectors carry them), and HKDF-SHA256
/// against RFC 5869 appendix A.1–A.3.
struct AEADVectorTests {
    static let key15 = [UInt8](hex: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    static let nonce15 = [UInt8](hex: "cafebabefacedbaddecaf888")
    static let plaintext15 = [UInt8](hex: """
        d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72
        1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255
        """)
    static let ciphertext15 = [UInt8](hex: """
        522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa
        8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad
        """)

    @Test func aesGCMMatchesTheSpecificationsAES256Cases() throws {
        // (key, nonce, plaintext, aad, ciphertext, tag): test cases 13, 14, 15, 16.
        let zero = try SecretKey(bytes: [UInt8](repeating: 0, count: 32))
        let key = try SecretKey(bytes: Self.key15)
        let aad16 = [UInt8](hex: "feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let cases: [(SecretKey, [UInt8], [UInt8], [UInt8], [UInt8], String)] = [
            (zero, [UInt8](repeating: 0, count: 12), [], [], [], "530f8afbc74536b9a963b4f1c4cb738b"),
            (zero, [UInt8](repeating: 0, count: 12), [UInt8](repeating: 0, count: 16), [], [UInt8](hex: "cea7403d4d606b6e074ec5d3baf39d18"),
             "d0d1c8a799996bf0265b98b5d48ab919"),
            (key, Self.nonce15, Self.plaintext15, [], Self.ciphertext15, "b094dac5d93471bdec1a502270e3cc6c"),
            (key, Self.nonce15, Array(Self.plaintext15.prefix(60)), aad16, Array(Self.ciphertext15.prefix(60)), "76fc6ece0f4e1768cddf8853bb2d551b"),
        ]
        for (index, (key, nonce, plaintext, aad, ciphertext, tag)) in cases.enumerated() {
            let box = try AES256GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
            #expect(box.ciphertext == ciphertext, "test case \(13 + index)")
            #expect(box.tag.hex == tag, "test case \(13 + index)")
            #expect(try AES256GCM.open(box, using: key, authenticating: aad) == plaintext, "test case \(13 + index)")
        }
    }

    @Test func aesGCMOpenRefusesEveryChangeAndReturnsNothing() throws {
        let key = try SecretKey.random()
        let aad = Array("header".utf8)
        let box = try AES256GCM.seal(Array("refresh token".utf8), using: key, authenticating: aad)
        let combined = box.combined
        // Every single bit of nonce, ciphertext and tag.
        for bit in 0..<(combined.count * 8) {
            var damaged = combined
            damaged[bit / 8] ^= 1 << (bit % 8)
            #expect(throws: CryptoError(.authenticationFailed, operation: "AES-256-GCM open")) {
                try AES256GCM.open(AES256GCM.SealedBox(combined: damaged), using: key, authenticating: aad)
            }
        }
        #expect(throws: CryptoError.self) { try AES256GCM.open(box, using: key, authenticating: Array("headeR".utf8)) }
        #expect(throws: CryptoError.self) { try AES256GCM.open(box, using: key) }
        #expect(throws: CryptoError.self) { try AES256GCM.open(box, using: SecretKey.random(), authenticating: aad) }
        #expect(throws: CryptoError.self) { try AES256GCM.SealedBox(combined: combined.prefix(27)) }
        #expect(throws: CryptoError.self) { try AES256GCM.open(AES256GCM.SealedBox(combined: combined.dropLast()), using: key, authenticating: aad) }
    }

    @Test func aesGCMSealsWithAFreshNonceEachTime() throws {
        let key = try SecretKey.random()
        let first = try AES256GCM.seal(Array("same".utf8), using: key)
        let second = try AES256GCM.seal(Array("same".utf8), using: key)
        #expect(first.nonce != second.nonce)
        #expect(first.ciphertext != second.ciphertext)
        #expect(try AES256GCM.open(AES256GCM.SealedBox(combined: first.combined), using: key) == Array("same".utf8))
    }

    @Test func aKeyMustBe32BytesAndItsDescriptionShowsOnlyItsID() throws {
        #expect(throws: CryptoError(.invalidKeyLength(count: 16, expected: 32), operation: "a secret key")) {
            try SecretKey(bytes: [UInt8](repeating: 1, count: 16))
        }
        let bytes = [UInt8](repeating: 0x42, count: 32)
        let key = try SecretKey(bytes: bytes)
        #expect(key.id.count == 16)
        #expect(try SecretKey(bytes: bytes).id == key.id)
        #expect(try SecretKey.random().id != key.id)
        #expect(!key.description.contains(bytes.hex))
        #expect(key.description.contains(key.id.hex))
    }

    @Test func hkdfMatchesRFC5869() throws {
        let a1 = try HKDF.deriveKey(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: [UInt8](hex: "000102030405060708090a0b0c"),
                                    info: [UInt8](hex: "f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(a1.hex == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        let a2 = try HKDF.deriveKey(inputKeyMaterial: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff), outputByteCount: 82)
        #expect(a2.hex == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87")
        let a3 = try HKDF.deriveKey(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), outputByteCount: 42)
        #expect(a3.hex == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
        #expect(throws: CryptoError.self) { try HKDF.deriveKey(inputKeyMaterial: [1], outputByteCount: 0) }
        #expect(throws: CryptoError.self) { try HKDF.deriveKey(inputKeyMaterial: [1], outputByteCount: 255 * 32 + 1) }
    }

    @Test func hkdfFromAKeyEqualsHKDFOfItsBytes() throws {
        let bytes = Array(UInt8(0)..<32)
        let derived = try HKDF.deriveKey(from: SecretKey(bytes: bytes), info: Array("page key".utf8))
        let expected = try SecretKey(bytes: HKDF.deriveKey(inputKeyMaterial: bytes, info: Array("page key".utf8), outputByteCount: 32))
        #expect(derived.id == expected.id)
    }
}
