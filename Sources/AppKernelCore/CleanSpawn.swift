package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a program with the signal state a program expects: no signal blocked, every signal's
/// action the default.
///
/// Foundation's `Process` hands its child the calling thread's signal mask and the ignored
/// signals: called from a Swift concurrency or Dispatch thread, where almost every signal is
/// blocked, the child starts with SIGALRM, SIGTERM and SIGINT blocked — `openssl speed`, which
/// ends its loop on SIGALRM, then never ends, and a browser `xdg-open` starts cannot be stopped
/// with SIGTERM. `posix_spawn` with `POSIX_SPAWN_SETSIGMASK` (empty) and `POSIX_SPAWN_SETSIGDEF`
/// (all) gives the child a clean state whatever thread spawns it.
package enum CleanSpawn {
    /// A started child: its process id, and the read end of its standard output when captured.
    package struct Child: Sendable {
        /// The child's process id.
        package let pid: Int32
        /// The read end of a pipe on the child's standard output (the caller closes it), or nil.
        package let output: Int32?
    }

    /// Starts `executable` with `arguments` (without the program name) and `environment`
    /// (the process's when nil); standard input and error are `/dev/null`, standard output too
    /// unless `capturingOutput`.
    /// - Throws: `POSIXError` when the pipe or the spawn fails.
    package static func start(_ executable: URL, arguments: [String], environment: [String: String]? = nil,
                              capturingOutput: Bool = false) throws -> Child {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pipeEnds: [Int32] = [-1, -1]
        if capturingOutput {
            // pipe(2) fills the two descriptors of the local array, borrowed for the call.
            guard pipe(&pipeEnds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in environment { free(pointer) }
        }
        var pid = pid_t()
        // posix_spawn reads the C strings of argv and environment (ours, freed after the call).
        let status = posix_spawn(&pid, executable.path, &actions, &attributes, argv, environment)
        if capturingOutput { close(pipeEnds[1]) }
        guard status == 0 else {
            if capturingOutput { close(pipeEnds[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        return Child(pid: pid, output: capturingOutput ? pipeEnds[0] : nil)
    }

    /// Waits for `pid` on a thread of its own, so a child nobody waits for leaves no zombie.
    package static func reapWhenDone(_ pid: Int32) {
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }
}
