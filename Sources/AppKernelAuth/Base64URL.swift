import Foundation
public import AppKernelCore

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

extension SecureRandom {
    /// A random base64url string carrying `byteCount` bytes of entropy (``SecureRandom`` is
    /// AppKernelCore's, from the system's generator).
    public static func token(byteCount: Int = 32) -> String { Base64URL.encode(bytes(byteCount)) }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
