import Foundation

/// base64url without padding (RFC 4648 §5), as PKCE and JWTs use it.
public enum Base64URL {
    /// Encodes `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes `text`; `nil` if it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}

/// Cryptographically secure random bytes, from the system's generator.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A random base64url string carrying `byteCount` bytes of entropy.
    public static func token(byteCount: Int = 32) -> String { Base64URL.encode(bytes(byteCount)) }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
