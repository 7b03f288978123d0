import Foundation

/// How important a log line is.
public enum LogLevel: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Detail for debugging.
    case debug
    /// Normal operation.
    case info
    /// Something worth noticing.
    case notice
    /// Something went wrong but the app goes on.
    case warning
    /// Something failed.
    case error

    /// Orders by importance.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The level's name, upper-cased.
    public var description: String {
        switch self {
        case .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARNING"
        case .error: "ERROR"
        }
    }
}

/// Where log lines go. The package takes no dependencies, so this is a tiny protocol instead of
/// swift-log; bridging is one type (see the README): implement `log` by forwarding to a
/// `Logging.Logger`.
public protocol LogHandler: Sendable {
    /// Writes one line.
    func log(_ level: LogLevel, _ message: String)
}

/// Writes lines at or above a level to standard error as `appkernel: LEVEL message`.
public struct StandardErrorLogHandler: LogHandler {
    /// The lowest level written.
    public var minimumLevel: LogLevel

    /// Creates a handler.
    public init(minimumLevel: LogLevel = .info) { self.minimumLevel = minimumLevel }

    /// Writes the line if its level is high enough.
    public func log(_ level: LogLevel, _ message: String) {
        guard level >= minimumLevel else { return }
        FileHandle.standardError.write(Data("appkernel: \(level) \(message)\n".utf8))
    }
}
