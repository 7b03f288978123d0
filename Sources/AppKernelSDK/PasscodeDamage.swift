/// A passcode was set but its stored record cannot be trusted: the file is empty, garbage,
/// unreadable, a symbolic link, missing while its marker says a passcode was set, or its
/// authentication code does not match. The SDK manager fails closed on it: every user is logged
/// out and wiped (`LogoutReason.passcodeTampered`) and the app asks for a login.
public struct PasscodeDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the stored record.
    public enum Kind: String, Sendable, Hashable {
        /// The marker says a passcode was set, but the record is gone.
        case missing
        /// The file is empty.
        case empty
        /// The file is a symbolic link, a folder or anything but a regular file.
        case notARegularFile
        /// The file exists but could not be read.
        case unreadable
        /// The file is not a passcode record (truncated, garbage, an unknown version).
        case malformed
        /// The record's authentication code does not match (changed outside the app, or the
        /// install's key is gone).
        case notAuthentic
    }

    /// What is wrong.
    public var kind: Kind
    /// The file concerned.
    public var path: String
    /// Details (the C library's message, the decoder's complaint).
    public var detail: String

    /// Creates a damage report.
    public init(kind: Kind, path: String, detail: String) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    /// "the passcode record <path> cannot be trusted (<kind>: <detail>); every user is logged out
    /// and must log in again".
    public var description: String {
        "the passcode record \(path) cannot be trusted (\(kind.rawValue): \(detail)); every user is logged out and must log in again"
    }
}
