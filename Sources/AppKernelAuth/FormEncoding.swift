import Foundation

/// Percent-encoding done strictly, because Foundation's `URLQueryItem` leaves `+`, `:` and `/`
/// alone (so a `+` reads back as a space, and redirect URIs go out half-encoded) and does not
/// decode `+` in form bodies and fragments.
public enum FormEncoding {
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Encodes every byte outside RFC 3986's unreserved set (space → `%20`).
    public static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `name=value&…`, each part percent-encoded.
    public static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    /// Splits `name=value&…` (a query, a fragment, a form body): `+` is a space and `%XX` is
    /// decoded as UTF-8. Returns the pairs in order; `nil` for a part whose escapes are broken.
    public static func decode(_ text: String) -> [(String, String)]? {
        var pairs: [(String, String)] = []
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decodeComponent(String(pieces[0])) else { return nil }
            guard let value = decodeComponent(pieces.count > 1 ? String(pieces[1]) : "") else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    private static func decodeComponent(_ text: String) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
