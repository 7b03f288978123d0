/// A REST API version as Salesforce writes it in paths: `v62.0` — a lower-case `v`, the major
/// number, a dot and the minor number.
///
/// ```swift
/// let version = try APIVersion("v60.0")        // major 60, minor 0
/// _ = try APIVersion("60.0")                   // throws .invalidAPIVersion("60.0", reason: "it lacks the leading \"v\" (write v60.0)")
/// ```
public struct APIVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The release number (`62` in `v62.0`).
    public let major: Int
    /// The number after the dot (always `0` so far).
    public let minor: Int

    /// A version from its numbers.
    public init(major: Int, minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Parses a version as written in a path.
    /// - Throws: ``RestClientError/invalidAPIVersion(_:reason:)`` naming the text and what is wrong
    ///   with it (`60.0` lacks its `v`; `v60` lacks `.0`; `vabc` is no version).
    public init(_ text: String) throws(RestClientError) {
        func numbers(_ body: Substring) -> (Int, Int?)? {
            let parts = body.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
                  let major = Int(parts[0]) else { return nil }
            return (major, parts.count == 2 ? Int(parts[1]) : nil)
        }
        guard !text.isEmpty else { throw .invalidAPIVersion(text, reason: "it is empty (write a version such as v62.0)") }
        guard text.first == "v" else {
            if let (major, minor) = numbers(Substring(text.drop { $0 == "V" })) {
                throw .invalidAPIVersion(text, reason: "it lacks the leading lower-case \"v\" (write v\(major).\(minor ?? 0))")
            }
            throw .invalidAPIVersion(text, reason: "a version is written v<major>.<minor>, such as v62.0")
        }
        guard let (major, minor) = numbers(text.dropFirst()) else {
            throw .invalidAPIVersion(text, reason: "a version is written v<major>.<minor>, such as v62.0")
        }
        guard let minor else { throw .invalidAPIVersion(text, reason: "it lacks the minor number (write v\(major).0)") }
        self.init(major: major, minor: minor)
    }

    /// `v62.0`, as in paths.
    public var description: String { "v\(major).\(minor)" }

    /// `62.0`, as the versions resource lists it.
    public var number: String { "\(major).\(minor)" }

    /// Ordered by major, then minor number.
    public static func < (lhs: APIVersion, rhs: APIVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
