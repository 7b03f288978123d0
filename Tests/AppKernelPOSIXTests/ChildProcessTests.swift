import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The test support's `ChildProcess` gives back what it opens: a suite that starts a thousand
/// children must not end with thousands of descriptors open (it did when it used Foundation's
/// `Process`, which kept every process and its pipes, and a later `run()` crashed the test runner
/// with 1,361 descriptors open).
struct ChildProcessTests {
    /// A descriptor and the file it named when it was taken, so a descriptor number a parallel
    /// test reuses for another file does not count as still open.
    struct Held: Equatable {
        var descriptor: Int32
        var device: UInt64
        var inode: UInt64

        init?(_ descriptor: Int32) {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return nil }
            self.descriptor = descriptor
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }

        var stillOpen: Bool { Held(descriptor) == self }
    }

    @Test func childrenThatExitedLeaveNoDescriptorOpen() async throws {
        var held: [Held] = []
        for _ in 0..<5 {
            // `cat` keeps all three open until its input ends, so each is taken while open.
            let child = try ChildProcess(executable: "/bin/cat")
            held += child.descriptors.compactMap(Held.init)
            child.closeInput()
            #expect(await child.waitForExit() == 0)
        }
        #expect(held.count == 15)
        // No wait: the outputs are closed before the status is known, the input by closeInput().
        #expect(held.filter(\.stillOpen).map(\.descriptor) == [])
    }
}
