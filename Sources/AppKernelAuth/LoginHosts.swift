public import Foundation
import AppKernelCore
import Synchronization

/// A login host: where users log in — the Mobile SDK's `SFSDKLoginHost`.
///
/// `host` is a host name with an optional port and path (`login.salesforce.com`,
/// `acme.my.salesforce.com`, `acme.my.site.com/partners`), reached over https; or an
/// `http://` URL on this computer's loopback (`http://127.0.0.1:8080`), for local servers.
public struct LoginHost: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name the user sees ("Production", "Acme").
    public var name: String
    /// The host, normalised: lower-case, without `https://` or a trailing slash.
    public var host: String
    /// Whether the user may remove it (production and sandbox may not be).
    public var isDeletable: Bool

    /// Salesforce production: `login.salesforce.com`.
    public static let production = LoginHost(uncheckedName: "Production", host: "login.salesforce.com", isDeletable: false)
    /// Salesforce sandboxes: `test.salesforce.com`.
    public static let sandbox = LoginHost(uncheckedName: "Sandbox", host: "test.salesforce.com", isDeletable: false)

    /// A custom host (a My Domain, a community), checked and normalised.
    /// - Throws: ``LoginHostError`` naming what is wrong with `name` or `host`.
    public init(name: String, host: String) throws(LoginHostError) {
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmedName.isEmpty else { throw .emptyName }
        self.init(uncheckedName: trimmedName, host: try Self.normalize(host), isDeletable: true)
    }

    private init(uncheckedName name: String, host: String, isDeletable: Bool) {
        self.name = name
        self.host = host
        self.isDeletable = isDeletable
    }

    /// The login host's URL (`https://<host>`, or the loopback `http://` URL as given).
    public var url: URL {
        URL(string: host.hasPrefix("http://") ? host : "https://\(host)") ?? OAuthConfig.productionLoginHost
    }

    /// "<name> (<host>)".
    public var description: String { "\(name) (\(host))" }

    /// Checks `text` and returns its normal form.
    static func normalize(_ text: String) throws(LoginHostError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .emptyHost }
        func invalid(_ reason: String) -> LoginHostError { .invalidHost(trimmed, reason: reason) }
        guard !trimmed.contains(where: { $0.isWhitespace || $0.isNewline }) else { throw invalid("it contains a space") }
        guard trimmed.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }) else {
            throw invalid("it contains a character that is not plain ASCII (write an internationalised name in its xn-- form)")
        }
        var scheme = "https"
        var rest = trimmed
        if let range = trimmed.range(of: "://") {
            scheme = trimmed[..<range.lowerBound].lowercased()
            rest = String(trimmed[range.upperBound...])
            guard scheme == "https" || scheme == "http" else { throw invalid("only https is allowed, not \(scheme)") }
        }
        guard let components = URLComponents(string: "\(scheme)://\(rest)"), let host = components.host?.lowercased(), !host.isEmpty else {
            throw invalid("it is not a host name")
        }
        guard components.user == nil, components.password == nil else { throw invalid("it must not contain a user name or password") }
        guard components.query == nil, components.fragment == nil else { throw invalid("it must not contain a query (?) or a fragment (#)") }
        let loopback = host == "localhost" || host == "127.0.0.1"
        if scheme == "http" && !loopback { throw invalid("only https is allowed (http only for this computer's loopback address)") }
        guard host.count <= 253 else { throw invalid("the host name is longer than 253 characters") }
        let isIPv4 = host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { UInt8($0) != nil }
        if !isIPv4 {
            for label in host.split(separator: ".", omittingEmptySubsequences: false) {
                guard !label.isEmpty else { throw invalid("it has an empty label (two dots in a row, or a dot at an end)") }
                guard label.count <= 63 else { throw invalid("the label '\(label)' is longer than 63 characters") }
                guard label.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                    throw invalid("the label '\(label)' may only contain letters, digits and hyphens")
                }
                guard label.first != "-", label.last != "-" else { throw invalid("the label '\(label)' starts or ends with a hyphen") }
            }
            guard host.contains(".") || host == "localhost" else { throw invalid("'\(host)' is not a fully qualified host name") }
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        let port = components.port.map { ":\($0)" } ?? ""
        return scheme == "http" ? "http://\(host)\(port)\(path)" : "\(host)\(port)\(path)"
    }
}

/// Why a login host could not be added, removed, chosen or stored.
public enum LoginHostError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The host was empty.
    case emptyHost
    /// The name was empty.
    case emptyName
    /// The host is not a usable host name: the text given and why.
    case invalidHost(String, reason: String)
    /// A host with this address is already in the list (under the name given).
    case duplicate(host: String, existingName: String)
    /// Production and sandbox cannot be removed.
    case notDeletable(String)
    /// No host with this address is in the list.
    case unknownHost(String)
    /// The list's file could not be read or written.
    case storage(path: String, reason: String)

    /// What went wrong.
    public var description: String {
        switch self {
        case .emptyHost: "the login host is empty"
        case .emptyName: "the login host needs a name"
        case .invalidHost(let host, let reason): "'\(host)' is not a valid login host: \(reason)"
        case .duplicate(let host, let name): "'\(host)' is already in the list, as \(name)"
        case .notDeletable(let host): "'\(host)' is one of the default login hosts and cannot be removed"
        case .unknownHost(let host): "'\(host)' is not in the list of login hosts"
        case .storage(let path, let reason): "login hosts: \(path): \(reason)"
        }
    }
}

/// The login hosts the user can choose from — the Mobile SDK's `SFSDKLoginHostStorage`:
/// production and sandbox always first, then the user's own hosts (a My Domain, a community);
/// the user adds, removes (not the two defaults) and chooses. The list and the choice are kept
/// in `<directory>/login-hosts.json`, written atomically, `0600`.
///
/// ```swift
/// let hosts = try LoginHostStorage(directory: appSupport)
/// try hosts.add(name: "Acme", host: "acme.my.salesforce.com", select: true)
/// let config = OAuthConfig(clientID: consumerKey, redirectURI: callback, loginHost: hosts.selected)
/// ```
public final class LoginHostStorage: Sendable {
    private struct Contents: Codable, Equatable {
        var custom: [LoginHost]
        var selected: String
    }

    /// The file's name in the directory.
    public static let fileName = "login-hosts.json"
    /// The file the list is kept in.
    public let file: URL
    private let contents: Locked<Contents>

    /// Loads the list kept in `directory` (the defaults alone, with production chosen, when
    /// there is none yet).
    /// - Throws: ``LoginHostError/storage(path:reason:)`` when the file cannot be read or is
    ///   not a list of login hosts.
    public init(directory: URL) throws(LoginHostError) {
        file = directory.appendingPathComponent(Self.fileName)
        var loaded = Contents(custom: [], selected: LoginHost.production.host)
        if FileManager.default.fileExists(atPath: file.path) {
            do {
                loaded = try JSONDecoder().decode(Contents.self, from: Data(contentsOf: file))
            } catch {
                throw .storage(path: file.path, reason: "not a list of login hosts: \(error.localizedDescription)")
            }
            loaded.custom = loaded.custom.compactMap { try? LoginHost(name: $0.name, host: $0.host) }
            let known = [LoginHost.production, .sandbox] + loaded.custom
            if !known.contains(where: { $0.host == loaded.selected }) { loaded.selected = LoginHost.production.host }
        }
        contents = Locked(loaded)
    }

    /// Production, sandbox, then the user's hosts in the order added.
    public var hosts: [LoginHost] { [.production, .sandbox] + contents.withLock { $0.custom } }

    /// The chosen host.
    public var selected: LoginHost {
        let chosen = contents.withLock { $0.selected }
        return hosts.first { $0.host == chosen } ?? .production
    }

    /// Adds a host (and chooses it when `select` is true), and saves the list.
    /// - Throws: ``LoginHostError``: an empty name or host, an invalid host, one already listed,
    ///   or a failed write (the list is then unchanged).
    @discardableResult
    public func add(name: String, host: String, select: Bool = false) throws(LoginHostError) -> LoginHost {
        let added = try LoginHost(name: name, host: host)
        if let existing = hosts.first(where: { $0.host == added.host }) { throw .duplicate(host: added.host, existingName: existing.name) }
        try change { contents in
            contents.custom.append(added)
            if select { contents.selected = added.host }
        }
        return added
    }

    /// Removes a host the user added (the choice goes back to production if it was chosen), and
    /// saves the list.
    /// - Throws: ``LoginHostError/notDeletable(_:)`` for production and sandbox,
    ///   ``LoginHostError/unknownHost(_:)``, or a failed write.
    public func remove(_ host: String) throws(LoginHostError) {
        let normalized = try LoginHost.normalize(host)
        guard let found = hosts.first(where: { $0.host == normalized }) else { throw .unknownHost(normalized) }
        guard found.isDeletable else { throw .notDeletable(normalized) }
        try change { contents in
            contents.custom.removeAll { $0.host == normalized }
            if contents.selected == normalized { contents.selected = LoginHost.production.host }
        }
    }

    /// Chooses a listed host, and saves the choice.
    /// - Throws: ``LoginHostError/unknownHost(_:)``, an invalid host, or a failed write.
    public func select(_ host: String) throws(LoginHostError) {
        let normalized = try LoginHost.normalize(host)
        guard hosts.contains(where: { $0.host == normalized }) else { throw .unknownHost(normalized) }
        try change { $0.selected = normalized }
    }

    private func change(_ update: (inout Contents) -> Void) throws(LoginHostError) {
        try contents.withLock { (contents: inout Contents) throws(LoginHostError) in
            var next = contents
            update(&next)
            let directory = file.deletingLastPathComponent()
            do {
                if !FileManager.default.fileExists(atPath: directory.path) {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                }
            } catch {
                throw .storage(path: directory.path, reason: "could not be created: \(error.localizedDescription)")
            }
            let data: Data
            do { data = try JSONEncoder.sorted.encode(next) } catch {
                throw .storage(path: file.path, reason: "could not be encoded: \(error)")
            }
            do throws(CredentialStoreError) { try POSIX.writePrivateFileAtomically(data, to: file) } catch {
                throw .storage(path: error.path, reason: error.reason)
            }
            contents = next
        }
    }
}
