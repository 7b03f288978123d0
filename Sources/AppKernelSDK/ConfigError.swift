/// A configuration file that cannot be used: which file, where in it (key path, and the line
/// and column for malformed JSON), and what is wrong. Nothing from the file was registered.
///
/// ```
/// usersyncs.json: syncs[2].target.type: unknown target type 'soqll'; expected one of mru, soql,
/// sosl, refresh, parent_children, custom, metadata, layout, briefcase
/// ```
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The file does not exist or cannot be read.
        case unreadableFile
        /// The file is not well-formed JSON (or property list).
        case malformed
        /// A required key is absent.
        case missingKey
        /// A value has the wrong type.
        case wrongType
        /// A value has the right type but cannot be used (an empty key, a bad URL).
        case invalidValue
        /// A value is not one of the allowed ones (index type, sync type, target type, merge mode).
        case unknownValue
        /// A soup, index or sync name appears twice.
        case duplicateName
        /// A sync names a soup that does not exist.
        case unknownSoup
    }

    /// What kind of problem it is.
    public var code: Code
    /// The file's name (`bootconfig.json`).
    public var file: String
    /// Where in the file: `syncs[2].target.type`; empty for the whole file.
    public var keyPath: String
    /// The line, for malformed JSON and where known.
    public var line: Int?
    /// The column, for malformed JSON.
    public var column: Int?
    /// What is wrong, and what is expected.
    public var reason: String

    /// Creates an error.
    public init(code: Code, file: String, keyPath: String, line: Int? = nil, column: Int? = nil, reason: String) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `file[:line[:column]]: keyPath: reason`.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return keyPath.isEmpty ? "\(place): \(reason)" : "\(place): \(keyPath): \(reason)"
    }
}
