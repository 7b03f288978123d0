/// HKDF with SHA-256 (RFC 5869, extract then expand), from the system's libcrypto (`EVP_KDF`
/// "HKDF") on Linux and CryptoKit on Apple platforms; checked against RFC 5869's vectors and
/// against Python's `cryptography` in the tests.
///
/// ```swift
/// let subkey = try HKDF.deriveKey(from: dataKey, info: Array("store page key".utf8))
/// ```
public enum HKDF {
    /// The most bytes one derivation can give (255 blocks of SHA-256).
    public static let maximumOutputByteCount = 255 * 32

    /// `outputByteCount` bytes derived from `inputKeyMaterial`, `salt` (empty: 32 zero bytes, as
    /// RFC 5869 says) and `info`.
    /// - Throws: ``CryptoError/Code/invalidLength(what:count:)`` for an output outside
    ///   1…``maximumOutputByteCount`` bytes; ``CryptoError/Code/libraryFailure`` if the library refused.
    public static func deriveKey(inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8] = [],
                                 outputByteCount: Int) throws(CryptoError) -> [UInt8] {
        guard (1...maximumOutputByteCount).contains(outputByteCount) else {
            throw CryptoError(.invalidLength(what: "an output", count: outputByteCount), operation: "HKDF-SHA256")
        }
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let ok = inputKeyMaterial.withUnsafeBytes { ikm in
            salt.withUnsafeBytes { salt in
                info.withUnsafeBytes { info in output.withUnsafeMutableBytes { LibCrypto.hkdf(ikm: ikm, salt: salt, info: info, output: $0) } }
            }
        }
        guard ok else { throw CryptoError(.libraryFailure, operation: "HKDF-SHA256") }
        return output
    }

    /// A 256-bit key derived from `key` with `salt` and `info`, never copied into a Swift array.
    /// - Throws: ``CryptoError/Code/libraryFailure`` if the library refused.
    public static func deriveKey(from key: SecretKey, salt: [UInt8] = [], info: [UInt8]) throws(CryptoError) -> SecretKey {
        try SecretKey { (output) throws(CryptoError) in
            let ok = key.withUnsafeBytes { ikm in
                salt.withUnsafeBytes { salt in info.withUnsafeBytes { LibCrypto.hkdf(ikm: ikm, salt: salt, info: $0, output: output) } }
            }
            guard ok else { throw CryptoError(.libraryFailure, operation: "HKDF-SHA256") }
        }
    }
}
