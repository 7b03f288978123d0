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
    /// Which of the child's standard streams are pipes to the parent (the others are `/dev/null`).
    package struct Pipes: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Standard input: the parent writes to ``Child/input``.
        package static let input = Pipes(rawValue: 1)
        /// Standard output: the parent reads ``Child/output``.
        package static let output = Pipes(rawValue: 2)
        /// Standard error: the parent reads ``Child/errors``.
        package static let errors = Pipes(rawValue: 4)
    }

    /// A started child: its process id, and the parent's ends of the pipes asked for (the caller
    /// closes them).
    package struct Child: Sendable {
        /// The child's process id.
        package let pid: Int32
        /// The write end of a pipe on the child's standard input, or nil.
        package let input: Int32?
        /// The read end of a pipe on the child's standard output, or nil.
        package let output: Int32?
        /// The read end of a pipe on the child's standard error, or nil.
        package let errors: Int32?
    }

    /// Starts `executable` with `arguments` (without the program name) and `environment`
    /// (the process's when nil); each standard stream in `piping` is a pipe to the parent, the
    /// others `/dev/null`.
    ///
    /// The child inherits no other descriptor: the parent's ends are close-on-exec, and where the
    /// C library can (glibc 2.34 and later; Darwin) every descriptor above 2 is closed in the child,
    /// so a browser started for a login holds none of the app's sockets, pipes or files.
    /// - Throws: `POSIXError` when a pipe or the spawn fails.
    package static func start(_ executable: URL, arguments: [String], environment: [String: String]? = nil,
                              piping: Pipes = []) throws -> Child {
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
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        // For each stream: the child's descriptor, and the parent's and child's ends of its pipe.
        var streams: [(descriptor: Int32, parent: Int32, child: Int32)] = []
        defer { streams.forEach { _ = close($0.child) } }
        func closeParentEnds() { streams.forEach { _ = close($0.parent) } }
        for (stream, descriptor) in [(Pipes.input, Int32(0)), (.output, 1), (.errors, 2)] {
            guard piping.contains(stream) else {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
                continue
            }
            var ends: [Int32] = [-1, -1]
            // pipe(2) fills the two descriptors of the local array, borrowed for the call.
            guard pipe(&ends) == 0 else {
                let code = errno
                closeParentEnds()
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            }
            ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
            let (parent, child) = descriptor == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
            streams.append((descriptor, parent, child))
            // dup2 clears close-on-exec on the copy, so only the copy reaches the program.
            posix_spawn_file_actions_adddup2(&actions, child, descriptor)
        }
        #if canImport(Glibc)
        if let closeFrom = closeFrom { _ = closeFrom(&actions, 3) }
        #endif

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in environment { free(pointer) }
        }
        var pid = pid_t()
        // posix_spawn reads the C strings of argv and environment (ours, freed after the call).
        let status = posix_spawn(&pid, executable.path, &actions, &attributes, argv, environment)
        guard status == 0 else {
            closeParentEnds()
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        func end(_ descriptor: Int32) -> Int32? { streams.first { $0.descriptor == descriptor }?.parent }
        return Child(pid: pid, input: end(0), output: end(1), errors: end(2))
    }

    #if canImport(Glibc)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare: looked up once; nil on an older glibc, where only close-on-exec
    /// descriptors stay out of the child.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
    #endif

    /// Waits for `pid` on a thread of its own, so a child nobody waits for leaves no zombie.
    package static func reapWhenDone(_ pid: Int32) {
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }
}
