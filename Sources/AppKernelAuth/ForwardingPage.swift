import Foundation
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The local page through which ``BrowserOpener/system`` hands the authorize URL to the browser,
/// so that the URL — its `state` and PKCE `code_challenge` — is never in a process's arguments:
/// `/proc/<pid>/cmdline` of the opener (and of the browser it starts) is readable by every local
/// user, and the `state` is what keeps another user's forged answer out of the login.
///
/// The page is `login.html`, `0600` from its first byte (`O_CREAT | O_EXCL | O_NOFOLLOW`), in a
/// new directory `appkernel-login-<random>` made `0700` in `$XDG_RUNTIME_DIR` when it is set and
/// private (the user's own, `0700`: the XDG base directory rules) or else in the temporary
/// directory (`$TMPDIR`, `/tmp`). The opener is given the page's path, which tells nothing; the
/// page forwards to the authorize URL at once (a meta refresh, a script, and a link). The login
/// removes the page and its directory when it ends: success, failure, deadline or cancellation.
final class ForwardingPage: Sendable {
    /// The page's private directory.
    let directory: URL
    /// The page.
    let file: URL

    /// Why no page could be written: the path and the C library's message.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes a page that forwards to `url`, in a new private directory under ``baseDirectory(environment:)``.
    init(forwardingTo url: URL, environment: [String: String]) throws(Failure) {
        let base = Self.baseDirectory(environment: environment)
        let directory = base.appendingPathComponent("appkernel-login-\(SecureRandom.token(byteCount: 12))", isDirectory: true)
        // mkdir(2) never follows a symbolic link in the last component and fails if the name
        // exists: the directory is new, ours, and 0700 (the umask can only take bits away).
        guard mkdir(directory.path, 0o700) == 0 else {
            throw Failure(description: "\(directory.path) could not be created: \(POSIX.message(errno))")
        }
        let file = directory.appendingPathComponent("login.html")
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let message = POSIX.message(errno)
            rmdir(directory.path)
            throw Failure(description: "\(file.path) could not be created: \(message)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(Self.html(forwardingTo: url).utf8))
            try handle.close()
        } catch {
            unlink(file.path)
            rmdir(directory.path)
            throw Failure(description: "\(file.path) could not be written: \(error.localizedDescription)")
        }
        self.directory = directory
        self.file = file
    }

    /// Removes the page and its directory (nothing when they are gone already).
    func remove() {
        unlink(file.path)
        rmdir(directory.path)
    }

    /// `$XDG_RUNTIME_DIR` when it is an absolute path to a directory (not a symbolic link) owned
    /// by this user and closed to everyone else; the temporary directory otherwise.
    static func baseDirectory(environment: [String: String]) -> URL {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"),
           let attributes = try? FileManager.default.attributesOfItem(atPath: runtime),   // lstat: a link is not followed
           attributes[.type] as? FileAttributeType == .typeDirectory,
           (attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid(),
           let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 == 0 {
            return URL(fileURLWithPath: runtime, isDirectory: true)
        }
        if let temporary = environment["TMPDIR"], temporary.hasPrefix("/") {
            return URL(fileURLWithPath: temporary, isDirectory: true)
        }
        return URL(fileURLWithPath: "/tmp", isDirectory: true)
    }

    /// The page: a meta refresh, a script and a link, each to `url`, escaped for where it stands.
    static func html(forwardingTo url: URL) -> String {
        let address = url.absoluteString
        let attribute = address.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "'", with: "&#39;")
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$()*+,;=%".utf16)
        let script = address.utf16.map { plain.contains($0) ? String(UnicodeScalar($0).map(Character.init) ?? "?") : String(format: "\\u%04x", $0) }.joined()
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(attribute)">
            <title>Opening the login page</title></head>
            <body><p>Opening the login page… If nothing happens, <a href="\(attribute)" rel="noreferrer">continue to the login page</a>.</p>
            <script>window.location.replace("\(script)");</script></body></html>

            """
    }
}

/// The forwarding pages a login's opener left, removed together when the login ends.
final class ForwardingPages: Sendable {
    private let pages = Locked<[ForwardingPage]>([])

    /// Keeps `page` (if any) for ``removeAll()``.
    func keep(_ page: ForwardingPage?) {
        guard let page else { return }
        pages.withLock { $0.append(page) }
    }

    /// Removes every page kept.
    func removeAll() {
        for page in pages.withLock({ pages in defer { pages = [] }; return pages }) { page.remove() }
    }
}
