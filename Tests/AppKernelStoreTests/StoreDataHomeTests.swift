import AppKernelCore
import AppKernelStore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The stores' folders are checked like ssh's `StrictModes` checks a home (sshd_config(5),
/// `StrictModes`): a linked `stores/` or user folder is refused, never followed, created
/// through or chmodded — before, the target of a linked `stores/` was made 0700 (as root, another
/// user's folder).
struct StoreDataHomeTests {
    func mode(_ url: URL) -> mode_t {
        var status = stat()
        _ = lstat(url.path, &status)
        return status.st_mode & 0o7777
    }

    @Test func aSymlinkedStoresFolderIsRefusedAndItsTargetUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.file("home"), victim = directory.file("victim")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(at: home.appendingPathComponent("stores"), withDestinationURL: victim)
        let error = storeError { _ = try StoreManager(root: home).store(for: .global) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.file == home.appendingPathComponent("stores").path)
        #expect(error.map { "\($0)".contains("symbolic link to \(victim.path)") } == true)
        #expect(mode(victim) == 0o755, "the link's target was not chmodded")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty, "no store was created through the link")
    }

    @Test func aSymlinkedDataDirectoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let victim = directory.file("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(at: directory.file("home"), withDestinationURL: victim)
        let user = UserAccountIdentity(userID: "005A", orgID: "00DORG")
        #expect(storeError { _ = try StoreManager(root: directory.file("home")).store(for: .user(user)) }?.code == .cannotOpen)
        #expect(mode(victim) == 0o755)
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty)
    }

    @Test func removingAUsersStoresNeverDeletesThroughALink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.file("home"), victim = directory.file("victim")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: victim.appendingPathComponent("005A/stores"), withIntermediateDirectories: true)
        try Data("theirs".utf8).write(to: victim.appendingPathComponent("005A/stores/file"))
        try FileManager.default.createSymbolicLink(at: home.appendingPathComponent("00DORG"), withDestinationURL: victim)
        let user = UserAccountIdentity(userID: "005A", orgID: "00DORG")
        #expect(storeError { try StoreManager(root: home).removeStores(for: .user(user)) }?.code == .cannotOpen)
        #expect(try Data(contentsOf: victim.appendingPathComponent("005A/stores/file")) == Data("theirs".utf8))
    }

    @Test func aGroupWritableStoresFolderIsRefusedWithTheChmodFix() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stores = directory.file("stores")
        #expect(mkdir(stores.path, 0o700) == 0 && chmod(stores.path, 0o775) == 0)
        let error = storeError { _ = try StoreManager(root: directory.url).store(for: .global) }
        #expect(error.map { "\($0)".contains("chmod go-w \(stores.path)") } == true)
        #expect(mode(stores) == 0o775)
    }

    @Test func missingFoldersAreCreated0700() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.file("a/b/home")
        let store = try StoreManager(root: home).store(for: .user(UserAccountIdentity(userID: "005A", orgID: "00DORG")))
        defer { store.close() }
        for folder in ["a", "a/b", "a/b/home", "a/b/home/00DORG", "a/b/home/00DORG/005A", "a/b/home/00DORG/005A/stores"] {
            #expect(mode(directory.file(folder)) == 0o700, "\(folder)")
        }
    }
}
