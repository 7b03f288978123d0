import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// AccountsApp's data home is checked like ssh's `StrictModes` (sshd_config(5)): a linked data
/// home is refused with the fix and exit status 1 — before, it was followed and its target
/// chmodded 0700 — and what a run leaves in it is owner-only.
@Suite(.serialized)
struct AccountsAppDataHomeTests {
    func mode(_ path: String) -> mode_t {
        var status = stat()
        _ = lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func aSymlinkedDataHomeIsRefusedWithTheFixAndItsTargetUntouched() async throws {
        let home = try TemporaryDataHome()
        let victim = home.url.appendingPathComponent("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(at: home.url.appendingPathComponent("AccountsApp"), withDestinationURL: victim)
        let child = try await runExample("AccountsApp", environment: home.environment, status: 1)
        #expect(child.errors.contains("is a symbolic link to \(victim.path)"), "stderr: \(child.errors)")
        #expect(child.errors.contains("never follows links"))
        #expect(mode(victim.path) == 0o755, "the target was not chmodded")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty, "nothing was written through the link")
    }

    @Test func everythingARunLeavesIsOwnerOnly() async throws {
        let home = try TemporaryDataHome()
        _ = try await runExample("AccountsApp", environment: home.environment)
        let dataHome = home.url.appendingPathComponent("AccountsApp")
        let items = try #require(FileManager.default.enumerator(atPath: dataHome.path)?.allObjects as? [String])
        #expect(items.contains("embedded-org/org.sealed") && items.contains("keys/global.key") && items.contains("accounts/.lock"), "\(items)")
        for item in items + [""] {
            let path = dataHome.appendingPathComponent(item).path
            var status = stat()
            _ = lstat(path, &status)
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            #expect(status.st_mode & 0o077 == 0, "\(item.isEmpty ? "the data home" : item) is \(String(mode(path), radix: 8))")
            if isFolder { #expect(mode(path) == 0o700, "\(item)") }
        }
    }
}
