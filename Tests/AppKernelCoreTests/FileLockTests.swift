import Foundation
import Testing
import AppKernelCore

/// The advisory lock behind read-modify-write of shared files and the single-instance lock.
/// flock(2) locks belong to an open file description, so two opens in one process contend just
/// as two processes do — which lets these tests stay in process.
struct FileLockTests {
    @Test func aSecondAcquireIsRefusedNamingTheHolder() throws {
        let scratch = try DataHomeTests.Scratch()   // removed when the test ends
        let file = scratch.path("app.lock")
        let first = try FileLock.acquire(at: file)
        #expect(throws: FileLockError(path: file.path, reason: .held(byProcess: getpid()))) { try FileLock.acquire(at: file) }
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        first.unlock()
        #expect(!first.isHeld)
        let second = try FileLock.acquire(at: file)
        #expect(second.isHeld)
    }

    @Test func aSymlinkInPlaceOfTheLockFileIsRefused() throws {
        let scratch = try DataHomeTests.Scratch()   // removed when the test ends
        let file = scratch.path("app.lock")
        let target = scratch.path("elsewhere")
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
        #expect { try FileLock.acquire(at: file) } throws: { error in
            guard let error = error as? FileLockError, case .failed(let why) = error.reason else { return false }
            return why.contains("symbolic link")
        }
        #expect(!FileManager.default.fileExists(atPath: target.path), "the link was not followed")
    }

    @Test func aHeldLockMakesAReadModifyWriteWaitThenGiveUp() throws {
        let scratch = try DataHomeTests.Scratch()   // removed when the test ends
        let file = scratch.path("record.lock")
        let holder = try FileLock.acquire(at: file)
        var ran = false
        #expect(throws: FileLockError(path: file.path, reason: .contended(after: .milliseconds(30)))) {
            try FileLock.withExclusiveLock(at: file, timeout: .milliseconds(30)) { ran = true }
        }
        #expect(!ran, "nothing was done without the lock")
        holder.unlock()
        #expect(try FileLock.withExclusiveLock(at: file) { 42 } == 42)
    }

    @Test func theMessagesNameThePathAndTheFix() {
        let held = FileLockError(path: "/d/app.lock", reason: .held(byProcess: 12))
        #expect(held.description == "/d/app.lock is locked by another running instance (pid 12); quit it first")
        let contended = FileLockError(path: "/d/r.lock", reason: .contended(after: .seconds(5)))
        #expect(contended.description.contains("nothing was changed"))
    }
}
