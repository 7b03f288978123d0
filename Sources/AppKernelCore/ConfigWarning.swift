/// A configuration value that loads but is not what the file should say: the Mobile SDK accepts it
/// and applies a default (a sync without `options` runs in overwrite mode), so AppKernel does too,
/// and says so here — where (the file, the key path, the line when known) and what was applied.
///
/// Its ``description`` reads `file[:line]: keyPath: message`, as a ``ConfigError``'s does.
public struct ConfigWarning: Sendable, Hashable, CustomStringConvertible {
    /// The file's name (`usersyncs.json`).
    public var file: String
    /// Where in the file: `syncs[0].options`.
    public var keyPath: String
    /// The line (from 1) of the value, or of the object missing the key, for JSON; `nil` where
    /// unknown.
    public var line: Int?
    /// What the file says or lacks, and what applies instead.
    public var message: String

    /// Creates a warning.
    /// - Parameters:
    ///   - file: The file's name.
    ///   - keyPath: Where in the file (`syncs[0].options`).
    ///   - line: The line, where known.
    ///   - message: What the file says or lacks, and what applies instead.
    public init(file: String, keyPath: String, line: Int? = nil, message: String) {
        self.file = file
        self.keyPath = keyPath
        self.line = line
        self.message = message
    }

    /// `file[:line]: keyPath: message`.
    public var description: String {
        "\(file)\(line.map { ":\($0)" } ?? ""): \(keyPath): \(message)"
    }
}
