import Foundation

/// Why ``SocketTransport`` got no usable answer: the request could not be sent, the server could
/// not be reached or trusted, or what it sent is not an HTTP answer this client accepts. The
/// description names the request, the host and what to do.
///
/// A body over its limit is ``ResponseTooLarge``; a deadline is ``OAuthError/timedOut(_:)``, a
/// cancelled task ``OAuthError/cancelled`` — as from every transport.
public struct HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The request cannot be sent as it is: a scheme other than `http`/`https`, no host, or
        /// a header with a line break in it.
        case invalidRequest
        /// The host name did not resolve (`getaddrinfo`).
        case nameResolution
        /// No address of the host accepted a connection.
        case connectionFailed
        /// The server closed the connection before the answer was complete.
        case connectionClosed
        /// The TLS handshake failed for a reason other than the certificate.
        case tlsFailed
        /// The server's certificate is not trusted (unknown issuer, expired, self-signed) or is
        /// not for the host the request names. Nothing was sent.
        case certificateRejected
        /// The answer is not well-formed HTTP/1.1 (its status line, a header, a chunk).
        case malformedResponse
        /// The answer's header section is larger than ``SocketTransport/maximumHeaderBytes``.
        case headerTooLarge
        /// The body is in a content coding (`gzip`, `br`, …) the transport did not ask for: it
        /// asks for `identity` only, and a server must not send a coding the client did not
        /// accept (RFC 9110 §12.5.3). Decoding would need a decompressor (zlib) the package does
        /// not link, and a decompressed size the server does not announce.
        case unsupportedContentEncoding
    }

    /// What kind of failure it is.
    public var code: Code
    /// The request: `GET https://host/path`.
    public var request: String
    /// What went wrong, and what to do.
    public var reason: String

    /// Creates an error.
    public init(code: Code, request: String, reason: String) {
        self.code = code
        self.request = request
        self.reason = reason
    }

    /// The request's method and URL, without its query (which may hold a token).
    static func name(of request: HTTPRequest) -> String {
        let url = request.url
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(request.method) \(url.scheme ?? "?")://\(url.host ?? "")\(port)\(url.path)"
    }

    /// "GET https://host/path: <reason>".
    public var description: String { "\(request): \(reason)" }
}
