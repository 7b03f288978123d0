import Foundation

/// The app's output: a readable timeline, each line stamped with the time since the process
/// started, and the lines typed on standard input, read off the main actor.
@MainActor
enum Console {
    private static let start = ContinuousClock.now

    /// Whether ``say(_:)`` prints nothing: a test that runs the app in its own process
    /// (replaying a journal) keeps its output quiet.
    static var isMuted = false

    /// Prints `text` as one timeline line: `   12.3 ms  text`.
    static func say(_ text: String) {
        guard !isMuted else { return }
        let origin = start
        let elapsed = milliseconds(ContinuousClock.now - origin)
        // A line said while a prompt waits for input (an event, a sync finishing) ends the
        // prompt's line first and shows the prompt again after it: output never lands inside
        // the line being typed.
        if pendingPrompt != nil { FileHandle.standardOutput.write(Data("\n".utf8)) }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let stamp = index == 0 ? String(format: "%9.1f ms", elapsed) : String(repeating: " ", count: 12)
            FileHandle.standardOutput.write(Data("\(stamp)  \(line)\n".utf8))
        }
        if let pendingPrompt { FileHandle.standardOutput.write(Data(pendingPrompt.utf8)) }
    }

    /// The prompt shown and not answered yet.
    private static var pendingPrompt: String?

    /// `duration` in milliseconds (never `-0`).
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15 + 0.0
    }

    /// Prints a prompt without a newline.
    static func prompt(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
        pendingPrompt = text
    }

    private static var lines: AsyncStream<String>?

    /// Shows `prompt` and reads the next line typed, not echoed when standard input is a
    /// terminal (a passcode). The echo goes off *before* the prompt is shown, so a user (or a
    /// script) who types as soon as the prompt appears is never echoed; it comes back once the
    /// line is in.
    static func readSecretLine(prompt text: String) async -> String? {
        var original = termios()
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0 else {
            prompt(text)
            return await readLine()
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        prompt(text)
        let line = await readLine()
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        // The Return the user typed was not echoed either.
        FileHandle.standardOutput.write(Data("\n".utf8))
        return line
    }

    /// The next line typed on standard input; `nil` at its end. A thread of its own reads the
    /// input, so the main actor keeps serving events (and Ctrl-C) while nobody types.
    static func readLine() async -> String? {
        if lines == nil {
            let (stream, continuation) = AsyncStream<String>.makeStream()
            let reader = Thread {
                while let line = Swift.readLine() { continuation.yield(line) }
                continuation.finish()
            }
            reader.start()
            lines = stream
        }
        // Iterators of one stream share its buffer: each call takes the next line.
        var iterator = lines?.makeAsyncIterator()
        let line = await iterator?.next()
        pendingPrompt = nil
        return line
    }
}
