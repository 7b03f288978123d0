/// HMAC-SHA256 (RFC 2104), checked against RFC 4231's test cases.
///
/// ```swift
/// let mac = HMACSHA256.authenticationCode(for: message, key: key)   // 32 bytes
/// ```
public struct HMACSHA256: Sendable {
    private let inner: SHA256
    private let outer: SHA256

    /// Prepares the keyed inner and outer hashes once, so many messages can be authenticated
    /// with the same key cheaply (PBKDF2 does).
    public init(key: some Sequence<UInt8>) {
        var keyBytes = Array(key)
        if keyBytes.count > SHA256.blockLength { keyBytes = SHA256.hash(keyBytes) }
        keyBytes += [UInt8](repeating: 0, count: SHA256.blockLength - keyBytes.count)
        var inner = SHA256()
        inner.update(keyBytes.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(keyBytes.map { $0 ^ 0x5c })
        self.inner = inner
        self.outer = outer
    }

    /// The 32-byte authentication code of `message`.
    public func authenticationCode(for message: some Sequence<UInt8>) -> [UInt8] {
        var inner = self.inner
        inner.update(message)
        var outer = self.outer
        outer.update(inner.finalize())
        return outer.finalize()
    }

    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: some Sequence<UInt8>, key: some Sequence<UInt8>) -> [UInt8] {
        HMACSHA256(key: key).authenticationCode(for: message)
    }
}

/// PBKDF2 with HMAC-SHA256 as its pseudo-random function (RFC 8018 §5.2), checked against
/// RFC 7914 §11's vectors. The passcode lock stores passcodes as its output, never in clear.
public enum PBKDF2 {
    /// Derives `length` bytes from `password` and `salt` with `iterations` rounds.
    /// - Precondition: `iterations` ≥ 1 and `length` ≥ 1 (a programming error otherwise).
    public static func deriveKey(password: some Sequence<UInt8>, salt: some Sequence<UInt8>, iterations: Int,
                                 length: Int) -> [UInt8] {
        precondition(iterations >= 1 && length >= 1, "PBKDF2 needs at least one iteration and one byte of output")
        let prf = HMACSHA256(key: password)
        let salt = Array(salt)
        var derived: [UInt8] = []
        derived.reserveCapacity(length)
        var blockIndex: UInt32 = 1
        while derived.count < length {
            var u = prf.authenticationCode(for: salt + [UInt8(blockIndex >> 24), UInt8(truncatingIfNeeded: blockIndex >> 16),
                                                        UInt8(truncatingIfNeeded: blockIndex >> 8), UInt8(truncatingIfNeeded: blockIndex)])
            var block = u
            for _ in 1..<iterations {
                u = prf.authenticationCode(for: u)
                for index in block.indices { block[index] ^= u[index] }
            }
            derived += block.prefix(length - derived.count)
            blockIndex += 1
        }
        return derived
    }
}
