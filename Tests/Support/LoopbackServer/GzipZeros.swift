import Foundation

/// A gzip member (RFC 1952) whose deflate stream (RFC 1951, one block of fixed Huffman codes)
/// is a literal zero followed by back-references of 258 bytes at distance 1: 13 bits per 258
/// zeros. Its CRC-32 is computed by raising the one-zero-byte step of the CRC register to a
/// power, so a gigabyte costs no gigabyte of work.
enum GzipZeros {
    /// Writes the member in pieces of about 64 KiB; stops early when `output` returns `false`.
    static func write(expandedBytes: Int, to output: ([UInt8]) -> Bool) -> Bool {
        let repeats = max(0, (expandedBytes - 1) / 258)
        let total = 1 + repeats * 258
        var bytes: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        var bits: UInt64 = 0
        var count = 0
        func put(_ value: UInt64, _ width: Int) {
            bits |= value << UInt64(count)
            count += width
            while count >= 8 { bytes.append(UInt8(truncatingIfNeeded: bits)); bits >>= 8; count -= 8 }
        }
        put(0b011, 3)        // BFINAL = 1, BTYPE = 01 (fixed Huffman), least significant bit first
        put(0x0C, 8)         // literal 0: code 0x30, written most significant bit first
        for _ in 0..<repeats {
            put(0xA3, 13)    // length 258: code 285 = 0xC5, reversed; then distance code 0 in five zero bits
            if bytes.count >= 64 * 1024 {
                guard output(bytes) else { return false }
                bytes.removeAll(keepingCapacity: true)
            }
        }
        put(0, 7)            // end of block: code 256
        if count > 0 { put(0, 8 - count) }
        let crc = crc32(zeros: total)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: UInt32(truncatingIfNeeded: total) >> UInt32(shift))) }
        return output(bytes)
    }

    /// The CRC-32 of `length` zero bytes.
    static func crc32(zeros length: Int) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        // The register's step for one zero byte is linear over GF(2): a 32×32 matrix, by columns.
        func apply(_ matrix: [UInt32], _ vector: UInt32) -> UInt32 {
            var result: UInt32 = 0
            for bit in 0..<32 where vector & (1 << UInt32(bit)) != 0 { result ^= matrix[bit] }
            return result
        }
        var step = (0..<32).map { bit -> UInt32 in let value = UInt32(1) << UInt32(bit); return table[Int(value & 0xFF)] ^ (value >> 8) }
        var power = (0..<32).map { UInt32(1) << UInt32($0) }
        var left = length
        while left > 0 {
            if left & 1 == 1 { power = power.map { apply(step, $0) } }
            step = step.map { apply(step, $0) }
            left >>= 1
        }
        return apply(power, 0xFFFF_FFFF) ^ 0xFFFF_FFFF
    }
}
