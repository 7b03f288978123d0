/// SHA-256 (FIPS 180-4), written here because the package takes no dependencies and Linux has no
/// CryptoKit. Checked against the FIPS 180-4 examples in the tests.
///
/// ```swift
/// let digest = SHA256.hash(Array("abc".utf8))          // 32 bytes
/// var hasher = SHA256(); hasher.update(part1); hasher.update(part2); hasher.finalize()
/// ```
public struct SHA256: Sendable {
    /// The digest's length in bytes.
    public static let digestLength = 32
    /// The block length in bytes (used by HMAC).
    public static let blockLength = 64

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var buffer: [UInt8] = []
    private var totalLength: UInt64 = 0

    /// Starts a new hash.
    public init() { buffer.reserveCapacity(SHA256.blockLength) }

    /// The digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Feeds more bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            buffer.append(byte)
            if buffer.count == SHA256.blockLength {
                buffer.withUnsafeBufferPointer { compress($0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Finishes the hash and returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        let messageBits = (totalLength &+ UInt64(buffer.count)) &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % SHA256.blockLength != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: messageBits >> UInt64(shift))) }
        tail.withUnsafeBufferPointer { all in
            var offset = 0
            while offset < all.count {
                compress(UnsafeBufferPointer(rebasing: all[offset..<offset + SHA256.blockLength]))
                offset += SHA256.blockLength
            }
        }
        buffer.removeAll()
        var digest: [UInt8] = []
        digest.reserveCapacity(SHA256.digestLength)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    /// One 64-byte block of the compression function.
    private mutating func compress(_ block: UnsafeBufferPointer<UInt8>) {
        totalLength &+= UInt64(SHA256.blockLength)
        var (a, b, c, d, e, f, g, h) = state
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for t in 0..<16 {
                w[t] = UInt32(block[t * 4]) << 24 | UInt32(block[t * 4 + 1]) << 16
                    | UInt32(block[t * 4 + 2]) << 8 | UInt32(block[t * 4 + 3])
            }
            for t in 16..<64 {
                let s0 = w[t - 15].rotatedRight(7) ^ w[t - 15].rotatedRight(18) ^ (w[t - 15] >> 3)
                let s1 = w[t - 2].rotatedRight(17) ^ w[t - 2].rotatedRight(19) ^ (w[t - 2] >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            SHA256.roundConstants.withUnsafeBufferPointer { k in
                for t in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ k[t] &+ w[t]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let temp2 = s0 &+ majority
                    h = g; g = f; f = e; e = d &+ temp1
                    d = c; c = b; b = a; a = temp1 &+ temp2
                }
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }
}

extension UInt32 {
    @inline(__always) func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
