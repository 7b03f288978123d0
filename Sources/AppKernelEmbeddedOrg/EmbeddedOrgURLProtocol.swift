public import AppKernelAuth
import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import AppKernelCore

/// Lets `URLSession` reach embedded orgs: requests to a registered org's host are answered by the
/// org in process, through the real URL-loading stack.
///
/// ```swift
/// let transport = org.urlSessionTransport()     // a URLSessionTransport whose session knows the org
/// let client = RestClient(credentials: credentials, transport: transport)
/// ```
public final class EmbeddedOrgURLProtocol: URLProtocol {
    private static let orgs = Locked<[String: EmbeddedOrg]>([:])

    /// Routes requests for `org.baseURL`'s host to `org` (the latest registration for a host wins).
    public static func register(_ org: EmbeddedOrg) {
        guard let host = org.baseURL.host else { return }
        orgs.withLock { $0[host] = org }
    }

    private static func org(for request: URLRequest) -> EmbeddedOrg? {
        guard let host = request.url?.host else { return nil }
        return orgs.withLock { $0[host] }
    }

    /// Whether a registered org answers this request's host.
    override public class func canInit(with request: URLRequest) -> Bool { org(for: request) != nil }

    /// The request itself.
    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Answers the request from the org.
    override public func startLoading() {
        guard let org = Self.org(for: request), let url = request.url else {
            client?.urlProtocol(self, didFailWithError: URLError(.cannotFindHost))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers[name] = value }
        let outgoing = HTTPRequest(method: request.httpMethod ?? "GET", url: url, headers: headers, body: Self.body(of: request))
        do {
            let answer = try org.respond(to: outgoing)
            let response = HTTPURLResponse(url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: answer.headers)
            if let response { client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed) }
            client?.urlProtocol(self, didLoad: answer.body)
            client?.urlProtocolDidFinishLoading(self)
        } catch {
            client?.urlProtocol(self, didFailWithError: URLError(.networkConnectionLost))
        }
    }

    /// Nothing to stop: answers are immediate.
    override public func stopLoading() {}

    private static func body(of request: URLRequest) -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

extension EmbeddedOrg {
    /// A real `URLSessionTransport` whose session reaches this org through
    /// ``EmbeddedOrgURLProtocol``.
    public func urlSessionTransport() -> URLSessionTransport {
        EmbeddedOrgURLProtocol.register(self)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [EmbeddedOrgURLProtocol.self]
        configuration.httpShouldSetCookies = false
        return URLSessionTransport(configuration: configuration)
    }
}
