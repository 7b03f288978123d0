/// Cryptographically secure random bytes from the system's generator: libcrypto's `RAND_bytes`
/// (a DRBG the kernel seeds) on Linux, `arc4random_buf` on Apple platforms.
///
/// It fails closed: ``fill(_:)`` throws when the generator fails, and ``bytes(_:)`` stops the
/// process rather than return anything predictable (as the standard library's
/// `SystemRandomNumberGenerator` does).
///
/// ```swift
/// let salt = SecureRandom.bytes(16)
/// ```
public enum SecureRandom {
    /// `count` random bytes.
    ///
    /// Stops the process if the generator fails: a caller that can recover uses ``fill(_:)``.
    public static func bytes(_ count: Int) -> [UInt8] {
        do {
            return try generate(count)
        } catch {
            fatalError("\(error)")
        }
    }

    /// `count` random bytes, or an error if the generator failed.
    /// - Throws: ``CryptoError/Code/randomUnavailable``.
    public static func generate(_ count: Int) throws(CryptoError) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.generate needs a count of zero or more")
        var result = [UInt8](repeating: 0, count: count)
        guard result.withUnsafeMutableBytes({ LibCrypto.random($0) }) else {
            result.withUnsafeMutableBytes { LibCrypto.cleanse($0) }
            throw CryptoError(.randomUnavailable, operation: "random bytes")
        }
        return result
    }

    /// Fills `buffer` with random bytes.
    /// - Throws: ``CryptoError/Code/randomUnavailable`` if the generator failed; `buffer` is then
    ///   zeroed, never left partly random.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard LibCrypto.random(buffer) else {
            LibCrypto.cleanse(buffer)
            throw CryptoError(.randomUnavailable, operation: "random bytes")
        }
    }
}
