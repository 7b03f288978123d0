public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the master key comes from — the one key that wraps every owner's data key
/// (``KeyRing``). The app chooses:
///
/// - ``systemdCredential(named:environment:)``: `$CREDENTIALS_DIRECTORY/<name>`, which systemd
///   decrypts at unit start from a credential that `systemd-creds encrypt` sealed with the
///   machine's TPM2 and/or host key (`LoadCredentialEncrypted=`). Never created by AppKernel.
/// - ``keyFile(in:)`` / ``keyFile(application:environment:)``: `master.key` in a folder apart
///   from the data home (`$XDG_CONFIG_HOME/<app>/`, `0700`), `0600`, 32 random bytes, created on
///   first use — only when no data sealed with a key exists yet.
/// - ``inMemory(_:)``: a key the caller holds, for tests.
///
/// A missing or wrong master key is a ``KeyError`` naming the provider; none of them ever
/// replaces a key it cannot find.
///
/// ```swift
/// let keys = try KeyRing(directory: home.appendingPathComponent("keys"),
///                        provider: .keyFile(application: "AccountsApp"), home: home)
/// ```
public struct KeyProvider: Sendable, CustomStringConvertible {
    enum Source: Sendable {
        case systemdCredential(name: String, directory: String?)
        case keyFile(directory: URL)
        case inMemory(SecretKey)
    }

    let source: Source

    /// The name of the key file in its folder.
    public static let keyFileName = "master.key"

    /// The systemd credential `name`: `$CREDENTIALS_DIRECTORY/<name>`, exactly 32 bytes (e.g.
    /// `openssl rand 32 | systemd-creds encrypt --name=<name> - /etc/credstore.encrypted/<name>`
    /// and `LoadCredentialEncrypted=<name>:/etc/credstore.encrypted/<name>` in the unit).
    public static func systemdCredential(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> KeyProvider {
        KeyProvider(source: .systemdCredential(name: name, directory: environment["CREDENTIALS_DIRECTORY"]))
    }

    /// The key file `master.key` in `directory` (created `0700` with the key, `0600`, on first
    /// use when no data exists yet).
    public static func keyFile(in directory: URL) -> KeyProvider {
        KeyProvider(source: .keyFile(directory: directory.standardizedFileURL))
    }

    /// The key file of `application` under `$XDG_CONFIG_HOME` (else `~/.config`), as the XDG
    /// Base Directory specification places configuration: apart from the data home.
    /// - Throws: ``KeyError`` when neither `XDG_CONFIG_HOME` nor `HOME` is an absolute path.
    public static func keyFile(application: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(KeyError) -> KeyProvider {
        let base: String
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            base = config
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.config"
        } else {
            throw KeyError(provider: "the key file of \(application)", problem: .file(DataHomeError(path: "$XDG_CONFIG_HOME", problem: .noDataHome)))
        }
        return keyFile(in: URL(fileURLWithPath: base).appendingPathComponent(application, isDirectory: true))
    }

    /// A key held in memory, for tests.
    public static func inMemory(_ key: SecretKey) -> KeyProvider { KeyProvider(source: .inMemory(key)) }

    /// The key file's path, for the key-file provider.
    public var keyFileURL: URL? {
        if case .keyFile(let directory) = source { return directory.appendingPathComponent(Self.keyFileName) }
        return nil
    }

    /// The provider, as errors name it.
    public var description: String {
        switch source {
        case .systemdCredential(let name, let directory): "the systemd credential \(name) (\(directory ?? "$CREDENTIALS_DIRECTORY")/\(name))"
        case .keyFile(let directory): "the key file \(directory.appendingPathComponent(Self.keyFileName).path)"
        case .inMemory(let key): "the in-memory key \(key.id.hexDigits)"
        }
    }

    /// The master key.
    ///
    /// - Parameter creatingIfMissing: Whether the key-file provider may create the key when it
    ///   is missing: pass `true` only when no data sealed with a master key exists yet (a
    ///   ``KeyRing`` passes it when it holds no key). The other providers never create one.
    /// - Throws: ``KeyError`` naming the provider: missing, the wrong size, or a key file that is
    ///   a link, another user's, or open to others.
    public func masterKey(creatingIfMissing: Bool) throws(KeyError) -> SecretKey {
        switch source {
        case .inMemory(let key):
            return key
        case .systemdCredential(let name, let directory):
            guard let directory else { throw KeyError(provider: description, problem: .credentialsDirectoryUnset) }
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw KeyError(provider: description, problem: .missingMasterKey(path: directory + "/" + name))
            }
            return try readKey(at: directory + "/" + name, strict: false)
        case .keyFile(let directory):
            let path = directory.appendingPathComponent(Self.keyFileName).path
            if creatingIfMissing, !FileManager.default.fileExists(atPath: path) {
                try createKeyFile(in: directory)
            }
            return try readKey(at: path, strict: true)
        }
    }

    // MARK: Key files

    /// Reads a 32-byte key without following a link; `strict`: the file must also be the
    /// user's own and closed to group and others (ssh's rule for private keys).
    private func readKey(at path: String, strict: Bool) throws(KeyError) -> SecretKey {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw KeyError(provider: description, problem: .missingMasterKey(path: path)) }
            if code == ELOOP { throw KeyError(provider: description, problem: .unsafeKeyFile(path: path, reason: "is a symbolic link")) }
            throw KeyError(provider: description, problem: .file(DataHomeError(path: path, call: "open", code: code)))
        }
        defer { close(descriptor) }
        var status = stat()
        // fstat(2) fills the local `status`, for the call only.
        guard fstat(descriptor, &status) == 0 else { throw KeyError(provider: description, problem: .file(DataHomeError(path: path, call: "stat", code: errno))) }
        guard status.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            throw KeyError(provider: description, problem: .unsafeKeyFile(path: path, reason: "is not a regular file"))
        }
        if strict {
            guard status.st_uid == geteuid() else {
                throw KeyError(provider: description, problem: .unsafeKeyFile(path: path, reason: "belongs to uid \(status.st_uid), not to this user"))
            }
            guard status.st_mode & 0o077 == 0 else {
                throw KeyError(provider: description, problem: .unsafeKeyFile(path: path, reason: "has mode \(String(status.st_mode & 0o777, radix: 8)): others may read it"))
            }
        }
        guard status.st_size == off_t(SecretKey.byteCount) else {
            throw KeyError(provider: description, problem: .wrongSize(path: path, count: Int(status.st_size)))
        }
        do throws(CryptoError) {
            return try SecretKey { (buffer) throws(CryptoError) in
                var offset = 0
                while offset < buffer.count {
                    // pread(2) writes at most `count - offset` bytes into the key's own buffer.
                    let count = pread(descriptor, buffer.baseAddress! + offset, buffer.count - offset, off_t(offset))
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { throw CryptoError(.invalidLength(what: "a key file", count: offset), operation: "reading \(path)") }
                    offset += count
                }
            }
        } catch {
            throw KeyError(provider: description, problem: .wrongSize(path: path, count: 0))
        }
    }

    /// Creates `master.key`: written whole to a temporary file (`O_EXCL`, `0600`), `fsync`ed,
    /// then linked to its name — `link(2)` fails if a key is already there, so a key is never
    /// replaced, and a reader never sees half a key.
    private func createKeyFile(in directory: URL) throws(KeyError) {
        do {
            try PrivateDirectory.create(directory)
        } catch {
            throw KeyError(provider: description, problem: .file(error))
        }
        let path = directory.appendingPathComponent(Self.keyFileName).path
        let temporary = directory.appendingPathComponent(".\(Self.keyFileName).\(UUID().uuidString.prefix(12)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KeyError(provider: description, problem: .file(DataHomeError(path: temporary, call: "create", code: errno))) }
        defer { unlink(temporary) }
        var failure: DataHomeError?
        do throws(CryptoError) {
            let key = try SecretKey.random()
            key.withUnsafeBytes { bytes in
                // write(2) reads the key's 32 bytes, borrowed for the call.
                if fchmod(descriptor, 0o600) != 0 { failure = DataHomeError(path: temporary, call: "chmod", code: errno) }
                else if write(descriptor, bytes.baseAddress, bytes.count) != bytes.count { failure = DataHomeError(path: temporary, call: "write", code: errno) }
                else if fsync(descriptor) != 0 { failure = DataHomeError(path: temporary, call: "fsync", code: errno) }
            }
        } catch {
            close(descriptor)
            throw KeyError(provider: description, problem: .crypto(error))
        }
        close(descriptor)
        if let failure { throw KeyError(provider: description, problem: .file(failure)) }
        if link(temporary, path) != 0, errno != EEXIST {
            throw KeyError(provider: description, problem: .file(DataHomeError(path: path, call: "link", code: errno)))
        }
        let folder = open(directory.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}
