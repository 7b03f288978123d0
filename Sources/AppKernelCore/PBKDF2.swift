/// PBKDF2 with HMAC-SHA256 as its pseudo-random function (RFC 8018 §5.2), from the system's
/// libcrypto (`PKCS5_PBKDF2_HMAC`) on Linux and CommonCrypto on Apple platforms; checked against
/// RFC 7914 §11's vectors. The passcode lock stores passcodes as its output, never in clear.
public enum PBKDF2 {
    /// Derives `length` bytes from `password` and `salt` with `iterations` rounds.
    /// - Precondition: `iterations` in 1…`Int32.max` and `length` ≥ 1 (a programming error otherwise).
    public static func deriveKey(password: some Sequence<UInt8>, salt: some Sequence<UInt8>, iterations: Int,
                                 length: Int) -> [UInt8] {
        precondition(iterations >= 1 && iterations <= Int(Int32.max) && length >= 1,
                     "PBKDF2 needs 1…Int32.max iterations and at least one byte of output")
        let password = Array(password), salt = Array(salt)
        var derived = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBytes { password in
            salt.withUnsafeBytes { salt in
                derived.withUnsafeMutableBytes { LibCrypto.pbkdf2(password: password, salt: salt, iterations: iterations, output: $0) }
            }
        }
        guard ok else { fatalError("\(CryptoError(.libraryFailure, operation: "PBKDF2-HMAC-SHA256"))") }
        return derived
    }
}
