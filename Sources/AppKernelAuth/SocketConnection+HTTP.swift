import Foundation

/// HTTP/1.1 on a ``SocketConnection`` (RFC 9112): an answer's head, then its body framed by
/// `Content-Length`, chunked, or the end of the connection — counted against its limit as it
/// arrives, and refused the moment it passes it.
extension SocketConnection {
    /// An answer's status line and header fields.
    struct ResponseHead {
        /// `1` for HTTP/1.1, `0` for HTTP/1.0.
        var minorVersion: Int
        var status: Int
        /// Field names lower-cased; a repeated field's values joined with `, `.
        var fields: [String: String]
    }

    /// How an answer's body ends.
    enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    /// Reads an answer to `method` whose body may hold `limit.bytes`.
    /// - Returns: The answer, and whether the connection can carry another request.
    func readResponse(method: String, url: URL, limit: HTTPRequest.ResponseLimit, headLimit: Int) throws(TransferFailure) -> (HTTPResponse, reusable: Bool) {
        var head = try readHead(limit: headLimit)
        while (100..<200).contains(head.status) && head.status != 101 { head = try readHead(limit: headLimit) }   // interim answers
        if let coding = head.fields["content-encoding"], coding.split(separator: ",").contains(where: { $0.trimmed.lowercased() != "identity" }) {
            throw .failed(.unsupportedContentEncoding, "the server sent its answer in the content coding '\(coding)' although the request "
                + "accepted only identity (RFC 9110 §12.5.3); it was refused unread. Configure the server not to compress this answer")
        }
        let framing = try Self.framing(of: head, method: method)
        var body = BodyCollector(limit: limit, method: method, url: url)
        switch framing {
        case .none:
            break
        case .length(let length):
            if length > limit.bytes {
                throw .tooLarge(ResponseTooLarge(method: method, url: url, limit: limit.bytes, setting: limit.setting, evidence: .announced(Int64(length))))
            }
            body.reserve(length)
            try take(length, into: &body)
        case .chunked:
            try readChunks(into: &body, headLimit: headLimit)
        case .untilClose:
            while true {
                if start < buffer.count {
                    try body.append(buffer[start...])
                    start = buffer.count
                }
                guard try receive() > 0 else { break }
            }
        }
        let closes = head.fields["connection"]?.split(separator: ",").contains { $0.trimmed.lowercased() == "close" } ?? false
        let reusable = head.minorVersion >= 1 && !closes && framing != .untilClose && head.status != 101 && start == buffer.count
        return (HTTPResponse(status: head.status, headers: head.fields, body: body.finish()), reusable)
    }

    /// The status line and header fields, up to the empty line.
    private func readHead(limit: Int) throws(TransferFailure) -> ResponseHead {
        var lines: [String] = []
        var size = 0
        while true {
            let line = try readLine(limit: limit - size, what: "header section")
            size += line.count + 2
            if line.isEmpty {
                if lines.isEmpty { continue }        // a stray empty line before the status line (RFC 9112 §2.2)
                break
            }
            lines.append(line)
        }
        let status = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let minor = Int(status[0].dropFirst(7)),
              status[1].count == 3, let code = Int(status[1]), code >= 100 else {
            throw .failed(.malformedResponse, "the answer does not begin with an HTTP/1.x status line: \(lines[0].prefix(80).debugDescription)")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }), line.first != " ", line.first != "\t" else {
                throw .failed(.malformedResponse, "the header line \(line.prefix(80).debugDescription) is not a field (name: value)")
            }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].trimmed)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        return ResponseHead(minorVersion: minor, status: code, fields: fields)
    }

    /// How the body of an answer with `head`, to `method`, ends (RFC 9112 §6.3).
    static func framing(of head: ResponseHead, method: String) throws(TransferFailure) -> Framing {
        if method == "HEAD" || (100..<200).contains(head.status) || head.status == 204 || head.status == 304 { return .none }
        if let encoding = head.fields["transfer-encoding"] {
            let codings = encoding.split(separator: ",").map { $0.trimmed.lowercased() }
            guard codings == ["chunked"] else {
                throw .failed(.unsupportedContentEncoding, "the answer's Transfer-Encoding '\(encoding)' is not chunked alone; "
                    + "the request accepted no other coding (RFC 9112 §6.1)")
            }
            return .chunked
        }
        if let length = head.fields["content-length"] {
            let values = Set(length.split(separator: ",").map { String($0.trimmed) })
            guard values.count == 1, let value = values.first, !value.isEmpty, value.count <= 18, value.allSatisfy(\.isASCIIDigit), let count = Int(value) else {
                throw .failed(.malformedResponse, "the answer's Content-Length \(length.debugDescription) is not one decimal number")
            }
            return .length(count)
        }
        return .untilClose
    }

    /// Moves exactly `count` bytes of body into `body`.
    private func take(_ count: Int, into body: inout BodyCollector) throws(TransferFailure) {
        var left = count
        while left > 0 {
            if start == buffer.count {
                guard try receive() > 0 else {
                    throw .failed(.connectionClosed, "the server closed the connection \(count - left) bytes into a body of \(count)")
                }
            }
            let piece = min(left, buffer.count - start)
            try body.append(buffer[start..<start + piece])
            start += piece
            left -= piece
        }
    }

    /// A chunked body (RFC 9112 §7.1): sizes in hexadecimal, extensions ignored, trailers dropped.
    private func readChunks(into body: inout BodyCollector, headLimit: Int) throws(TransferFailure) {
        while true {
            let line = try readLine(limit: 4096, what: "chunk size line")
            let digits = line.prefix { $0 != ";" }.trimmed
            guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16), size >= 0 else {
                throw .failed(.malformedResponse, "the chunk size line \(line.prefix(40).debugDescription) is not a hexadecimal size")
            }
            if size == 0 {
                var trailers = 0
                while case let trailer = try readLine(limit: headLimit - trailers, what: "trailer section"), !trailer.isEmpty {
                    trailers += trailer.count + 2
                }
                return
            }
            try take(size, into: &body)
            guard try readLine(limit: 2, what: "chunk end").isEmpty else {
                throw .failed(.malformedResponse, "a chunk of \(size) bytes is not followed by CRLF")
            }
        }
    }

    /// One line without its line break (CRLF, or a bare LF as RFC 9112 §2.2 allows a reader to
    /// accept), at most `limit` bytes.
    private func readLine(limit: Int, what: String) throws(TransferFailure) -> String {
        var searched = 0                     // bytes after `start` known to hold no line break
        while true {
            if let end = buffer[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[start..<end]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                start = end + 1
                guard line.count <= limit else { throw Self.tooLong(what, limit: limit) }
                return String(decoding: line, as: UTF8.self)
            }
            searched = buffer.count - start       // `receive()` may move the unconsumed bytes to the front
            guard buffer.count - start <= limit else { throw Self.tooLong(what, limit: limit) }
            guard try receive() > 0 else {
                throw .failed(.connectionClosed, receivedAny ? "the server closed the connection in the middle of the answer's \(what)"
                                                             : "the server closed the connection without answering")
            }
        }
    }

    private static func tooLong(_ what: String, limit: Int) -> TransferFailure {
        what == "header section" || what == "trailer section"
            ? .failed(.headerTooLarge, "the answer's \(what) is larger than SocketTransport.maximumHeaderBytes (\(SocketTransport.maximumHeaderBytes) bytes); it was refused")
            : .failed(.malformedResponse, "the answer's \(what) is longer than \(limit) bytes")
    }
}

/// An answer's body as it arrives: counted against its limit before each piece is kept, in
/// segments (no doubling copies while it grows), joined once at the end.
struct BodyCollector {
    let limit: HTTPRequest.ResponseLimit
    let method: String
    let url: URL
    private var segments: [Data] = []
    private var current = Data()
    private var reserved = false
    private(set) var count = 0

    /// The size of a segment while the body's length is unknown.
    static let segmentSize = 1 << 20

    init(limit: HTTPRequest.ResponseLimit, method: String, url: URL) {
        self.limit = limit
        self.method = method
        self.url = url
    }

    /// Reserves room for an announced body (already checked against the limit).
    mutating func reserve(_ bytes: Int) {
        current.reserveCapacity(bytes)
        reserved = true
    }

    /// Keeps `bytes`, or refuses the body when they take it past the limit.
    mutating func append(_ bytes: ArraySlice<UInt8>) throws(TransferFailure) {
        guard count + bytes.count <= limit.bytes else {
            throw .tooLarge(ResponseTooLarge(method: method, url: url, limit: limit.bytes, setting: limit.setting, evidence: .received(count + bytes.count)))
        }
        count += bytes.count
        if !reserved, !current.isEmpty, current.count + bytes.count > Self.segmentSize {
            segments.append(current)
            current = Data(capacity: Self.segmentSize)
        }
        current.append(contentsOf: bytes)
    }

    /// The whole body.
    mutating func finish() -> Data {
        guard !segments.isEmpty else { return current }
        var whole = Data(capacity: count)
        for segment in segments { whole.append(segment) }
        whole.append(current)
        segments = []
        current = Data()
        return whole
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmed: Substring {
        let text = Substring(self)
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return text[first...last]
    }
}

extension Character {
    /// `0`–`9`.
    var isASCIIDigit: Bool { isASCII && isNumber }
}
