import Foundation

/// A request as HTTP/1.1 puts it on the wire (RFC 9112 §3).
extension HTTPRequest {
    /// Where a request goes: the connection's key and what the request line and `Host` say.
    struct Destination {
        var isTLS: Bool
        /// The host as `getaddrinfo` and TLS take it (an IPv6 literal without brackets).
        var host: String
        var port: Int
        /// `scheme://host:port`: which pooled connections may carry the request.
        var key: String { "\(isTLS ? "https" : "http")://\(host):\(port)" }
    }

    /// The scheme, host and port of ``url``.
    /// - Throws: ``HTTPTransportError/Code/invalidRequest`` for a scheme other than `http` and
    ///   `https`, or no host.
    func destination() throws(TransferFailure) -> Destination {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .failed(.invalidRequest, "only http and https URLs can be sent, not \((url.scheme ?? "a URL without a scheme").debugDescription)")
        }
        var host = url.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw .failed(.invalidRequest, "the URL names no host") }
        let isTLS = scheme == "https"
        return Destination(isTLS: isTLS, host: host, port: url.port ?? (isTLS ? 443 : 80))
    }

    /// The request line, the header fields and the body, ready to send. The transport sets
    /// `Host`, `Content-Length`, `Connection` and `Accept-Encoding: identity` itself.
    /// - Throws: ``HTTPTransportError/Code/invalidRequest`` for a header whose name is not a
    ///   token or whose value holds a line break (header injection).
    func wire(to destination: Destination) throws(TransferFailure) -> [UInt8] {
        guard method.allSatisfy(\.isTokenCharacter), !method.isEmpty else { throw .failed(.invalidRequest, "the method \(method.debugDescription) is not a token") }
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        guard !target.utf8.contains(where: { $0 == 32 || $0 == 13 || $0 == 10 }) else {
            throw .failed(.invalidRequest, "the URL's path or query holds a space or a line break")
        }
        let hostField = destination.host.contains(":") ? "[\(destination.host)]" : destination.host
        let defaultPort = destination.isTLS ? 443 : 80
        var lines = ["\(method) \(target) HTTP/1.1", "Host: \(hostField)\(destination.port == defaultPort ? "" : ":\(destination.port)")"]
        let reserved: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "accept-encoding"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where !reserved.contains(name.lowercased()) {
            guard !name.isEmpty, name.allSatisfy(\.isTokenCharacter), !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw .failed(.invalidRequest, "the header \(name.debugDescription) has a name that is not a token or a value with a line break")
            }
            lines.append("\(name): \(value)")
        }
        if !headers.keys.contains(where: { $0.lowercased() == "user-agent" }) { lines.append("User-Agent: AppKernel") }
        lines.append("Accept-Encoding: identity")
        if let body {
            lines.append("Content-Length: \(body.count)")
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            lines.append("Content-Length: 0")
        }
        var bytes = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        if let body { bytes.append(contentsOf: body) }
        return bytes
    }

    /// Whether sending the request twice does what sending it once does (RFC 9110 §9.2.2): such
    /// a request is sent again when a pooled connection turns out to be closed.
    var isIdempotent: Bool { ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(method) }
}

extension Character {
    /// A character of an HTTP token (RFC 9110 §5.6.2).
    var isTokenCharacter: Bool {
        guard isASCII, let value = asciiValue, value > 32, value < 127 else { return false }
        return !"\"(),/:;<=>?@[\\]{}".contains(self)
    }
}
