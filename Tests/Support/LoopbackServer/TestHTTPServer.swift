public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 written with the C library's sockets, for tests: each
/// connection gets its own thread, one request per connection (`Connection: close`), and the
/// handler's answer — optionally trickled a byte at a time, to test deadlines.
///
/// `@unchecked Sendable`: `listener` and `port` are set once in `init`; `stopped` is atomic.
public final class TestHTTPServer: @unchecked Sendable {
    /// A request as the handler sees it.
    public struct Request: Sendable {
        /// `GET`, `POST`, …
        public var method: String
        /// The request target (`/path?query`).
        public var target: String
        /// The path, without the query.
        public var path: String
        /// The query's parameters (the last of each name).
        public var query: [String: String]
        /// Header fields, names lower-cased.
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// The body's form parameters (`application/x-www-form-urlencoded`).
        public var form: [String: String] { TestHTTPServer.decodeForm(String(decoding: body, as: UTF8.self)) }
    }

    /// An answer.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields.
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// When set, the answer is written one byte at a time with this pause between bytes.
        public var trickle: Duration?

        /// Creates an answer.
        public init(status: Int, headers: [String: String] = [:], body: Data = Data(), trickle: Duration? = nil) {
            self.status = status
            self.headers = headers
            self.body = body
            self.trickle = trickle
        }

        /// An HTML page.
        public static func html(_ status: Int, _ html: String, headers: [String: String] = [:]) -> Response {
            Response(status: status, headers: headers.merging(["Content-Type": "text/html; charset=utf-8"]) { old, _ in old }, body: Data(html.utf8))
        }

        /// A JSON answer.
        public static func json(_ status: Int, _ object: Any, headers: [String: String] = [:]) -> Response {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return Response(status: status, headers: headers.merging(["Content-Type": "application/json"]) { old, _ in old }, body: data)
        }

        /// A 302 to `location`.
        public static func redirect(_ location: String) -> Response { Response(status: 302, headers: ["Location": location]) }
    }

    /// The port it listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    /// When each connection opened and closed (labelled with its request's path), stamped on the
    /// server's threads.
    public let log = ConnectionLog()

    private init(listener: Int32, port: UInt16) {
        self.listener = listener
        self.port = port
    }

    /// Why the server could not start.
    public struct StartError: Error, CustomStringConvertible {
        /// What failed.
        public var description: String
    }

    /// Starts a server on 127.0.0.1:`port` (0: an ephemeral port) answering with `handler`.
    public static func start(port: UInt16 = 0, handler: @escaping @Sendable (Request) -> Response) throws -> TestHTTPServer {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw StartError(description: "socket: \(errno)") }
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            let code = errno
            close(descriptor)
            throw StartError(description: "bind/listen: \(String(cString: strerror(code)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let server = TestHTTPServer(listener: descriptor, port: UInt16(bigEndian: address.sin_port))
        let thread = Thread { server.acceptLoop(handler) }
        thread.name = "TestHTTPServer accept"
        thread.start()
        return server
    }

    /// Stops accepting connections (those being served finish).
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func acceptLoop(_ handler: @escaping @Sendable (Request) -> Response) {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let number = log.open()
            let thread = Thread { [log] in
                Self.serve(connection, handler) { log.label(number, as: $0) }
                log.close(number)
            }
            thread.start()
        }
    }

    private static func serve(_ connection: Int32, _ handler: @Sendable (Request) -> Response, labelled: (String) -> Void) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func readMore() -> Bool {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, 4096, 0) }
            guard count > 0 else { return false }
            bytes += buffer[0..<count]
            return true
        }
        var headEnd: Int?
        while headEnd == nil {
            guard readMore() else { return }
            headEnd = Self.find([13, 10, 13, 10], in: bytes).map { $0 + 4 }
        }
        guard let headEnd else { return }
        let head = String(decoding: bytes[0..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while bytes.count - headEnd < length { guard readMore() else { return } }
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let request = Request(method: String(requestLine[0]), target: target, path: String(parts[0]),
                              query: parts.count > 1 ? decodeForm(String(parts[1])) : [:], headers: headers,
                              body: Data(bytes[headEnd..<(headEnd + length)]))
        labelled(request.path)
        let response = handler(request)
        var text = "HTTP/1.1 \(response.status) \(response.status < 400 ? "OK" : "Error")\r\n"
        var responseHeaders = response.headers
        responseHeaders["Content-Length"] = "\(response.body.count)"
        responseHeaders["Connection"] = "close"
        for (name, value) in responseHeaders.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        let output = Array(text.utf8) + Array(response.body)
        if let trickle = response.trickle {
            for byte in output {
                guard send(connection, [byte], 1, Int32(MSG_NOSIGNAL)) == 1 else { return }   // no SIGPIPE once the client left
                Thread.sleep(forTimeInterval: Double(trickle.components.seconds) + Double(trickle.components.attoseconds) / 1e18)
            }
        } else {
            var offset = 0
            while offset < output.count {
                let written = output.withUnsafeBytes { send(connection, $0.baseAddress! + offset, output.count - offset, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle { return index }
        return nil
    }

    /// Decodes `a=1&b=2` (`+` is a space, `%XX` UTF-8), keeping the last of each name.
    public static func decodeForm(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String { String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part) }
            result[decode(pieces[0])] = pieces.count > 1 ? decode(pieces[1]) : ""
        }
        return result
    }

    /// Encodes every character outside RFC 3986's unreserved set.
    public static func encode(_ parameters: [(String, String)]) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return parameters.map { "\($0.0.addingPercentEncoding(withAllowedCharacters: unreserved)!)=\($0.1.addingPercentEncoding(withAllowedCharacters: unreserved)!)" }
            .joined(separator: "&")
    }
}
