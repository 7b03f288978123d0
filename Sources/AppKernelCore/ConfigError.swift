/// A configuration file that cannot be used: what is wrong, where (the file, the line and column,
/// the key path) and what is expected instead. Whoever read the file kept nothing from it.
///
/// Its ``description`` reads `file[:line[:column]]: keyPath: reason`:
///
/// ```
/// usersyncs.json:3:23: syncs[0].target.type: unknown target type 'soqll'; expected one of mru,
/// soql, sosl, refresh, parent_children, custom, metadata, layout, briefcase
/// ```
///
/// Errors from JSON carry the line and column (``ConfigParser`` tracks both). Errors from a
/// property list carry neither — Foundation's property-list parser reports no positions — so they
/// name the file and the key path only, as do errors found after parsing (a class that is not
/// registered, a value checked once the file was read).
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The file does not exist or cannot be read.
        case unreadableFile
        /// The file is not well-formed JSON (or not a property list).
        case malformed
        /// A required key is absent.
        case missingKey
        /// A value has the wrong type.
        case wrongType
        /// A value has the right type but cannot be used (an empty name, a bad URL).
        case invalidValue
        /// An object has a key that is not one of the allowed ones (a typo must not pass silently).
        case unknownKey
        /// A value is not one of the allowed ones (index type, sync type, target type, merge mode).
        case unknownValue
        /// A name (a key, a soup, a sync, an application, a service) appears twice.
        case duplicateName
        /// A sync names a soup that does not exist.
        case unknownSoup
        /// A name refers to something that is not defined or not registered (a launcher that is
        /// not among the applications, a class or a dependency nobody registered).
        case unknownReference
        /// Services depend on each other in a cycle.
        case dependencyCycle
    }

    /// What kind of problem it is.
    public var code: Code
    /// The file's name (`bootconfig.json`).
    public var file: String
    /// Where in the file: `syncs[2].target.type`; empty for the whole file.
    public var keyPath: String
    /// The line (from 1) of the value or text at fault, for JSON; `nil` for property lists, whose
    /// parser gives no positions, and for problems found after parsing.
    public var line: Int?
    /// The column (from 1, in characters) on ``line``; `nil` whenever ``line`` is.
    public var column: Int?
    /// What is wrong, and what is expected instead.
    public var reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of problem it is.
    ///   - file: The file's name.
    ///   - keyPath: Where in the file (`syncs[2].target.type`); empty for the whole file.
    ///   - line: The line, where known (JSON only).
    ///   - column: The column on `line`, where known.
    ///   - reason: What is wrong and what is expected instead.
    public init(code: Code, file: String, keyPath: String, line: Int? = nil, column: Int? = nil, reason: String) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `file[:line[:column]]: keyPath: reason` — the position is left out where unknown (property
    /// lists, checks made after parsing), the key path where it is the whole file.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return keyPath.isEmpty ? "\(place): \(reason)" : "\(place): \(keyPath): \(reason)"
    }
}
