import Foundation
import Synchronization
import Testing
import AppKernelSDK

/// Two instances of an app on one data home, both at the passcode prompt: every wrong answer
/// that is judged is counted. Before the read-modify-write under a lock, both read the count,
/// both stored count + 1, and one wrong answer was forgotten — an attacker running two copies
/// doubled their guesses.
@MainActor
struct PasscodeTwoInstancesTests {
    /// The first instance's store, which lets the second instance answer at the worst moment:
    /// right after the first has read the record and before it has stored its count.
    final class Interleaving: PasscodeStore, @unchecked Sendable {
        // Touched on the main actor only (the passcode manager's), in the test's single flow.
        let inner: FilePasscodeStore
        var interleave: (() -> Void)?
        init(_ inner: FilePasscodeStore) { self.inner = inner }

        func load() -> PasscodeRecord? { inner.load() }
        func loadVerified() throws(PasscodeDamage) -> PasscodeRecord? {
            let record = try inner.loadVerified()
            runInterleave()
            return record
        }
        func save(_ record: PasscodeRecord?) throws { try inner.save(record) }
        func update(_ change: (PasscodeRecord?) throws -> PasscodeRecord?) throws -> PasscodeRecord? {
            try inner.update { record in
                runInterleave()
                return try change(record)
            }
        }
        private func runInterleave() {
            let once = interleave
            interleave = nil
            once?()
        }
    }

    @Test func aWrongAnswerInASecondInstanceIsNeverLost() throws {
        let home = try TemporaryDirectory()
        let url = home.url.appendingPathComponent("passcode.json")
        let firstStore = Interleaving(FilePasscodeStore(url: url, keyRing: try TestKeys.ring(for: home.url)))
        var secondStore = FilePasscodeStore(url: url, keyRing: try TestKeys.ring(for: home.url))
        secondStore.lockTimeout = .milliseconds(20)
        let first = PasscodeManager(store: firstStore, iterations: 500)
        let second = PasscodeManager(store: secondStore, iterations: 500)
        try first.setPasscode("2468")
        var judgedWrong = 0
        func answer(_ manager: PasscodeManager) {
            do { try manager.changePasscode(from: "0000", to: "1357") } catch PasscodeError.wrongPasscode { judgedWrong += 1 } catch {}
        }
        firstStore.interleave = { answer(second) }
        answer(first)
        #expect(judgedWrong >= 1)
        #expect(try FilePasscodeStore(url: url, keyRing: try TestKeys.ring(for: home.url)).loadVerified()?.failedAttempts == judgedWrong,
                "every wrong answer judged was counted (\(judgedWrong) judged)")
    }

    @Test func concurrentCountsFromTwoStoresAddUp() async throws {
        let home = try TemporaryDirectory()
        let url = home.url.appendingPathComponent("passcode.json")
        try PasscodeManager(store: FilePasscodeStore(url: url, keyRing: try TestKeys.ring(for: home.url)), iterations: 500).setPasscode("2468")
        let rings = [try TestKeys.ring(for: home.url), try TestKeys.ring(for: home.url)]   // one a "process"
        await withTaskGroup(of: Void.self) { group in
            for ring in rings {
                group.addTask {
                    let store = FilePasscodeStore(url: url, keyRing: ring)
                    for _ in 0..<25 {
                        _ = try? store.update { record in
                            guard var record else { return nil }
                            record.failedAttempts += 1
                            return record
                        }
                    }
                }
            }
        }
        #expect(try FilePasscodeStore(url: url, keyRing: try TestKeys.ring(for: home.url)).loadVerified()?.failedAttempts == 50)
    }
}
