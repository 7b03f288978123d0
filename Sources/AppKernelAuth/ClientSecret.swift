public import Foundation
public import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a daemon's connected-app consumer secret is read from, for
/// ``LoginMethod/clientCredentials(secret:consumerKey:)`` — only places a secret may live:
///
/// - ``systemdCredential(named:environment:)``: `$CREDENTIALS_DIRECTORY/<name>`, which systemd
///   decrypts at unit start (`LoadCredentialEncrypted=<name>:/etc/credstore.encrypted/<name>`),
///   readable by the unit's user alone.
/// - ``sealedFile(_:keyRing:)``: a file sealed with the key ring's global data key
///   (``seal(_:to:keyRing:)`` writes it once, at provisioning).
///
/// There is no way to hand it a string: a secret on a command line is readable by every local
/// user (`/proc/<pid>/cmdline`), one in the environment by the process's children and in
/// `/proc/<pid>/environ`. A secret read from its store that also appears among the process's
/// arguments or environment values is refused (``ClientSecretError/Problem/exposed(_:)``):
/// it has leaked, and the fix is to rotate it; so is any login while an argument or an
/// environment variable names a consumer secret (`--client-secret=…`, `SF_CLIENT_SECRET`):
/// ``ClientSecretError/Problem/passedAsText(_:)``.
///
/// ```swift
/// let method = LoginMethod.clientCredentials(secret: .systemdCredential(named: "salesforce-secret"))
/// let account = try await accounts.logIn(config: config, using: method)
/// ```
public struct ClientSecret: Sendable, CustomStringConvertible {
    enum Source: Sendable {
        case systemdCredential(name: String, directory: String?)
        case sealedFile(URL, keyRing: KeyRing)
    }

    let source: Source
    /// The process's arguments and environment values a secret must not be among.
    let exposedValues: @Sendable () -> [(where: String, value: String)]

    /// The most a secret file may hold: 4 KiB (a consumer secret is 64 characters).
    public static let maximumSize = 4096
    /// The purpose sealed secret files carry.
    public static let sealedPurpose = "client-secret"

    /// The systemd credential `name`: `$CREDENTIALS_DIRECTORY/<name>` (one trailing line break
    /// is dropped).
    public static func systemdCredential(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> ClientSecret {
        ClientSecret(source: .systemdCredential(name: name, directory: environment["CREDENTIALS_DIRECTORY"]), exposedValues: Self.processValues)
    }

    /// A file sealed with `keyRing`'s global data key, written by ``seal(_:to:keyRing:)``.
    public static func sealedFile(_ file: URL, keyRing: KeyRing) -> ClientSecret {
        ClientSecret(source: .sealedFile(file, keyRing: keyRing), exposedValues: Self.processValues)
    }

    /// Seals `secret` into `file` (`0600`) with `keyRing`'s global data key — a provisioning step,
    /// run by a tool that reads the secret from its standard input, never from its arguments.
    /// - Throws: ``ClientSecretError`` naming the file.
    public static func seal(_ secret: String, to file: URL, keyRing: KeyRing) throws(ClientSecretError) {
        let what = "the sealed secret \(file.path)"
        do {
            let key = try keyRing.dataKey(for: KeyRing.globalOwner, creatingIfMissing: true)
            try SealedFile.write(Array(secret.utf8), to: file, purpose: sealedPurpose, owner: KeyRing.globalOwner, key: key)
        } catch let error as KeyError {
            throw ClientSecretError(source: what, problem: .unreadable(error.description))
        } catch {
            throw ClientSecretError(source: what, problem: .unreadable("\(error)"))
        }
    }

    /// Where the secret is read from, as errors name it.
    public var description: String {
        switch source {
        case .systemdCredential(let name, let directory): "the systemd credential \(name) (\(directory ?? "$CREDENTIALS_DIRECTORY")/\(name))"
        case .sealedFile(let file, _): "the sealed secret \(file.path)"
        }
    }

    /// Reads the secret.
    /// - Throws: ``ClientSecretError`` naming the source, the problem and the fix.
    public func read() throws(ClientSecretError) -> String {
        let exposed = exposedValues()
        if let named = exposed.first(where: { Self.namesASecret($0.where + " " + $0.value) }) {
            throw ClientSecretError(source: description, problem: .passedAsText(named.where))
        }
        let secret: String
        switch source {
        case .systemdCredential(let name, let directory):
            guard let directory, !directory.isEmpty else { throw ClientSecretError(source: description, problem: .credentialsDirectoryUnset) }
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw ClientSecretError(source: description, problem: .missing(directory + "/" + name))
            }
            secret = try Self.readPlainFile(directory + "/" + name, source: description)
        case .sealedFile(let file, let keyRing):
            do {
                let key = try keyRing.dataKey(for: KeyRing.globalOwner)
                guard let bytes = try SealedFile.read(file, purpose: Self.sealedPurpose, owner: KeyRing.globalOwner, key: key,
                                                      maximumSize: Self.maximumSize + 512) else {
                    throw ClientSecretError(source: description, problem: .missing(file.path))
                }
                secret = String(decoding: bytes, as: UTF8.self)
            } catch let error as ClientSecretError {
                throw error
            } catch let error as KeyError {
                throw ClientSecretError(source: description, problem: .unreadable(error.description))
            } catch {
                throw ClientSecretError(source: description, problem: .unreadable("\(error)"))
            }
        }
        guard !secret.isEmpty else { throw ClientSecretError(source: description, problem: .empty) }
        if let exposure = exposed.first(where: { $0.value.contains(secret) }) {
            throw ClientSecretError(source: description, problem: .exposed(exposure.where))
        }
        return secret
    }

    /// A secret file's text, without following a link, bounded, one trailing line break dropped.
    private static func readPlainFile(_ path: String, source: String) throws(ClientSecretError) -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw ClientSecretError(source: source, problem: .missing(path)) }
            throw ClientSecretError(source: source, problem: .unreadable("open(\(path)): \(String(cString: strerror(code)))"))
        }
        defer { close(descriptor) }
        var status = stat()
        // fstat(2) fills the local `status`, for the call only.
        guard fstat(descriptor, &status) == 0, status.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            throw ClientSecretError(source: source, problem: .unreadable("\(path) is not a regular file"))
        }
        guard status.st_size <= off_t(maximumSize) else { throw ClientSecretError(source: source, problem: .tooLarge(Int(status.st_size))) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { Self.readBytes(descriptor, $0.baseAddress, $0.count) }
        guard count == bytes.count else { throw ClientSecretError(source: source, problem: .unreadable("read \(count) of \(bytes.count) bytes of \(path)")) }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// read(2), named apart from ``read()``.
    private static func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// Whether `text` (an argument, or an environment variable's name and value) names a
    /// consumer secret handed over as text: `--client-secret=…`, `SF_CONSUMER_SECRET`, ….
    static func namesASecret(_ text: String) -> Bool {
        let folded = text.lowercased().replacingOccurrences(of: "-", with: "_")
        return ["client_secret", "consumer_secret", "clientsecret", "consumersecret"].contains { folded.contains($0) }
    }

    /// The process's arguments and environment values.
    @Sendable static func processValues() -> [(where: String, value: String)] {
        CommandLine.arguments.dropFirst().map { ("the process's command line", $0) }
            + ProcessInfo.processInfo.environment.map { ("the environment variable \($0.key)", $0.value) }
    }

    /// A source whose exposure check looks at `values` instead of the process's (for tests).
    func checkingExposure(in values: [(where: String, value: String)]) -> ClientSecret {
        let copy = values.map { (where: $0.where, value: $0.value) }
        return ClientSecret(source: source, exposedValues: { copy })
    }
}

/// Why a client secret could not be used: which source, what went wrong, and the fix.
public struct ClientSecretError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Hashable {
        /// `$CREDENTIALS_DIRECTORY` is not set: the process was not started by a unit that loads it.
        case credentialsDirectoryUnset
        /// No file at this path.
        case missing(String)
        /// The file could not be read or opened (the reason).
        case unreadable(String)
        /// The file holds more than ``ClientSecret/maximumSize`` bytes (this many).
        case tooLarge(Int)
        /// The file is empty.
        case empty
        /// The secret also appears here (the command line, an environment variable): it leaked.
        case exposed(String)
        /// A secret was handed over as text (a command-line option, a config value).
        case passedAsText(String)
    }

    /// The source, as ``ClientSecret/description`` names it.
    public var source: String
    /// What went wrong.
    public var problem: Problem

    /// Creates an error.
    public init(source: String, problem: Problem) {
        self.source = source
        self.problem = problem
    }

    /// What went wrong, where, and the fix.
    public var description: String {
        let fix = "keep the consumer secret in a systemd credential (LoadCredentialEncrypted=<name>:/etc/credstore.encrypted/<name>, "
            + "read with ClientSecret.systemdCredential(named:)) or a file sealed with ClientSecret.seal(_:to:keyRing:)"
        switch problem {
        case .credentialsDirectoryUnset:
            return "\(source): $CREDENTIALS_DIRECTORY is not set — start the daemon from a systemd unit with LoadCredential= or LoadCredentialEncrypted= naming it"
        case .missing(let path):
            return "\(source): \(path) does not exist — \(fix)"
        case .unreadable(let reason):
            return "\(source) cannot be read: \(reason)"
        case .tooLarge(let count):
            return "\(source) holds \(count) bytes, more than \(ClientSecret.maximumSize): it is not a consumer secret"
        case .empty:
            return "\(source) is empty — write the connected app's consumer secret into it"
        case .exposed(let place):
            return "\(source): the secret also appears in \(place), where other processes can read it — rotate the consumer secret, remove it from there, and \(fix)"
        case .passedAsText(let place):
            return "a consumer secret was given as text in \(place), where other processes can read it — \(fix)"
        }
    }
}
