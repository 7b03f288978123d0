import AppKernel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ProcessHost {
    // MARK: Journal (APPKERNEL_JOURNAL)

    /// Opens the journal `APPKERNEL_JOURNAL` names, writes its header and records the
    /// application's pipeline into it; `nil` when the variable is not set.
    /// - Throws: ``EnvironmentError`` naming the variable, the path and the fix.
    static func openJournal(configuration: Configuration, application: Application) throws(EnvironmentError) -> ProcessJournal? {
        guard let path = configuration.environment["APPKERNEL_JOURNAL"] else { return nil }
        let journal = try ProcessJournal(path: path, log: configuration.log)
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "app").lastPathComponent
        journal.writeHeader(executable: executable, arguments: configuration.arguments)
        journal.observe(application)
        return journal
    }

    /// Delivers one external event to the application through `body`, journaled as `step`
    /// (with `comment`, the signal or the source) when a journal is written.
    func journaled<T>(_ step: String, comment: String? = nil, _ body: () throws -> T) rethrows -> T {
        guard let journal else { return try body() }
        return try journal.deliver(step, comment: comment, body)
    }

    /// The signal's name for the journal's comments (`SIGTSTP`).
    nonisolated static func signalName(_ number: Int32) -> String {
        let names: [Int32: String] = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGTSTP: "SIGTSTP", SIGCONT: "SIGCONT",
                                      SIGHUP: "SIGHUP", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGQUIT: "SIGQUIT"]
        return names[number] ?? "signal \(number)"
    }
}
