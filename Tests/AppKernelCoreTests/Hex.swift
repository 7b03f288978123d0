extension Sequence<UInt8> {
    /// Lower-case hexadecimal, to compare with published vectors.
    var hex: String { map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}

extension Array<UInt8> {
    /// The bytes of a hexadecimal string (whitespace ignored); traps on a bad digit (test data only).
    init(hex: String) {
        let digits = hex.filter { !$0.isWhitespace }.map { UInt8(String($0), radix: 16)! }
        self = stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
