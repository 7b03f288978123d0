/// HMAC-SHA256 (RFC 2104), from the system's libcrypto on Linux and CryptoKit on Apple
/// platforms; checked against RFC 4231's test cases.
///
/// ```swift
/// let mac = HMACSHA256.authenticationCode(for: message, key: key)   // 32 bytes
/// guard HMACSHA256(key: key).isValidAuthenticationCode(mac, for: message) else { … }
/// ```
public struct HMACSHA256: Sendable {
    /// The code's length in bytes.
    public static let byteCount = 32

    private let key: [UInt8]

    /// Keeps `key` for the messages to come.
    public init(key: some Sequence<UInt8>) { self.key = Array(key) }

    /// The 32-byte authentication code of `message`.
    public func authenticationCode(for message: some Sequence<UInt8>) -> [UInt8] {
        let message = Array(message)
        var code = [UInt8](repeating: 0, count: Self.byteCount)
        let ok = key.withUnsafeBytes { key in
            message.withUnsafeBytes { data in code.withUnsafeMutableBytes { LibCrypto.hmac(key: key, data: data, output: $0) } }
        }
        guard ok else { fatalError("\(CryptoError(.libraryFailure, operation: "HMAC-SHA256"))") }
        return code
    }

    /// Whether `code` is the authentication code of `message`, compared in constant time (a
    /// wrong code's first differing byte does not show in the time taken).
    public func isValidAuthenticationCode(_ code: some Sequence<UInt8>, for message: some Sequence<UInt8>) -> Bool {
        let expected = authenticationCode(for: message)
        let code = Array(code)
        return expected.withUnsafeBytes { left in code.withUnsafeBytes { LibCrypto.constantTimeEqual(left, $0) } }
    }

    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: some Sequence<UInt8>, key: some Sequence<UInt8>) -> [UInt8] {
        HMACSHA256(key: key).authenticationCode(for: message)
    }
}
