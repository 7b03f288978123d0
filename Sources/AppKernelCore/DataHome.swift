public import Foundation

/// Where an app keeps what must survive a relaunch — its users' credentials, the passcode record,
/// its stores: `$XDG_DATA_HOME/<app>`, or `~/.local/share/<app>` when `XDG_DATA_HOME` is unset,
/// empty or relative (the XDG Base Directory specification's rule and default).
///
/// Making one checks it the way ssh's `StrictModes` checks a home folder, and refuses what fails
/// (see ``PrivateDirectory``): the data home and every folder in it is a real folder (never a
/// symbolic link, which is never followed), owned by the user and not writable by anyone else;
/// the folders above it belong to the user or root and others cannot write to them (unless
/// sticky). What is missing is created `0700`. Nothing found is ever `chmod`ed.
///
/// ```swift
/// let home = try DataHome.forApp("AccountsApp")          // ~/.local/share/AccountsApp, checked
/// let accounts = try home.directory("accounts")          // created 0700, or checked
/// ```
public struct DataHome: Sendable, Hashable, CustomStringConvertible {
    /// The data home's folder.
    public let url: URL

    /// The data home at `url`, created `0700` if missing, checked with the folders above it.
    /// - Throws: ``DataHomeError`` naming the folder that was refused and the fix.
    public init(url: URL) throws(DataHomeError) {
        self.url = url.standardizedFileURL
        try PrivateDirectory.create(self.url)
    }

    /// The app's data home: `$XDG_DATA_HOME/<app>` or `$HOME/.local/share/<app>`, created and
    /// checked as ``init(url:)`` does.
    /// - Parameters:
    ///   - app: The app's folder name (no `/`, not `.` or `..`).
    ///   - environment: Where `XDG_DATA_HOME` and `HOME` are read from.
    /// - Throws: ``DataHomeError``: ``DataHomeError/Problem/noDataHome`` when neither variable is
    ///   an absolute path, or why a folder was refused.
    public static func forApp(_ app: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DataHomeError) -> DataHome {
        try DataHome(url: location(forApp: app, environment: environment))
    }

    /// Where ``forApp(_:environment:)`` puts the app's data home, without creating or checking it.
    /// - Throws: ``DataHomeError`` when there is no data home or `app` cannot name a folder.
    public static func location(forApp app: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(DataHomeError) -> URL {
        guard !app.isEmpty, app != ".", app != "..", !app.contains("/"), !app.contains("\0") else {
            throw DataHomeError(path: app, problem: .notADirectory)
        }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent(app)
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { throw DataHomeError(path: app, problem: .noDataHome) }
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share").appendingPathComponent(app)
    }

    /// The folder at `relativePath` inside the data home, created `0700` where missing and checked.
    /// - Throws: ``DataHomeError`` naming the folder refused.
    public func directory(_ relativePath: String) throws(DataHomeError) -> URL {
        let directory = url.appendingPathComponent(relativePath).standardizedFileURL
        try PrivateDirectory.create(directory, home: url)
        return directory
    }

    /// The data home's path.
    public var description: String { url.path }
}
