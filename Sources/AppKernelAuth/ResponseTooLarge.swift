public import Foundation

/// An answer's body was larger than its limit, and was refused: before it was read, when its
/// `Content-Length` announced too much, or the moment the bytes that arrived passed the limit.
/// The connection was closed; nothing of the body was kept.
///
/// ``SocketTransport`` and ``URLSessionTransport`` throw it; ``TokenClient`` and
/// ``LoginSession`` surface it as ``OAuthError/responseTooLarge(_:)``, the REST client as
/// `RestClientError.responseTooLarge`.
public struct ResponseTooLarge: Error, Sendable, Hashable, CustomStringConvertible {
    /// What showed that the body is too large.
    public enum Evidence: Sendable, Hashable {
        /// The `Content-Length` header announced this many bytes.
        case announced(Int64)
        /// At least this many bytes arrived (after decompression, for a transport that decompresses).
        case received(Int)
    }

    /// The request's method.
    public var method: String
    /// Where the request went.
    public var url: URL
    /// The limit, in bytes.
    public var limit: Int
    /// Where a person changes the limit (`RestClient(maximumResponseBytes:)`, …).
    public var setting: String
    /// What showed that the body is too large.
    public var evidence: Evidence

    /// Creates the error.
    public init(method: String, url: URL, limit: Int, setting: String, evidence: Evidence) {
        self.method = method
        self.url = url
        self.limit = limit
        self.setting = setting
        self.evidence = evidence
    }

    /// The host that sent the answer.
    public var host: String { url.host ?? url.absoluteString }

    /// What happened, where, and which setting raises the limit.
    public var description: String {
        let port = url.port.map { ":\($0)" } ?? ""
        let place = "\(url.scheme ?? "http")://\(host)\(port)\(url.path)"
        let why = switch evidence {
        case .announced(let bytes): "its Content-Length announced \(bytes) bytes, so it was refused before it was read"
        case .received(let bytes): "\(bytes) bytes had arrived when the transfer was stopped"
        }
        return "the answer to \(method) \(place) is larger than the response body limit of \(limit) bytes (\(Self.readable(limit))): "
            + "\(why). If such answers are expected, raise the limit with \(setting)."
    }

    private static func readable(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }
}
