import Foundation

/// Where an app keeps what must survive a relaunch: `$XDG_DATA_HOME/<app>`, or
/// `~/.local/share/<app>` (the XDG Base Directory specification's default), created 0700.
enum DataHome {
    /// The data home is not usable.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The app's folder under the data home, created owner-only if missing.
    static func directory(for app: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = URL(fileURLWithPath: home).appendingPathComponent(".local/share")
        } else {
            throw Unavailable(description: "neither XDG_DATA_HOME nor HOME is an absolute path: no data home to keep the app's data in")
        }
        let directory = base.appendingPathComponent(app)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        return directory
    }
}
