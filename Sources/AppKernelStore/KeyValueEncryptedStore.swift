public import AppKernelCore
public import Foundation

/// Small secrets by key, each sealed in a file of its own — the Mobile SDK's
/// `KeyValueEncryptedFileStore`, global and per user, by name.
///
/// A store is a folder (`key_value_stores/<name>/` under its owner's folder, see
/// ``directory(for:in:)``) of sealed files (Core's `SealedFile`, purpose `key-value`, sealed with
/// the owner's data key from the `KeyRing`). Each entry's file name is an HMAC-SHA256 of its key
/// under a key derived from the owner's data key and the store's name, so no key is in clear and
/// a guessed key cannot be checked against the names without the key; the file holds the store's
/// name, the key and the value, checked on every read, so an entry copied to another key,
/// another store, another user or from another purpose fails with a typed error naming the
/// file. Writes are atomic and `fsync`ed (`SealedFile.write`): a kill leaves the old value or the
/// new one. An older copy of the same entry sealed under the same key opens (replay is not
/// detected); one from before a logout does not (the user's key changed).
///
/// ```swift
/// let notes = try KeyValueEncryptedStore.forUser(identity, named: "notes", in: dataHome, keyRing: keys)
/// try notes.save("draft", forKey: "lastNote")
/// let draft = try notes.value(forKey: "lastNote")      // "draft"
/// ```
///
/// Names are validated as the Mobile SDK's `isValidName`: 1…96 characters of `a-z A-Z 0-9 _`.
/// Keys are any non-empty string.
public final class KeyValueEncryptedStore: Sendable {
    /// The longest store name (the Mobile SDK's `maxStoreNameLength`).
    public static let maximumNameLength = 96
    /// The purpose in every entry's sealed header.
    public static let purpose = "key-value"
    /// The folder of an owner's key-value stores.
    public static let directoryName = "key_value_stores"
    static let entrySuffix = ".entry"

    /// The store's name.
    public let name: String
    /// The store's folder.
    public let directory: URL
    /// The key-ring owner whose key seals the entries (`global`, or `KeyRing.owner(of:)`'s).
    public let owner: String
    private let key: SecretKey
    private let names: HMACSHA256

    /// Opens (creating its folder `0700`) the store `name` in `parentDirectory`, sealed with `key`
    /// for `owner`. Apps use ``global(named:in:keyRing:)`` and ``forUser(_:named:in:keyRing:)``.
    /// - Parameters:
    ///   - parentDirectory: The owner's `key_value_stores` folder (``directory(for:in:)``).
    ///   - name: The store's name (``isValidName(_:)``); its folder is `<parentDirectory>/<name>`.
    ///   - owner: The key-ring owner written in every entry's header.
    ///   - key: The owner's data key.
    ///   - home: The data home the folder belongs to, checked down from it (no link, the user's,
    ///     not writable by others).
    /// - Throws: ``StoreError``: `invalidName` for a name ``isValidName(_:)`` refuses, `cannotOpen`
    ///   for a folder that is refused or cannot be made.
    public init(parentDirectory: URL, name: String, owner: String, key: SecretKey, home: URL? = nil) throws(StoreError) {
        guard Self.isValidName(name) else {
            throw StoreError(code: .invalidName, reason: "'\(name)' cannot name a key-value store: use 1…\(Self.maximumNameLength) characters of a-z, A-Z, 0-9 and _",
                             file: parentDirectory.path)
        }
        self.name = name
        self.owner = owner
        self.key = key
        directory = parentDirectory.appendingPathComponent(name)
        do {
            try PrivateDirectory.create(directory, home: home)
            let nameKey = try HKDF.deriveKey(from: key, salt: Array(name.utf8), info: Array("AppKernel key-value names v1".utf8))
            names = HMACSHA256(key: nameKey.withUnsafeBytes { Array($0) })
        } catch let error as DataHomeError {
            throw StoreError(code: .cannotOpen, reason: error.description, file: error.path)
        } catch {
            throw StoreError(code: .cannotOpen, reason: "the store's name key could not be derived: \(error)", file: directory.path)
        }
    }

    /// Whether `name` can name a store: 1…96 characters of `a-z A-Z 0-9 _` (the Mobile SDK's rule).
    public static func isValidName(_ name: String) -> Bool {
        (1...maximumNameLength).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x5f
        }
    }

    // MARK: Entries

    /// Stores `value` under `key`, replacing what was there (`saveValue(_:forKey:)`).
    /// - Throws: ``StoreError``: `invalidEntry` for an empty key, `cannotOpen` when the file
    ///   cannot be written (the old value stays).
    public func save(_ value: String, forKey key: String) throws(StoreError) {
        try saveData(Data(value.utf8), forKey: key)
    }

    /// Stores `data` under `key`, replacing what was there (`saveData(_:forKey:)`).
    /// - Throws: ``StoreError`` as ``save(_:forKey:)``.
    public func saveData(_ data: Data, forKey key: String) throws(StoreError) {
        let file = try entryFile(for: key)
        var plaintext = Self.header(name: name, key: key) + Array(data)
        defer { for index in plaintext.indices { plaintext[index] = 0 } }
        do {
            try SealedFile.write(plaintext, to: file, purpose: Self.purpose, owner: owner, key: self.key)
        } catch {
            throw StoreError(code: .cannotOpen, reason: "the entry could not be written: \(error)", file: file.path)
        }
    }

    /// The string under `key`, `nil` when there is none (`subscript(key)`).
    /// - Throws: ``StoreError``: `unreadableEntry` naming the file when it fails its checks
    ///   (damaged, another key's, store's, owner's or purpose's); `invalidEntry` for an empty key.
    public func value(forKey key: String) throws(StoreError) -> String? {
        try data(forKey: key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes under `key`, `nil` when there is none (`readData(key:)`).
    /// - Throws: ``StoreError`` as ``value(forKey:)``.
    public func data(forKey key: String) throws(StoreError) -> Data? {
        let file = try entryFile(for: key)
        guard let entry = try open(file) else { return nil }
        guard entry.key == key else {
            throw StoreError(code: .unreadableEntry, reason: "the entry holds another key's value: it was moved or copied; nothing was returned",
                             file: file.path)
        }
        return entry.value
    }

    /// Removes `key`'s value; nothing there is no error (`removeValue(forKey:)`).
    /// - Throws: ``StoreError`` `cannotOpen` when the file cannot be removed.
    public func removeValue(forKey key: String) throws(StoreError) {
        let file = try entryFile(for: key)
        do { try PrivateFile.remove(file) } catch { throw StoreError(code: .cannotOpen, reason: error.description, file: file.path) }
    }

    /// Removes every entry (`removeAll()`); the store stays.
    /// - Throws: ``StoreError`` `cannotOpen` when a file cannot be removed (the others are gone).
    public func removeAll() throws(StoreError) {
        for file in try entryFiles() {
            do { try PrivateFile.remove(file) } catch { throw StoreError(code: .cannotOpen, reason: error.description, file: file.path) }
        }
    }

    /// Every key, sorted (`allKeys()`): each entry is opened and checked.
    /// - Throws: ``StoreError`` `unreadableEntry` naming an entry that fails its checks.
    public func allKeys() throws(StoreError) -> [String] {
        var keys: [String] = []
        for file in try entryFiles() {
            if let entry = try open(file) { keys.append(entry.key) }
        }
        return keys.sorted()
    }

    /// How many entries the store holds (`count()`), counted by their files.
    /// - Throws: ``StoreError`` `cannotOpen` when the folder cannot be listed.
    public func count() throws(StoreError) -> Int { try entryFiles().count }

    /// Whether the store holds no entry (`isEmpty()`).
    /// - Throws: ``StoreError`` as ``count()``.
    public func isEmpty() throws(StoreError) -> Bool { try count() == 0 }

    // MARK: Files

    /// The file of `key`'s entry: the hex HMAC of the key, so the key is not in clear.
    private func entryFile(for key: String) throws(StoreError) -> URL {
        guard !key.isEmpty else { throw StoreError(code: .invalidEntry, reason: "a key-value store's key cannot be empty", file: directory.path) }
        return directory.appendingPathComponent(names.authenticationCode(for: Array(key.utf8)).map { String(format: "%02x", $0) }.joined() + Self.entrySuffix)
    }

    private func entryFiles() throws(StoreError) -> [URL] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(Self.entrySuffix) && !$0.hasPrefix(".") }.sorted()
                .map { directory.appendingPathComponent($0) }
        } catch {
            throw StoreError(code: .cannotOpen, reason: "the store's folder cannot be listed: \(error.localizedDescription)", file: directory.path)
        }
    }

    /// The entry in `file`, `nil` if no file; checked: sealed for this owner and purpose, and
    /// holding this store's name.
    private func open(_ file: URL) throws(StoreError) -> (key: String, value: Data)? {
        let bytes: [UInt8]
        do {
            guard let opened = try SealedFile.read(file, purpose: Self.purpose, owner: owner, key: key) else { return nil }
            bytes = opened
        } catch {
            throw StoreError(code: .unreadableEntry, reason: "the entry cannot be opened: \(error.description)", file: file.path)
        }
        guard let entry = Self.parse(bytes), entry.name == name else {
            throw StoreError(code: .unreadableEntry, reason: "the entry belongs to another key-value store (or is malformed): it was copied; nothing was returned",
                             file: file.path)
        }
        return (entry.key, entry.value)
    }

    /// An entry's plaintext before its value: version 1, the store's name and the key, each
    /// with a 4-byte big-endian length.
    private static func header(name: String, key: String) -> [UInt8] {
        [1] + lengthPrefixed(Array(name.utf8)) + lengthPrefixed(Array(key.utf8))
    }

    private static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
        let count = UInt32(bytes.count)
        return [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)] + bytes
    }

    private static func parse(_ bytes: [UInt8]) -> (name: String, key: String, value: Data)? {
        guard bytes.first == 1 else { return nil }
        var offset = 1
        func field() -> [UInt8]? {
            guard bytes.count >= offset + 4 else { return nil }
            let count = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard bytes.count >= offset + count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
        guard let name = field(), let key = field() else { return nil }
        return (String(decoding: name, as: UTF8.self), String(decoding: key, as: UTF8.self), Data(bytes[offset...]))
    }
}
