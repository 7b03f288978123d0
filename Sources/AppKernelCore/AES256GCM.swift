/// AES-256-GCM, the authenticated encryption (AEAD) every sealed file and page uses: from the
/// system's libcrypto (`EVP_aes_256_gcm`) on Linux and CryptoKit on Apple platforms; checked
/// against NIST's GCM vectors and against Python's `cryptography` in the tests.
///
/// Each ``seal(_:using:authenticating:)`` draws a fresh random 12-byte nonce (NIST SP 800-38D
/// §8.2.2; keep one key below 2³² seals) and returns the nonce, the ciphertext and the 16-byte
/// tag. ``open(_:using:authenticating:)`` returns the plaintext only if the tag verifies over
/// the ciphertext and the associated data; otherwise it throws and nothing decrypted is kept.
///
/// ```swift
/// let key = try SecretKey.random()
/// let box = try AES256GCM.seal(Array("token".utf8), using: key, authenticating: header)
/// let file = box.combined                                  // nonce ‖ ciphertext ‖ tag
/// let token = try AES256GCM.open(AES256GCM.SealedBox(combined: file), using: key, authenticating: header)
/// ```
public enum AES256GCM {
    /// The nonce's length in bytes.
    public static let nonceByteCount = 12
    /// The tag's length in bytes.
    public static let tagByteCount = 16
    /// The most bytes one seal takes (the library's `int` lengths).
    public static let maximumByteCount = Int(Int32.max) - 64

    /// A sealed message: nonce, ciphertext and tag.
    public struct SealedBox: Sendable, Hashable {
        /// The 12-byte nonce.
        public let nonce: [UInt8]
        /// The ciphertext, as long as the plaintext.
        public let ciphertext: [UInt8]
        /// The 16-byte authentication tag.
        public let tag: [UInt8]

        /// A box from its three parts.
        /// - Throws: ``CryptoError/Code/invalidLength(what:count:)`` for a nonce or tag of the wrong size.
        public init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws(CryptoError) {
            guard nonce.count == AES256GCM.nonceByteCount else {
                throw CryptoError(.invalidLength(what: "a nonce", count: nonce.count), operation: "AES-256-GCM")
            }
            guard tag.count == AES256GCM.tagByteCount else {
                throw CryptoError(.invalidLength(what: "a tag", count: tag.count), operation: "AES-256-GCM")
            }
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// A box from its ``combined`` form, nonce ‖ ciphertext ‖ tag (as CryptoKit and the Mobile
        /// SDK write it).
        /// - Throws: ``CryptoError/Code/invalidLength(what:count:)`` when it is shorter than 28 bytes.
        public init(combined: some Collection<UInt8>) throws(CryptoError) {
            let bytes = Array(combined)
            guard bytes.count >= AES256GCM.nonceByteCount + AES256GCM.tagByteCount else {
                throw CryptoError(.invalidLength(what: "a sealed box", count: bytes.count), operation: "AES-256-GCM")
            }
            try self.init(nonce: Array(bytes[..<AES256GCM.nonceByteCount]),
                          ciphertext: Array(bytes[AES256GCM.nonceByteCount..<(bytes.count - AES256GCM.tagByteCount)]),
                          tag: Array(bytes[(bytes.count - AES256GCM.tagByteCount)...]))
        }

        /// nonce ‖ ciphertext ‖ tag.
        public var combined: [UInt8] { nonce + ciphertext + tag }
    }

    /// Encrypts `plaintext` under `key` with a fresh random nonce, authenticating `aad` too.
    /// - Throws: ``CryptoError``: the random generator failed, the plaintext is too large, or the
    ///   library refused.
    public static func seal(_ plaintext: [UInt8], using key: SecretKey, authenticating aad: [UInt8] = []) throws(CryptoError) -> SealedBox {
        try seal(plaintext, using: key, nonce: SecureRandom.generate(nonceByteCount), authenticating: aad)
    }

    /// Encrypts with a given nonce: for published test vectors only (a nonce used twice under
    /// one key gives the key's authentication away).
    package static func seal(_ plaintext: [UInt8], using key: SecretKey, nonce: [UInt8], authenticating aad: [UInt8]) throws(CryptoError) -> SealedBox {
        guard plaintext.count <= maximumByteCount, aad.count <= maximumByteCount else {
            throw CryptoError(.invalidLength(what: "a plaintext", count: max(plaintext.count, aad.count)), operation: "AES-256-GCM seal")
        }
        guard nonce.count == nonceByteCount else { throw CryptoError(.invalidLength(what: "a nonce", count: nonce.count), operation: "AES-256-GCM seal") }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        let ok = key.withUnsafeBytes { key in
            nonce.withUnsafeBytes { nonce in
                aad.withUnsafeBytes { aad in
                    plaintext.withUnsafeBytes { plaintext in
                        ciphertext.withUnsafeMutableBytes { ciphertext in
                            tag.withUnsafeMutableBytes { LibCrypto.seal(key: key, nonce: nonce, aad: aad, plaintext: plaintext, ciphertext: ciphertext, tag: $0) }
                        }
                    }
                }
            }
        }
        guard ok else { throw CryptoError(.libraryFailure, operation: "AES-256-GCM seal") }
        return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// The plaintext of `box`, if its tag verifies under `key` over its ciphertext and `aad`.
    /// - Throws: ``CryptoError/Code/authenticationFailed`` otherwise; no plaintext is returned or
    ///   left in memory.
    public static func open(_ box: SealedBox, using key: SecretKey, authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        guard box.ciphertext.count <= maximumByteCount, aad.count <= maximumByteCount else {
            throw CryptoError(.invalidLength(what: "a ciphertext", count: max(box.ciphertext.count, aad.count)), operation: "AES-256-GCM open")
        }
        var plaintext = [UInt8](repeating: 0, count: box.ciphertext.count)
        let ok = key.withUnsafeBytes { key in
            box.nonce.withUnsafeBytes { nonce in
                aad.withUnsafeBytes { aad in
                    box.ciphertext.withUnsafeBytes { ciphertext in
                        box.tag.withUnsafeBytes { tag in
                            plaintext.withUnsafeMutableBytes { LibCrypto.open(key: key, nonce: nonce, aad: aad, ciphertext: ciphertext, tag: tag, plaintext: $0) }
                        }
                    }
                }
            }
        }
        guard ok else { throw CryptoError(.authenticationFailed, operation: "AES-256-GCM open") }
        return plaintext
    }
}
