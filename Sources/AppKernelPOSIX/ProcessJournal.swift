import AppKernel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal `APPKERNEL_JOURNAL=path` asks for: every external event the process host
/// delivered, in the schedule format AppKernelTesting's `SimulatedHost.replay(journal:)` reads,
/// each followed by the trace lines the app's pipeline produced for it.
///
/// ```text
/// # appkernel journal 1
/// # executable: AccountsApp
/// # arguments: --interactive
/// +41ms
/// launch
/// = app.willFinishLaunching
/// = sdk.phase(config)
/// +2s
/// background # SIGTSTP
/// = scene-1.willResignActive
/// ```
///
/// A time step (`+<elapsed since the previous event>`, on the host's clock, whole milliseconds)
/// precedes each step; observations (`= <trace line>`: delegate, scene, system, hook-stop and
/// phase stages, in `PipelineStage.traceLine(for:)`'s text) follow it — those the app produces
/// later (an SDK phase ending) go after the step they followed. Each event's lines reach the file
/// in one `write(2)`, so a process killed at any moment leaves at most a partial last line.
/// The file is created `0600`, never through a link; arguments and URLs have the values of
/// secret-looking query items (`token`, `code`, `secret`, `password`, `key`) replaced, and the
/// environment is never written.
@MainActor
final class ProcessJournal {
    /// The journal's path.
    let path: String
    private var descriptor: Int32
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    /// The last event's time, in whole milliseconds since the journal opened.
    private var lastEventMilliseconds: Int64 = 0
    /// Lines not written yet.
    private var pending = ""
    /// How deep the host is in deliveries: observations made inside one wait for its write.
    private var depth = 0
    private var flushScheduled = false
    private var observation: ListenerToken?
    /// Why the journal stopped, once a write failed (it then writes nothing more: what is in the
    /// file stays a journal, a prefix of the run).
    private(set) var failure: String?
    private let log: any LogHandler

    /// Opens (creates or truncates) `path` owner-only, without following a link.
    /// - Throws: ``ProcessHost/EnvironmentError`` naming `APPKERNEL_JOURNAL`, the path and the fix.
    init(path: String, log: any LogHandler) throws(ProcessHost.EnvironmentError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link, which the journal never follows" : String(cString: strerror(errno))
            throw ProcessHost.EnvironmentError(name: "APPKERNEL_JOURNAL", message:
                "cannot write the journal '\(path)': \(reason); give it the path of a file in a folder you can write, or unset it")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == getuid() else {
            close(descriptor)
            throw ProcessHost.EnvironmentError(name: "APPKERNEL_JOURNAL", message:
                "'\(path)' is not a regular file of this user; give it the path of a new file, or unset it")
        }
        // An existing file keeps its mode on O_CREAT: made owner-only here, before anything is written.
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ProcessHost.EnvironmentError(name: "APPKERNEL_JOURNAL", message:
                "cannot make the journal '\(path)' owner-only (0600): \(reason); give it the path of a new file, or unset it")
        }
        self.descriptor = descriptor
        self.path = path
        self.log = log
        self.start = clock.now
    }

    /// Writes the header: the format, the executable's name and the launch arguments.
    func writeHeader(executable: String, arguments: [String]) {
        let shown = arguments.map(Self.redacted).joined(separator: " ")
        pending += "# appkernel journal 1\n# executable: \(executable)\n# arguments:\(shown.isEmpty ? "" : " " + shown)\n"
        flush()
    }

    /// Records the pipeline of `application`: its delegate, scene, system, hook-stop and phase steps.
    func observe(_ application: Application) {
        observation = application.addPipelineObserver { [weak self] stage, event in
            switch stage {
            case .listeners, .hooks: return
            case .applicationDelegate, .sceneDelegate, .system, .hookStop, .phases: self?.observed(stage.traceLine(for: event))
            }
        }
    }

    private func observed(_ line: String) {
        guard failure == nil else { return }
        pending += "= \(Self.redacted(line))\n"
        guard depth == 0, !flushScheduled else { return }
        // A step that came later (a phase ending): written with what the same turn produces.
        flushScheduled = true
        Task { @MainActor [weak self] in
            self?.flushScheduled = false
            self?.flush()
        }
    }

    /// Delivers one external event: its time step and `step` (`background # SIGTSTP`), then runs
    /// `deliver`, then writes the lot — with what it produced — in one write. A delivery that
    /// throws (refused: nothing was delivered) leaves the step as a comment, `# refused: …`.
    func deliver<T>(_ step: String, comment: String?, _ deliver: () throws -> T) rethrows -> T {
        guard failure == nil else { return try deliver() }
        let now = Self.milliseconds(start.duration(to: clock.now))
        let elapsed = max(0, now - lastEventMilliseconds)
        lastEventMilliseconds = now
        if elapsed > 0 { pending += "+\(Self.format(milliseconds: elapsed))\n" }
        let mark = pending.utf8.count
        pending += "\(Self.redacted(step))\(comment.map { " # \($0)" } ?? "")\n"
        depth += 1
        defer {
            depth -= 1
            if depth == 0 { flush() }
        }
        do {
            return try deliver()
        } catch {
            // Nothing was delivered: the step becomes a comment (the parser skips it).
            pending.insert(contentsOf: "# refused: ", at: pending.utf8.index(pending.startIndex, offsetBy: mark))
            throw error
        }
    }

    /// Writes what is pending in one write.
    func flush() {
        guard failure == nil, !pending.isEmpty else { return }
        var bytes = Array(pending.utf8)
        pending = ""
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                failure = "writing '\(path)' failed: \(String(cString: strerror(errno)))"
                log.log(.error, "APPKERNEL_JOURNAL: \(failure ?? ""); the journal stops here (what it holds is the run up to this event)")
                return
            }
            offset += written
        }
    }

    /// Flushes and closes the file.
    func finish() {
        flush()
        observation = nil
        if descriptor >= 0 {
            _ = close(descriptor)
            descriptor = -1
        }
    }

    // MARK: Text

    /// `n` milliseconds in the largest unit that is exact: `2m`, `30s`, `250ms`.
    static func format(milliseconds: Int64) -> String {
        if milliseconds % 60_000 == 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1_000 == 0 { return "\(milliseconds / 1_000)s" }
        return "\(milliseconds)ms"
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Names of query items whose values the journal never writes.
    static let secretNames = ["token", "code", "secret", "password", "key", "session", "sid"]

    /// `text` with the values of secret-looking query items (`access_token=…`, `code=…`) replaced
    /// by `•`; anything else as it is.
    static func redacted(_ text: String) -> String {
        guard text.contains("="), text.contains("?") || text.contains("#") || text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let before = rest[..<equals]
            let nameStart = before.lastIndex { "?&#;, (".contains($0) }.map { before.index(after: $0) } ?? before.startIndex
            let name = before[nameStart...].lowercased()
            result += rest[...equals]
            rest = rest[rest.index(after: equals)...]
            if secretNames.contains(where: { name.contains($0) }) {
                let end = rest.firstIndex { "&#; )".contains($0) } ?? rest.endIndex
                result += "•"
                rest = rest[end...]
            }
        }
        return result + rest
    }
}
