/// Text that is not JSON, from ``JSONValue/init(jsonData:)``: where reading stopped.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offset, in bytes from the start of the text, of the first byte that cannot be read as
    /// JSON (the text's length when it ends too early).
    public var offset: Int

    /// Creates an error.
    /// - Parameter offset: Where reading stopped, in bytes from the start of the text.
    public init(offset: Int) {
        self.offset = offset
    }

    /// `not JSON: stops at byte 12`.
    public var description: String { "not JSON: stops at byte \(offset)" }
}
