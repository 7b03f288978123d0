import Foundation
import Testing
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The data home's checks follow ssh's `StrictModes` (sshd_config(5): "check file modes and
/// ownership of the user's files and home directory before accepting login"; sshd(8): a file,
/// `~/.ssh` or the home "writable by other users … could be modified or replaced by
/// unauthorized users", so it is not used) — refusing, never repairing: a link is not followed,
/// a mode not changed.
struct DataHomeTests {
    /// A folder of its own under the temporary directory, removed at the end.
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("datahome-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false) }
        deinit {
            // Make a refused folder removable again (a test may have made it foreign or writable).
            if let items = FileManager.default.enumerator(atPath: url.path) {
                for case let item as String in items { _ = lchown(url.appendingPathComponent(item).path, geteuid(), getegid()) }
            }
            try? FileManager.default.removeItem(at: url)
        }
        func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }
    }

    func mode(_ url: URL) -> UInt32 {
        var status = stat()
        #expect(lstat(url.path, &status) == 0, "lstat \(url.path)")
        return UInt32(status.st_mode & 0o7777)
    }

    func owner(_ url: URL) -> UInt32 {
        var status = stat()
        _ = lstat(url.path, &status)
        return status.st_uid
    }

    @Test func theXDGLookupPrefersAnAbsoluteXDGDataHomeThenHome() throws {
        #expect(try DataHome.location(forApp: "App", environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/home/ada"]).path == "/x/data/App")
        #expect(try DataHome.location(forApp: "App", environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/ada"]).path == "/home/ada/.local/share/App")
        #expect(try DataHome.location(forApp: "App", environment: ["XDG_DATA_HOME": "", "HOME": "/home/ada"]).path == "/home/ada/.local/share/App")
        #expect(throws: DataHomeError(path: "App", problem: .noDataHome)) { try DataHome.location(forApp: "App", environment: [:]) }
        #expect(throws: DataHomeError.self) { try DataHome.location(forApp: "../App", environment: ["HOME": "/home/ada"]) }
    }

    @Test func aMissingDataHomeAndItsFoldersAreCreated0700() throws {
        let scratch = try Scratch()
        let home = try DataHome.forApp("App", environment: ["HOME": scratch.url.path])
        #expect(home.url.path == scratch.path(".local/share/App").path)
        for folder in [".local", ".local/share", ".local/share/App"] { #expect(mode(scratch.path(folder)) == 0o700, "\(folder)") }
        let stores = try home.directory("stores/global")
        #expect(mode(stores) == 0o700 && mode(stores.deletingLastPathComponent()) == 0o700)
        _ = try DataHome(url: home.url)   // found again: accepted as it is
    }

    @Test func aSymlinkedDataHomeIsRefusedAndItsTargetUntouched() throws {
        let scratch = try Scratch()
        let target = scratch.path("elsewhere")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try Data("theirs".utf8).write(to: target.appendingPathComponent("file"))
        let link = scratch.path("home")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(throws: DataHomeError(path: link.path, problem: .symbolicLink(target: target.path))) { try DataHome(url: link) }
        #expect(mode(target) == 0o755, "the link's target was not chmodded")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path) == ["file"])
        let message = "\(DataHomeError(path: link.path, problem: .symbolicLink(target: target.path)))"
        #expect(message.contains("symbolic link to \(target.path)") && message.contains("never follows links"))
    }

    @Test func aSymlinkedFolderInsideTheDataHomeIsRefusedNotCreatedThrough() throws {
        let scratch = try Scratch()
        let home = try DataHome(url: scratch.path("home"))
        let target = scratch.path("victim")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(at: home.url.appendingPathComponent("stores"), withDestinationURL: target)
        #expect(throws: DataHomeError(path: home.url.appendingPathComponent("stores").path, problem: .symbolicLink(target: target.path))) {
            try home.directory("stores/global")
        }
        #expect(mode(target) == 0o755)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty, "nothing was created through the link")
    }

    @Test func aGroupWritableFolderIsRefusedWithTheChmodFix() throws {
        let scratch = try Scratch()
        let home = try DataHome(url: scratch.path("home"))
        let shared = home.url.appendingPathComponent("accounts")
        #expect(mkdir(shared.path, 0o700) == 0 && chmod(shared.path, 0o770) == 0)
        #expect { try home.directory("accounts") } throws: { error in
            guard let error = error as? DataHomeError, error.path == shared.path, case .writableByOthers = error.problem else { return false }
            return "\(error)".contains("chmod go-w \(shared.path)")
        }
        #expect(mode(shared) == 0o770, "refused, not repaired")
    }

    @Test func aFolderAboveTheDataHomeThatOthersMayWriteIsRefused() throws {
        let scratch = try Scratch()
        let parent = scratch.path("open")
        #expect(mkdir(parent.path, 0o700) == 0 && chmod(parent.path, 0o777) == 0)
        #expect(throws: DataHomeError(path: parent.path, problem: .writableByOthers(mode: 0o777))) {
            try DataHome(url: parent.appendingPathComponent("home"))
        }
        #expect(!FileManager.default.fileExists(atPath: parent.appendingPathComponent("home").path))
        // With the sticky bit (as /tmp has), nobody else can rename what is in it: accepted.
        #expect(chmod(parent.path, 0o1777) == 0)
        _ = try DataHome(url: parent.appendingPathComponent("home"))
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give a folder to another user (uid 65534)"))
    func aDataHomeOwnedByAnotherUserIsRefused() throws {
        let scratch = try Scratch()
        let foreign = scratch.path("theirs")
        #expect(mkdir(foreign.path, 0o700) == 0 && chown(foreign.path, 65534, 65534) == 0)
        #expect(throws: DataHomeError(path: foreign.path, problem: .foreignOwner(owner: 65534, user: geteuid()))) { try DataHome(url: foreign) }
        #expect("\(DataHomeError(path: foreign.path, problem: .foreignOwner(owner: 65534, user: 0)))".contains("owned by uid 65534, not you (uid 0)"))
        #expect(owner(foreign) == 65534 && mode(foreign) == 0o700, "left as found")
        // Above the data home, only the user or root may own a folder.
        #expect(chmod(foreign.path, 0o755) == 0)
        #expect(throws: DataHomeError(path: foreign.path, problem: .foreignOwner(owner: 65534, user: geteuid()))) {
            try DataHome(url: foreign.appendingPathComponent("home"))
        }
    }

    @Test func checkCreatesNothingAndSaysWhetherTheFolderIsThere() throws {
        let scratch = try Scratch()
        #expect(try PrivateDirectory.check(scratch.path("home/accounts"), home: scratch.path("home")) == false)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("home").path))
        #expect(throws: DataHomeError(path: scratch.path("other").path, problem: .outsideDataHome(home: scratch.path("home").path))) {
            try PrivateDirectory.create(scratch.path("other"), home: scratch.path("home"))
        }
    }

    // MARK: The private-file writer

    @Test func aPrivateFileIs0600FromItsFirstByteAndReplacesALinkInsteadOfFollowingIt() throws {
        let scratch = try Scratch()
        let file = scratch.path("secret.json")
        let victim = scratch.path("victim")
        try Data("theirs".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: victim)
        let created = Locked<[UInt32]>([])
        try PrivateFile.$creationObserver.withValue({ _, mode in created.withLock { $0.append(mode) } }) {
            try PrivateFile.write(Data("token".utf8), to: file)
        }
        #expect(created.withLock { $0 } == [0o600], "created owner-only, before anything was written")
        #expect(mode(file) == 0o600)
        #expect(try PrivateFile.read(file) == Data("token".utf8))
        #expect(try Data(contentsOf: victim) == Data("theirs".utf8), "the link was replaced, its target untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted() == ["secret.json", "victim"], "no temporary file left")
    }

    @Test func readingRefusesALinkAndAnythingButARegularFile() throws {
        let scratch = try Scratch()
        #expect(try PrivateFile.read(scratch.path("missing")) == nil)
        try FileManager.default.createSymbolicLink(at: scratch.path("link"), withDestinationURL: scratch.path("missing"))
        #expect(throws: DataHomeError(path: scratch.path("link").path, problem: .symbolicLink(target: scratch.path("missing").path))) {
            try PrivateFile.read(scratch.path("link"))
        }
        #expect(mkfifo(scratch.path("fifo").path, 0o600) == 0)
        #expect(throws: DataHomeError(path: scratch.path("fifo").path, problem: .notARegularFile)) { try PrivateFile.read(scratch.path("fifo")) }
        try Data(count: 100).write(to: scratch.path("big"))
        #expect(throws: DataHomeError(path: scratch.path("big").path, problem: .tooLarge(limit: 10))) { try PrivateFile.read(scratch.path("big"), maximumSize: 10) }
    }

    @Test func aWriteIntoALinkedFolderIsRefused() throws {
        let scratch = try Scratch()
        let target = scratch.path("victim")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: scratch.path("folder"), withDestinationURL: target)
        #expect(throws: DataHomeError(path: scratch.path("folder").path, problem: .symbolicLink(target: target.path))) {
            try PrivateFile.write(Data("x".utf8), to: scratch.path("folder/secret"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
    }

    /// ENOSPC cannot be made cleanly in a test (no small file system to fill without mounting
    /// one), so the mapping every writer goes through is tested: a full disk says "disk full".
    @Test func aFullDiskSaysDiskFull() {
        let full = DataHomeError(path: "/d/org.json", call: "write", code: ENOSPC)
        #expect(full.problem == .diskFull)
        #expect("\(full)".contains("the disk is full (ENOSPC)") && "\(full)".contains("nothing was changed"))
        #expect(DataHomeError(path: "/d/x", call: "write", code: EDQUOT).problem == .quotaExceeded)
        #expect(DataHomeError(path: "/d/x", call: "write", code: EIO).problem == .system(call: "write", code: EIO))
        #expect("\(DataHomeError(path: "/d/x", call: "write", code: EIO))".contains("write failed: "))
    }
}
